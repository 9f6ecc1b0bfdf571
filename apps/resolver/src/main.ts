/**
 * resolver's process entry point.
 *
 * Run: `node resolver.js --aicr-version v1.1.2 [--aicr-image REF] [--allow-prerelease-aicr=true]
 *   [--allow-unsupported-aicr=true (development only)] --registry oci://registry.example/aicr/cluster
 *   [--plain-http host:port] [--docker-config PATH] --component-namespaces a,b [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { resolverApp } from "./app"

main(resolverApp)
