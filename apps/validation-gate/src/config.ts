/**
 * The validation gate's settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--registry oci://host[:port]/prefix` | `AICR_REGISTRY_REPOSITORY` | the runtime registry prefix (chart `registry.repository`); evidence goes under `<prefix>/evidence/`, required |
 * | `--plain-http host[:port]` (repeatable, or comma-separated) | `AICR_REGISTRY_PLAIN_HTTP` | registries spoken to over plain HTTP (loopback always is) |
 * | `--docker-config PATH` | `AICR_DOCKER_CONFIG` | docker `config.json` with credentials, re-read at each handshake (rotated tokens) |
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | where plan and content ConfigMaps live (default `aicr-system`) |
 * | `--validation-namespace NAME` | `AICR_VALIDATION_NAMESPACE` | where the validation Jobs and AICR's validators run (default `aicr-validation`) |
 * | `--launcher-service-account NAME` | `AICR_VALIDATION_LAUNCHER` | the validation launcher's ServiceAccount there, installed by the chart's `validation.enabled` (default `aicr-validation`) |
 * | `--validation-deadline DURATION` | `AICR_VALIDATION_DEADLINE` | the whole run's deadline: snapshot and `aicr validate` each (default `25m`; AICR's deployment phase alone may take ~21 m) |
 * | `--signing-key KEY` | `AICR_VALIDATION_SIGNING_KEY` | chart `validation.signingKey`: `awskms:///alias/…` or a KMS key ARN; evidence must then carry its signature |
 *
 * Durations: `<n>ms`, `<n>s`, `<n>m`, `<n>h`.
 */
import { parseDurationMs, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"

export interface RegistryPrefix {
  /** host[:port] */
  readonly registry: string
  /** The repository prefix under it, e.g. `aicr/cluster`. */
  readonly prefix: string
}

export interface GateSettings {
  readonly registry: string
  readonly prefix: RegistryPrefix
  readonly plainHttp: ReadonlyArray<string>
  readonly dockerConfig: string | undefined
  readonly namespace: string
  readonly validationNamespace: string
  readonly launcher: string
  readonly deadlineSeconds: number
  readonly signingKey: string | undefined
}

export class GateConfig extends Context.Service<GateConfig, GateSettings>()("@aicr/validation-gate/GateConfig") {
  static layer(settings: GateSettings): Layer.Layer<GateConfig> {
    return Layer.succeed(GateConfig)(settings)
  }
}

const FLAGS = {
  registry: "AICR_REGISTRY_REPOSITORY",
  "plain-http": "AICR_REGISTRY_PLAIN_HTTP",
  "docker-config": "AICR_DOCKER_CONFIG",
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "validation-namespace": "AICR_VALIDATION_NAMESPACE",
  "launcher-service-account": "AICR_VALIDATION_LAUNCHER",
  "validation-deadline": "AICR_VALIDATION_DEADLINE",
  "signing-key": "AICR_VALIDATION_SIGNING_KEY",
} as const

/** `oci://host[:port]/prefix` → host and prefix. */
export const parseRegistryPrefix = (value: string): RegistryPrefix => {
  const m = /^oci:\/\/([^/]+)\/(.+?)\/?$/u.exec(value)
  if (m === null) throw new Error(`--registry must be oci://<host>[:port]/<prefix> (got ${JSON.stringify(value)})`)
  return { registry: m[1]!, prefix: m[2]! }
}

/** `awskms:///alias/<name>`, `awskms:///arn:…:key/…`, `awskms://<endpoint>/<key>`, or a bare KMS key ARN. */
export const parseSigningKey = (value: string): string => {
  if (/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/.+$/u.test(value) || /^awskms:\/\/[^/]*\/.+$/u.test(value)) return value
  throw new Error(`--signing-key must be awskms:///alias/<name>, awskms:///<key id or ARN> or a KMS key ARN (got ${JSON.stringify(value)})`)
}

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): GateSettings => {
  const { all, one } = readAppFlags(argv, env, FLAGS)
  const registry = one("registry")
  if (registry === undefined) throw new Error(`--registry (or ${FLAGS.registry}) is required: oci://<host>[:port]/<prefix>`)
  const deadline = one("validation-deadline") ?? "25m"
  let ms = 0
  try {
    ms = parseDurationMs(deadline)
  } catch {
    ms = 0
  }
  if (ms < 60_000) throw new Error(`--validation-deadline must be a duration of at least 1m such as 25m or 1h (got ${JSON.stringify(deadline)})`)
  const key = one("signing-key")
  return {
    registry,
    prefix: parseRegistryPrefix(registry),
    plainHttp: all("plain-http")
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== ""),
    dockerConfig: one("docker-config"),
    namespace: one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system",
    validationNamespace: one("validation-namespace") ?? "aicr-validation",
    launcher: one("launcher-service-account") ?? "aicr-validation",
    deadlineSeconds: Math.ceil(ms / 1000),
    signingKey: key === undefined ? undefined : parseSigningKey(key),
  }
}
