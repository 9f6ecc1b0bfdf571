// Runs the local upstream in the foreground for the local control plane and manual work:
//   npx tsx packages/chart-upstream/src/cli.ts [--port N] [--oci-registry host:port] [--charts real|stand-in]
// Serves the charts of both pinned AICR versions' recipes: by default the real packages of the third-party charts
// folder whenever there is one (real.ts: $AICR_CHARTS_DIR, $AICR_THIRD_PARTY_DIR/charts or
// ../shared/third-party/charts), else the stand-ins; --charts real|stand-in (or AICR_UPSTREAM_CHARTS) chooses. Tests
// that roll the stand-ins out through `up` set AICR_UPSTREAM_CHARTS=stand-in and say why. Prints one JSON line
// ({httpUrl, ociPrefix, rewrites, charts}) once serving, then runs until SIGINT/SIGTERM.
import { ALL_AICR_COMPONENTS } from "./fixtures"
import { upstreamCharts } from "./real"
import { startChartUpstream } from "./server"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const port = arg("port")
const registry = arg("oci-registry")
const charts = upstreamCharts(arg("charts"))
const upstream = await startChartUpstream({
  components: ALL_AICR_COMPONENTS,
  charts,
  ...(port !== undefined ? { port: Number(port) } : {}),
  ...(registry !== undefined ? { oci: { registry } } : {}),
})
process.stdout.write(`${JSON.stringify({ httpUrl: upstream.httpUrl, ociPrefix: upstream.ociPrefix, rewrites: upstream.rewrites, charts: upstream.charts })}\n`)
const stop = () => void upstream.stop().then(() => process.exit(0))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
