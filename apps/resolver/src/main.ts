/**
 * resolver's process entry point.
 *
 * Run: `node resolver.js --aicr-version v1.1.2 [--aicr-image REF] [--allow-prerelease-aicr=true]
 *   [--allow-unsupported-aicr=true (development only)] --registry oci://registry.example/aicr/cluster
 *   [--plain-http host:port] [--docker-config PATH] --component-namespaces a,b [runtime flags]`.
 *
 * As bundled (hack/build-apps.ts), `bundle-process.mjs` sits next to this entry and every bundle pull runs in it; run
 * from sources there is none, and pulls run in this process.
 */
// First: its V8 flags (memory over speed, no optimizing compilers) before anything else loads. AICR_V8_FLAGS replaces them.
import "./v8-flags"
import { main, siblingProcess } from "@aicr/runtime"
import { resolverApp } from "./app"

main(resolverApp({ bundleProcess: siblingProcess(import.meta.url, "bundle-process") }))
