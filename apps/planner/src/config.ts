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
 * | `--jobs-namespace NAME` | `AICR_JOBS_NAMESPACE` | where `aicr upgrade-check` Jobs run (default: the operator namespace) |
 * | `--job-service-account NAME` | `AICR_JOB_SERVICE_ACCOUNT` | runs them (default `aicr-jobs`, the resolver's recipe and bundle Jobs' account) |
 * | `--job-deadline SECONDS` | | activeDeadlineSeconds of an upgrade-check Job (default 600) |
 * | `--job-ttl SECONDS` | | its ttlSecondsAfterFinished (default 3600) |
 * | `--plain-http host[:port]` (repeatable) | `AICR_REGISTRY_PLAIN_HTTP` | registries spoken to over plain HTTP (loopback always is) |
 * | `--docker-config PATH` | `AICR_DOCKER_CONFIG` | docker `config.json` for the runtime registry (the registry-mirror's), re-read at each check |
 * | `--not-ready-grace DURATION` | `AICR_NOT_READY_GRACE` | after a rollout, how long a release of the active plan must stay not ready before `Ready` says `NotReady` (default `30s`) |
 *
 * Durations: `<n>ms`, `<n>s`, `<n>m`, `<n>h`, or a bare number of seconds.
 */
import { type AicrJobSettings, DEFAULT_JOB_SETTINGS } from "@aicr/aicr"
import { parseDurationMs, parseJobSeconds as seconds, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"

export interface PlannerSettings {
  readonly namespace: string
  readonly windowMs: number
  readonly deadlineMs: number
  readonly project: string
  readonly engineNamespace: string
  /** upgrade-check Jobs; the image comes from the target plan (`plan.aicr.image`), the AICR that resolved it. */
  readonly jobs: Omit<AicrJobSettings, "image">
  /** Runtime registry access, for the pinned plan's chart check. */
  readonly plainHttp: ReadonlyArray<string>
  readonly dockerConfig: string | undefined
  /** A release not ready for less than this is a blip, not `Ready=False/NotReady` (readiness.ts). */
  readonly notReadyGraceMs: number
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
  "jobs-namespace": "AICR_JOBS_NAMESPACE",
  "job-service-account": "AICR_JOB_SERVICE_ACCOUNT",
  "job-deadline": "",
  "job-ttl": "",
  "plain-http": "AICR_REGISTRY_PLAIN_HTTP",
  "docker-config": "AICR_DOCKER_CONFIG",
  "not-ready-grace": "AICR_NOT_READY_GRACE",
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
  const namespace = flags.one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system"
  return {
    namespace,
    windowMs: duration("stabilization-window", flags.one("stabilization-window") ?? "10m"),
    deadlineMs,
    project: flags.one("engine-project") ?? "aicr",
    engineNamespace: flags.one("engine-namespace") ?? "argocd",
    jobs: {
      ...DEFAULT_JOB_SETTINGS,
      namespace: flags.one("jobs-namespace") ?? namespace,
      serviceAccount: flags.one("job-service-account") ?? DEFAULT_JOB_SETTINGS.serviceAccount,
      activeDeadlineSeconds: seconds(flags.one("job-deadline"), DEFAULT_JOB_SETTINGS.activeDeadlineSeconds, "job-deadline"),
      ttlSecondsAfterFinished: seconds(flags.one("job-ttl"), DEFAULT_JOB_SETTINGS.ttlSecondsAfterFinished, "job-ttl"),
    },
    plainHttp: flags
      .all("plain-http")
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== ""),
    dockerConfig: flags.one("docker-config"),
    notReadyGraceMs: duration("not-ready-grace", flags.one("not-ready-grace") ?? "30s"),
  }
}
