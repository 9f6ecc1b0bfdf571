// Runs the local upstream in the foreground for the local control plane and manual work:
//   npx tsx packages/chart-upstream/src/cli.ts [--port N] [--oci-registry host:port] [--charts real|stand-in]
// Serves the charts of both pinned AICR versions' recipes: the stand-ins, or with --charts real (or
// AICR_UPSTREAM_CHARTS=real) the real packages of the third-party charts folder (real.ts: $AICR_CHARTS_DIR,
// $AICR_THIRD_PARTY_DIR/charts or ../shared/third-party/charts). The stand-ins stay the default until the whole
// install on the real charts is seen reaching Ready (docs/adr/20261203-real-charts.md, "Open"). Prints one JSON line ({httpUrl, ociPrefix, rewrites, charts}) once
// serving, then runs until SIGINT/SIGTERM.
import { ALL_AICR_COMPONENTS } from "./fixtures"
import { startChartUpstream } from "./server"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const port = arg("port")
const registry = arg("oci-registry")
const charts = arg("charts") ?? process.env["AICR_UPSTREAM_CHARTS"] ?? "stand-in"
if (charts !== "real" && charts !== "stand-in") throw new Error(`--charts must be real or stand-in, not ${charts}`)
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
