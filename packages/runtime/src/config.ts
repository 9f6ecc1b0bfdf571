/**
 * Process configuration shared by every controller, from flags (chart values are passed as flags) with environment
 * fallbacks. Names follow controller-runtime's flags so the chart reads familiarly. Defaults: operator.md §4.1.
 */
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"

export interface RuntimeConfig {
  readonly app: string
  /** Kubeconfig file; when absent, in-cluster config if `KUBERNETES_SERVICE_HOST` is set, else the default chain. */
  readonly kubeconfig: string | undefined
  readonly inCluster: boolean
  readonly metricsBindAddress: string
  readonly healthProbeBindAddress: string
  readonly leaderElect: boolean
  readonly leaderElectionNamespace: string
  readonly leaderElectionId: string
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  readonly gracefulShutdownMs: number
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace"
  readonly kubeApiQps: number
  readonly kubeApiBurst: number
  /** Leader-election identity and event `reportingInstance`: `POD_NAME` or `<hostname>_<uuid>`. */
  readonly identity: string
  /** Arguments not consumed here, for the app. */
  readonly rest: ReadonlyArray<string>
}

const FLAGS = {
  kubeconfig: "KUBECONFIG",
  "metrics-bind-address": "METRICS_BIND_ADDRESS",
  "health-probe-bind-address": "HEALTH_PROBE_BIND_ADDRESS",
  "leader-elect": "LEADER_ELECT",
  "leader-election-namespace": "POD_NAMESPACE",
  "leader-election-id": "LEADER_ELECTION_ID",
  "leader-elect-lease-duration": "LEADER_ELECT_LEASE_DURATION",
  "leader-elect-renew-deadline": "LEADER_ELECT_RENEW_DEADLINE",
  "leader-elect-retry-period": "LEADER_ELECT_RETRY_PERIOD",
  "graceful-shutdown-timeout": "GRACEFUL_SHUTDOWN_TIMEOUT",
  "log-level": "LOG_LEVEL",
  "kube-api-qps": "KUBE_API_QPS",
  "kube-api-burst": "KUBE_API_BURST",
} as const
type Flag = keyof typeof FLAGS

/** `15s`, `500ms`, `2m`, or a bare number of seconds. */
export const parseDurationMs = (s: string): number => {
  const m = s.trim().match(/^(\d+(?:\.\d+)?)(ms|s|m|h)?$/)
  if (!m) throw new Error(`invalid duration "${s}"`)
  const n = Number(m[1])
  return Math.round(n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[(m[2] ?? "s") as "ms" | "s" | "m" | "h"])
}

/** A flag's whole number of seconds from 30 to 86400 (AICR Job deadlines and TTLs), or the fallback when unset. */
export const parseJobSeconds = (v: string | undefined, fallback: number, flag: string): number => {
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 30 || n > 86_400) throw new Error(`--${flag} must be a whole number of seconds from 30 to 86400`)
  return n
}

const bool = (s: string) => {
  if (/^(true|1|yes)$/i.test(s)) return true
  if (/^(false|0|no)$/i.test(s)) return false
  throw new Error(`invalid boolean "${s}"`)
}

export const parseConfig = (
  app: string,
  argv: ReadonlyArray<string> = process.argv.slice(2),
  env: Readonly<Record<string, string | undefined>> = process.env,
): RuntimeConfig => {
  const flags: Partial<Record<Flag, string>> = {}
  const rest: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const m = argv[i]!.match(/^--([a-z-]+)(?:=(.*))?$/)
    const name = m?.[1] as Flag | undefined
    if (m === null || name === undefined || !(name in FLAGS)) {
      rest.push(argv[i]!)
      continue
    }
    if (m[2] !== undefined) flags[name] = m[2]
    else if (name === "leader-elect" && (argv[i + 1] === undefined || argv[i + 1]!.startsWith("--"))) flags[name] = "true"
    else flags[name] = argv[++i] ?? ""
  }
  const get = (f: Flag): string | undefined => flags[f] ?? env[FLAGS[f]]
  const level = get("log-level") ?? "info"
  if (!["fatal", "error", "warn", "info", "debug", "trace"].includes(level)) throw new Error(`invalid log level "${level}"`)
  const kubeconfig = get("kubeconfig") || undefined
  return {
    app,
    kubeconfig,
    inCluster: kubeconfig === undefined && env["KUBERNETES_SERVICE_HOST"] !== undefined,
    metricsBindAddress: get("metrics-bind-address") ?? ":8080",
    healthProbeBindAddress: get("health-probe-bind-address") ?? ":8081",
    leaderElect: bool(get("leader-elect") ?? "true"),
    leaderElectionNamespace: get("leader-election-namespace") ?? "aicr-system",
    leaderElectionId: get("leader-election-id") ?? `aicr-${app}`,
    leaseDurationMs: parseDurationMs(get("leader-elect-lease-duration") ?? "15s"),
    renewDeadlineMs: parseDurationMs(get("leader-elect-renew-deadline") ?? "10s"),
    retryPeriodMs: parseDurationMs(get("leader-elect-retry-period") ?? "2s"),
    gracefulShutdownMs: parseDurationMs(get("graceful-shutdown-timeout") ?? "30s"),
    logLevel: level as RuntimeConfig["logLevel"],
    kubeApiQps: Number(get("kube-api-qps") ?? 20),
    kubeApiBurst: Number(get("kube-api-burst") ?? 30),
    identity: env["POD_NAME"] ? `${env["POD_NAME"]}_${randomUUID().slice(0, 8)}` : `${hostname()}_${randomUUID()}`,
    rest,
  }
}

/** An app's own flags: what `readAppFlags` found, by flag name. */
export interface AppFlags<F extends string> {
  /** Every value given for the flag, in order; else the environment variable's value; else none. */
  all(flag: F): string[]
  /** The last value given (flag or environment). */
  one(flag: F): string | undefined
}

/**
 * Reads an app's own flags (`RuntimeConfig.rest`): `--name value` or `--name=value`, each flag repeatable, with the
 * environment variable of `spec[name]` as the fallback. Throws on an unknown flag or a missing value.
 */
export const readAppFlags = <F extends string>(
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  spec: Readonly<Record<F, string>>,
): AppFlags<F> => {
  const values: Partial<Record<F, string[]>> = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/u.exec(argv[i]!)
    const name = m?.[1] as F | undefined
    if (m === null || name === undefined || !(name in spec)) throw new Error(`unknown argument ${argv[i]}`)
    const value = m[2] ?? argv[++i]
    if (value === undefined || value === "") throw new Error(`--${name} needs a value`)
    ;(values[name] ??= []).push(value)
  }
  const all = (f: F): string[] => values[f] ?? (env[spec[f]] ? [env[spec[f]]!] : [])
  return { all, one: (f) => all(f).at(-1) }
}
