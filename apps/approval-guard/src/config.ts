/**
 * The approval-guard's own settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--approver-role NAME` | `AICR_APPROVER_ROLE` | the ClusterRole whose bindings name the approvers (default `aicr-operator-approver`) |
 * | `--operator-namespace NAME` (repeatable) | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | namespaces whose ServiceAccounts are operator identities, never approvers (default `aicr-system`, plus `aicr-validation`) |
 */
import { APPROVER_ROLE } from "@aicr/api"
import { Context } from "effect"

export interface GuardSettings {
  readonly approverRole: string
  readonly operatorNamespaces: ReadonlyArray<string>
}

export class GuardConfig extends Context.Service<GuardConfig, GuardSettings>()("@aicr/approval-guard/GuardConfig") {}

const FLAGS = { "approver-role": "AICR_APPROVER_ROLE", "operator-namespace": "AICR_OPERATOR_NAMESPACE" } as const
type Flag = keyof typeof FLAGS

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): GuardSettings => {
  const values: Partial<Record<Flag, string[]>> = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/u.exec(argv[i]!)
    const name = m?.[1] as Flag | undefined
    if (m === null || name === undefined || !(name in FLAGS)) throw new Error(`unknown argument ${argv[i]}`)
    const value = m[2] ?? argv[++i]
    if (value === undefined || value === "") throw new Error(`--${name} needs a value`)
    ;(values[name] ??= []).push(value)
  }
  const fromEnv = (f: Flag): string[] => (env[FLAGS[f]] ? [env[FLAGS[f]]!] : [])
  const namespaces = values["operator-namespace"] ?? (fromEnv("operator-namespace").length > 0 ? fromEnv("operator-namespace") : env["POD_NAMESPACE"] ? [env["POD_NAMESPACE"]] : ["aicr-system"])
  return {
    approverRole: values["approver-role"]?.at(-1) ?? fromEnv("approver-role")[0] ?? APPROVER_ROLE,
    operatorNamespaces: [...new Set([...namespaces.flatMap((n) => n.split(",")).map((n) => n.trim()).filter((n) => n !== ""), "aicr-validation"])],
  }
}
