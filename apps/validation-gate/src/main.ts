/**
 * validation-gate's process entry point.
 *
 * Run: `node validation-gate.js --registry oci://registry.example/aicr/cluster [--plain-http host:port]
 *   [--docker-config /etc/aicr/registry/config.json] [--operator-namespace aicr-system]
 *   [--validation-namespace aicr-validation] [--launcher-service-account aicr-validation] [--validation-deadline 25m]
 *   [--signing-key awskms:///alias/…] [runtime flags]`.
 *
 * As bundled (hack/build-apps.ts), `evidence-process.mjs` sits next to this entry and every registry and KMS call runs
 * in it; run from sources there is none, and the calls run in this process.
 */
// First: its V8 flags (no optimizing compilers) before anything else loads. AICR_V8_FLAGS replaces them.
import "./v8-flags"
import { main, siblingProcess } from "@aicr/runtime"
import { validationGateApp } from "./app"

main(validationGateApp({ evidenceProcess: siblingProcess(import.meta.url, "evidence-process") }))
