// Runs the local upstream in the foreground for the local control plane and manual work:
//   npx tsx packages/chart-upstream/src/cli.ts [--port N] [--oci-registry host:port]
// Serves the charts of both pinned AICR versions' recipes. Prints one JSON line ({httpUrl, ociPrefix, rewrites, charts}) once serving, then runs until SIGINT/SIGTERM.
import { ALL_AICR_COMPONENTS } from "./fixtures"
import { startChartUpstream } from "./server"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const port = arg("port")
const registry = arg("oci-registry")
const upstream = await startChartUpstream({
  components: ALL_AICR_COMPONENTS,
  ...(port !== undefined ? { port: Number(port) } : {}),
  ...(registry !== undefined ? { oci: { registry } } : {}),
})
process.stdout.write(`${JSON.stringify({ httpUrl: upstream.httpUrl, ociPrefix: upstream.ociPrefix, rewrites: upstream.rewrites, charts: upstream.charts })}\n`)
const stop = () => void upstream.stop().then(() => process.exit(0))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
