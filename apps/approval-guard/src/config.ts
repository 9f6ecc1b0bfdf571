/**
 * The approval-guard's own settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--approver-role NAME` | `AICR_APPROVER_ROLE` | the ClusterRole whose bindings name the approvers (default `aicr-operator-approver`) |
 * | `--operator-namespace NAME` (repeatable) | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | namespaces whose ServiceAccounts are operator identities, never approvers (default `aicr-system`, plus `aicr-validation`) |
 */
import { APPROVER_ROLE } from "@aicr/api"
import { readAppFlags } from "@aicr/runtime"
import { Context } from "effect"

export interface GuardSettings {
  readonly approverRole: string
  readonly operatorNamespaces: ReadonlyArray<string>
}

export class GuardConfig extends Context.Service<GuardConfig, GuardSettings>()("@aicr/approval-guard/GuardConfig") {}

const FLAGS = { "approver-role": "AICR_APPROVER_ROLE", "operator-namespace": "AICR_OPERATOR_NAMESPACE" } as const

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): GuardSettings => {
  const flags = readAppFlags(argv, env, FLAGS)
  const given = flags.all("operator-namespace")
  const namespaces = given.length > 0 ? given : env["POD_NAMESPACE"] ? [env["POD_NAMESPACE"]] : ["aicr-system"]
  return {
    approverRole: flags.one("approver-role") ?? APPROVER_ROLE,
    operatorNamespaces: [
      ...new Set([
        ...namespaces
          .flatMap((n) => n.split(","))
          .map((n) => n.trim())
          .filter((n) => n !== ""),
        "aicr-validation",
      ]),
    ],
  }
}
