/**
 * validation-gate's process entry point.
 *
 * Run: `node validation-gate.js --registry oci://registry.example/aicr/cluster [--plain-http host:port]
 *   [--docker-config /etc/aicr/registry/config.json] [--operator-namespace aicr-system]
 *   [--validation-namespace aicr-validation] [--launcher-service-account aicr-validation] [--validation-deadline 25m]
 *   [--signing-key awskms:///alias/…] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { validationGateApp } from "./app"

main(validationGateApp)
