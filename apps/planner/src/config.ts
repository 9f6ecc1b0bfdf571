/**
 * The planner's settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | where plan and content ConfigMaps live (default `aicr-system`) |
 * | `--stabilization-window DURATION` | `AICR_STABILIZATION_WINDOW` | how long a new target must hold still before its rollout is created (default `10m`) |
 * | `--rollout-deadline DURATION` | `AICR_ROLLOUT_DEADLINE` | an unapproved rollout expires this long after it is created (default `24h`) |
 * | `--engine-project NAME` | `AICR_ENGINE_PROJECT` | the Argo CD AppProject plans name (default `aicr`) |
 *
 * Durations: `<n>ms`, `<n>s`, `<n>m`, `<n>h`, or `0`.
 */
import { Context, Layer } from "effect"

export interface PlannerSettings {
  readonly namespace: string
  readonly windowMs: number
  readonly deadlineMs: number
  readonly project: string
}

export class PlannerConfig extends Context.Service<PlannerConfig, PlannerSettings>()("@aicr/planner/PlannerConfig") {
  static layer(settings: PlannerSettings): Layer.Layer<PlannerConfig> {
    return Layer.succeed(PlannerConfig)(settings)
  }
}

const FLAGS = {
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "stabilization-window": "AICR_STABILIZATION_WINDOW",
  "rollout-deadline": "AICR_ROLLOUT_DEADLINE",
  "engine-project": "AICR_ENGINE_PROJECT",
} as const
type Flag = keyof typeof FLAGS

/** `90s`, `10m`, `6h`, `250ms`, `0` → milliseconds; throws on anything else. */
export const parseDuration = (flag: string, v: string): number => {
  const m = /^(\d+)(ms|s|m|h)?$/u.exec(v.trim())
  if (m === null || (m[2] === undefined && m[1] !== "0")) throw new Error(`--${flag} must be a duration such as 90s, 10m or 6h (got ${JSON.stringify(v)})`)
  const n = Number(m[1])
  return n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[(m[2] ?? "ms") as "ms"]
}

export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): PlannerSettings => {
  const values: Partial<Record<Flag, string>> = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/u.exec(argv[i]!)
    const name = m?.[1] as Flag | undefined
    if (m === null || name === undefined || !(name in FLAGS)) throw new Error(`unknown argument ${argv[i]}`)
    const value = m[2] ?? argv[++i]
    if (value === undefined) throw new Error(`--${name} needs a value`)
    values[name] = value
  }
  const one = (f: Flag): string | undefined => values[f] ?? (env[FLAGS[f]] || undefined)
  const deadlineMs = parseDuration("rollout-deadline", one("rollout-deadline") ?? "24h")
  if (deadlineMs < 60_000) throw new Error("--rollout-deadline must be at least 1m")
  return {
    namespace: one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system",
    windowMs: parseDuration("stabilization-window", one("stabilization-window") ?? "10m"),
    deadlineMs,
    project: one("engine-project") ?? "aicr",
  }
}
