// The plane's cluster egress and webhook stand-in as its own process (started by the control plane right after the
// API server; see egress.ts):
//   node --import tsx egress/main.ts <config.json>
// config.json: { server, caFile, token, dir, socket }. SIGTERM stops it.
import { readFileSync } from "node:fs"
import { startWebhookStandIn } from "./egress"

interface Config {
  readonly server: string
  readonly caFile: string
  readonly token: string
  readonly dir: string
  readonly socket: string
}

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Config
const standIn = await startWebhookStandIn({
  target: {
    server: config.server,
    caFile: config.caFile,
    users: { standIn: { token: config.token, user: "system:aicr-harness-webhook-stand-in", groups: [] } },
  },
  user: "standIn",
  dir: config.dir,
  socket: config.socket,
})
const stop = async () => {
  await standIn.stop()
  process.exit(0)
}
process.once("SIGTERM", () => void stop())
process.once("SIGINT", () => void stop())
