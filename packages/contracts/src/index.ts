/**
 * @aicr/contracts: one contract per controller, the registry of all seven, and rooms for `packages/kube`.
 * An app's `src/contract.ts` re-exports its contract from here.
 */
import { approvalGuard } from "./approval-guard"
import type { Contract } from "./contract"
import { ecrCredentialRefresher } from "./ecr-credential-refresher"
import { planner } from "./planner"
import { registryMirror } from "./registry-mirror"
import { resolver } from "./resolver"
import { stepExecutor } from "./step-executor"
import { validationGate } from "./validation-gate"

export * from "./contract"
export { approvalGuard, ecrCredentialRefresher, planner, registryMirror, resolver, stepExecutor, validationGate }

/** All seven contracts, in data-flow order (architecture.md §3). */
export const CONTRACTS: ReadonlyArray<Contract> = [resolver, registryMirror, planner, approvalGuard, validationGate, stepExecutor, ecrCredentialRefresher]
