/**
 * The step-executor's settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | where plan and content ConfigMaps live (default `aicr-system`) |
 * | `--engine-namespace NAME` | `AICR_ENGINE_NAMESPACE` | Argo CD's namespace, where Applications are written (default `argocd`) |
 * | `--engine-project NAME` | `AICR_ENGINE_PROJECT` | the AppProject every Application belongs to (default `aicr`) |
 * | `--step-timeout DURATION` | `AICR_STEP_TIMEOUT` | a step not ready this long after its write fails the rollout (default `15m`) |
 * | `--release-step-timeout NAME=DURATION` | – | the same for one release (repeatable), e.g. `gpu-operator=30m` |
 * | `--engine-stale-after DURATION` | `AICR_ENGINE_STALE_AFTER` | Argo CD counts as not responding when an operator Application was not compared for this long (default `10m`; Argo CD compares every app at least every 2× its resync period, 3 m by default) |
 * | `--sync-retries N` | `AICR_SYNC_RETRIES` | Argo CD retries a failed sync N times (5 s backoff, doubling) before the step fails (default `2`) |
 * | `--component-pod-security NAME=LEVEL` | – | a component namespace's Pod Security level (repeatable; chart `namespaces.components`), named in the `NamespaceMissing` message's command |
 *
 * Durations: `<n>ms`, `<n>s`, `<n>m`, `<n>h`.
 */
import { parseDurationMs, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"

export interface ExecutorSettings {
  readonly namespace: string
  readonly engineNamespace: string
  readonly project: string
  readonly stepTimeoutMs: number
  readonly releaseTimeoutsMs: Readonly<Record<string, number>>
  readonly syncRetries: number
  readonly engineStaleAfterMs: number
  /** Pod Security level (`privileged`, `baseline`, `restricted`) of each component namespace the chart lists. */
  readonly componentPodSecurity: Readonly<Record<string, string>>
}

export class ExecutorConfig extends Context.Service<ExecutorConfig, ExecutorSettings>()("@aicr/step-executor/ExecutorConfig") {
  static layer(settings: ExecutorSettings): Layer.Layer<ExecutorConfig> {
    return Layer.succeed(ExecutorConfig)(settings)
  }
}

const ENV = {
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "engine-namespace": "AICR_ENGINE_NAMESPACE",
  "engine-project": "AICR_ENGINE_PROJECT",
  "step-timeout": "AICR_STEP_TIMEOUT",
  // No environment fallback: repeatable RELEASE=DURATION pairs.
  "release-step-timeout": "",
  "sync-retries": "AICR_SYNC_RETRIES",
  "engine-stale-after": "AICR_ENGINE_STALE_AFTER",
  // No environment fallback: repeatable NAMESPACE=LEVEL pairs.
  "component-pod-security": "",
} as const
type Flag = keyof typeof ENV

const duration = (flag: string, v: string): number => {
  let ms: number
  try {
    ms = parseDurationMs(v)
  } catch {
    ms = 0
  }
  if (ms <= 0) throw new Error(`--${flag} must be a positive duration such as 90s, 10m or 1h (got ${JSON.stringify(v)})`)
  return ms
}

const retries = (v: string): number => {
  if (!/^\d+$/u.test(v) || Number(v) > 10) throw new Error(`--sync-retries must be a whole number from 0 to 10 (got ${JSON.stringify(v)})`)
  return Number(v)
}

export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): ExecutorSettings => {
  const flags = readAppFlags(argv, env, ENV)
  const releaseTimeoutsMs: Record<string, number> = {}
  for (const value of flags.all("release-step-timeout")) {
    const kv = /^([a-z0-9][a-z0-9-]*)=(.+)$/u.exec(value)
    if (kv === null) throw new Error(`--release-step-timeout must be RELEASE=DURATION (got ${JSON.stringify(value)})`)
    releaseTimeoutsMs[kv[1]!] = duration("release-step-timeout", kv[2]!)
  }
  const componentPodSecurity: Record<string, string> = {}
  for (const value of flags.all("component-pod-security")) {
    const kv = /^([a-z0-9][a-z0-9-]*)=(privileged|baseline|restricted)$/u.exec(value)
    if (kv === null) throw new Error(`--component-pod-security must be NAMESPACE=privileged|baseline|restricted (got ${JSON.stringify(value)})`)
    componentPodSecurity[kv[1]!] = kv[2]!
  }
  const one = (f: Exclude<Flag, "release-step-timeout" | "component-pod-security">): string | undefined => flags.one(f)
  return {
    namespace: one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system",
    engineNamespace: one("engine-namespace") ?? "argocd",
    project: one("engine-project") ?? "aicr",
    stepTimeoutMs: duration("step-timeout", one("step-timeout") ?? "15m"),
    releaseTimeoutsMs,
    syncRetries: retries(one("sync-retries") ?? "2"),
    engineStaleAfterMs: duration("engine-stale-after", one("engine-stale-after") ?? "10m"),
    componentPodSecurity,
  }
}
