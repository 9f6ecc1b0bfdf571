/**
 * registry-mirror's process entry point.
 *
 * Run: `node registry-mirror.js --registry oci://registry.example/aicr/cluster [--plain-http host:port]
 *   [--docker-config /etc/aicr/registry/config.json] [--upstream-rewrite FROM=TO] [runtime flags]`.
 *
 * As bundled (hack/build-apps.ts), `mirror-process.mjs` sits next to this entry and every mirror and every check of
 * the recorded tags runs in it; run from sources there is none, and they run in this process.
 */
import { main, siblingProcess } from "@aicr/runtime"
import { registryMirrorApp } from "./app"

main(registryMirrorApp({ mirrorProcess: siblingProcess(import.meta.url, "mirror-process") }))
