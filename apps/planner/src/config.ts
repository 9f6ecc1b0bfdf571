/**
 * The planner's settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | where plan and content ConfigMaps live (default `aicr-system`) |
 * | `--stabilization-window DURATION` | `AICR_STABILIZATION_WINDOW` | how long a new target must hold still before its rollout is created (default `10m`) |
 * | `--rollout-deadline DURATION` | `AICR_ROLLOUT_DEADLINE` | an unapproved rollout expires this long after it is created (default `24h`) |
 * | `--engine-project NAME` | `AICR_ENGINE_PROJECT` | the Argo CD AppProject plans name (default `aicr`) |
 * | `--engine-namespace NAME` | `AICR_ENGINE_NAMESPACE` | Argo CD's namespace, whose Applications re-adoption reads (default `argocd`) |
 *
 * Durations: `<n>ms`, `<n>s`, `<n>m`, `<n>h`, or a bare number of seconds.
 */
import { parseDurationMs, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"

export interface PlannerSettings {
  readonly namespace: string
  readonly windowMs: number
  readonly deadlineMs: number
  readonly project: string
  readonly engineNamespace: string
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
  "engine-namespace": "AICR_ENGINE_NAMESPACE",
} as const
const duration = (flag: string, v: string): number => {
  try {
    return parseDurationMs(v)
  } catch {
    throw new Error(`--${flag} must be a duration such as 90s, 10m or 6h (got ${JSON.stringify(v)})`)
  }
}

export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): PlannerSettings => {
  const flags = readAppFlags(argv, env, FLAGS)
  const deadlineMs = duration("rollout-deadline", flags.one("rollout-deadline") ?? "24h")
  if (deadlineMs < 60_000) throw new Error("--rollout-deadline must be at least 1m")
  return {
    namespace: flags.one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system",
    windowMs: duration("stabilization-window", flags.one("stabilization-window") ?? "10m"),
    deadlineMs,
    project: flags.one("engine-project") ?? "aicr",
    engineNamespace: flags.one("engine-namespace") ?? "argocd",
  }
}
