/**
 * The resolver's settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--aicr-version v0.11.1` | `AICR_VERSION` | the pinned AICR (chart `aicr.version`), required |
 * | `--aicr-image REF` | `AICR_IMAGE` | its image, digest-pinned in production (default `ghcr.io/nvidia/aicr:<version>`) |
 * | `--allow-prerelease-aicr BOOL` | `AICR_ALLOW_PRERELEASE` | `AllowPrereleaseAICR` (chart `aicr.allowPrerelease`), default false |
 * | `--allow-unsupported-aicr BOOL` | `AICR_ALLOW_UNSUPPORTED_VERSION` | development only: resolve with an AICR outside `>=1.0.0,<2.0.0` (chart `aicr.allowUnsupportedVersion`), default false |
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | content ConfigMaps (default `aicr-system`) |
 * | `--jobs-namespace NAME` | `AICR_JOBS_NAMESPACE` | recipe and bundle Jobs (default: the operator namespace) |
 * | `--discovery-namespace NAME` | `AICR_DISCOVERY_NAMESPACE` | the snapshot agent Job (default: the operator namespace) |
 * | `--job-service-account NAME` | `AICR_JOB_SERVICE_ACCOUNT` | runs recipe and bundle Jobs (default `aicr-jobs`) |
 * | `--agent-service-account NAME` | `AICR_AGENT_SERVICE_ACCOUNT` | runs the snapshot agent (default `aicr-agent`) |
 * | `--registry oci://host[:port]/prefix` | `AICR_REGISTRY_REPOSITORY` | the runtime registry prefix; bundles are pushed under `bundles/cluster`, required |
 * | `--plain-http host[:port]` (repeatable) | `AICR_REGISTRY_PLAIN_HTTP` | registries spoken to over plain HTTP (loopback always is) |
 * | `--docker-config PATH` | `AICR_DOCKER_CONFIG` | docker `config.json`: the resolver's pulls and each bundle Job's per-run credential |
 * | `--component-namespaces a,b,…` | `AICR_COMPONENT_NAMESPACES` | chart `namespaces.components`, required; releases elsewhere are `NamespaceNotAllowed` |
 * | `--job-deadline SECONDS` | | activeDeadlineSeconds of every AICR Job (default 600) |
 * | `--job-ttl SECONDS` | | ttlSecondsAfterFinished (default 3600) |
 */
import { type AicrJobSettings, type Capabilities, capabilitiesOf, DEFAULT_JOB_SETTINGS, type VersionGate, versionGate } from "@aicr/aicr"
import { parseJobSeconds as seconds, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"

export interface ResolverSettings {
  readonly caps: Capabilities
  /** The version as configured (`v0.11.1`), recorded in status.resolution. */
  readonly version: string
  /** The version gate on the pinned AICR, with the allowances given (operator.md §4.3 step 3). */
  readonly gate: VersionGate
  readonly jobs: AicrJobSettings
  readonly namespace: string
  /** `host[:port]` and `prefix` of the runtime registry. */
  readonly registry: { readonly host: string; readonly prefix: string }
  readonly plainHttp: ReadonlyArray<string>
  readonly dockerConfig: string | undefined
  /** Chart `namespaces.components`: never empty, sorted. */
  readonly allowedNamespaces: ReadonlyArray<string>
}

export class ResolverConfig extends Context.Service<ResolverConfig, ResolverSettings>()("@aicr/resolver/ResolverConfig") {
  static layer(settings: ResolverSettings): Layer.Layer<ResolverConfig> {
    return Layer.succeed(ResolverConfig)(settings)
  }
}

const ENV: Readonly<Record<string, string>> = {
  "aicr-version": "AICR_VERSION",
  "aicr-image": "AICR_IMAGE",
  "allow-prerelease-aicr": "AICR_ALLOW_PRERELEASE",
  "allow-unsupported-aicr": "AICR_ALLOW_UNSUPPORTED_VERSION",
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "jobs-namespace": "AICR_JOBS_NAMESPACE",
  "discovery-namespace": "AICR_DISCOVERY_NAMESPACE",
  "job-service-account": "AICR_JOB_SERVICE_ACCOUNT",
  "agent-service-account": "AICR_AGENT_SERVICE_ACCOUNT",
  registry: "AICR_REGISTRY_REPOSITORY",
  "plain-http": "AICR_REGISTRY_PLAIN_HTTP",
  "docker-config": "AICR_DOCKER_CONFIG",
  "component-namespaces": "AICR_COMPONENT_NAMESPACES",
  "job-deadline": "",
  "job-ttl": "",
}

/** `oci://host[:port]/prefix` → its parts. */
export const parseRegistry = (value: string): { host: string; prefix: string } => {
  const m = /^oci:\/\/([^/]+)\/(.+?)\/?$/u.exec(value)
  if (m === null) throw new Error(`--registry must be oci://<host>[:port]/<prefix>, not ${JSON.stringify(value)}`)
  return { host: m[1]!, prefix: m[2]! }
}

const bool = (flag: string, value: string | undefined): boolean => {
  if (value === undefined || /^(false|0|no)$/iu.test(value)) return false
  if (/^(true|1|yes)$/iu.test(value)) return true
  throw new Error(`--${flag} must be true or false, not ${JSON.stringify(value)}`)
}

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): ResolverSettings => {
  const flags = readAppFlags(argv, env, ENV)
  const many = (f: string): string[] =>
    flags
      .all(f)
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== "")
  const one = (f: string): string | undefined => flags.one(f)
  const version = one("aicr-version")
  if (version === undefined) throw new Error("--aicr-version (or AICR_VERSION) is required, e.g. v0.11.1")
  const caps = capabilitiesOf(version)
  if (caps === undefined) throw new Error(`--aicr-version ${JSON.stringify(version)} is not a version`)
  const registry = one("registry")
  if (registry === undefined) throw new Error("--registry (or AICR_REGISTRY_REPOSITORY) is required: oci://<host>[:port]/<prefix>")
  const namespace = one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system"
  const allowed = many("component-namespaces")
  if (allowed.length === 0) {
    throw new Error(
      "--component-namespaces (or AICR_COMPONENT_NAMESPACES) is required: every namespace the recipe may deploy into, comma-separated (chart namespaces.components)",
    )
  }
  const gate = versionGate(caps, {
    prerelease: bool("allow-prerelease-aicr", one("allow-prerelease-aicr")),
    outsideRange: bool("allow-unsupported-aicr", one("allow-unsupported-aicr")),
  })
  return {
    caps,
    gate,
    version: version.startsWith("v") ? version : `v${version}`,
    namespace,
    jobs: {
      ...DEFAULT_JOB_SETTINGS,
      image: one("aicr-image") ?? `ghcr.io/nvidia/aicr:${version.startsWith("v") ? version : `v${version}`}`,
      namespace: one("jobs-namespace") ?? namespace,
      discoveryNamespace: one("discovery-namespace") ?? namespace,
      serviceAccount: one("job-service-account") ?? DEFAULT_JOB_SETTINGS.serviceAccount,
      agentServiceAccount: one("agent-service-account") ?? DEFAULT_JOB_SETTINGS.agentServiceAccount,
      activeDeadlineSeconds: seconds(one("job-deadline"), DEFAULT_JOB_SETTINGS.activeDeadlineSeconds, "job-deadline"),
      ttlSecondsAfterFinished: seconds(one("job-ttl"), DEFAULT_JOB_SETTINGS.ttlSecondsAfterFinished, "job-ttl"),
    },
    registry: parseRegistry(registry),
    plainHttp: many("plain-http"),
    dockerConfig: one("docker-config"),
    allowedNamespaces: [...new Set(allowed)].sort(),
  }
}
