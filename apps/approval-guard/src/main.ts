/**
 * approval-guard's process entry point.
 *
 * Run: `node approval-guard.js [--approver-role aicr-operator-approver] [--operator-namespace aicr-system] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { approvalGuardApp } from "./app"

main(approvalGuardApp)
