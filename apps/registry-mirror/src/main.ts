/**
 * registry-mirror's process entry point.
 *
 * Run: `node registry-mirror.js --registry oci://registry.example/aicr/cluster [--plain-http host:port]
 *   [--docker-config /etc/aicr/registry/config.json] [--upstream-rewrite FROM=TO] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { registryMirrorApp } from "./app"

main(registryMirrorApp)
