/**
 * resolver's process entry point.
 *
 * Run: `node resolver.js --aicr-version v0.11.1 [--aicr-image REF] --registry oci://registry.example/aicr/cluster
 *   [--plain-http host:port] [--docker-config PATH] [--component-namespaces a,b] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { resolverApp } from "./app"

main(resolverApp)
