// The process kubelet as its own process (started by the control plane next to kwok; see kubelet.ts):
//   node --import tsx kubelet/main.ts <config.json>
// config.json: { server, caFile, token, dir, apiHost, apiPort, logsPort, certFile, keyFile, aicrMirror? }. SIGTERM stops every pod process, then exits.
// aicrMirror (`<registry>/<prefix>`): run AICR's images from the copies pushed there instead of the local binaries.
import { readFileSync } from "node:fs"
import { aicrImages, CUDA_BASE_IMAGE } from "./images"
import { startKubelet } from "./kubelet"

interface Config {
  readonly server: string
  readonly caFile: string
  readonly token: string
  readonly dir: string
  readonly apiHost: string
  readonly apiPort: number
  readonly logsPort: number
  readonly certFile: string
  readonly keyFile: string
  readonly aicrMirror?: string
}

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Config
const kubelet = await startKubelet({
  target: { server: config.server, caFile: config.caFile, users: { kubelet: { token: config.token, user: "system:aicr-harness-kubelet", groups: [] } } },
  user: "kubelet",
  dir: config.dir,
  api: { host: config.apiHost, port: config.apiPort },
  logs: { port: config.logsPort, certFile: config.certFile, keyFile: config.keyFile },
  ...(config.aicrMirror ? { images: [...aicrImages(config.aicrMirror), CUDA_BASE_IMAGE] } : {}),
})
const stop = async () => {
  await kubelet.stop()
  process.exit(0)
}
process.once("SIGTERM", () => void stop())
process.once("SIGINT", () => void stop())
