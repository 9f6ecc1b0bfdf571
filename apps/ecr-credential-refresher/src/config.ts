/**
 * The refresher's own settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--registry oci://host[:port]/prefix` | `AICR_REGISTRY_REPOSITORY` | the runtime registry prefix (chart `registry.repository`), required |
 * | `--auth-provider aws\|static` | `AICR_REGISTRY_AUTH_PROVIDER` | chart `registry.auth.provider`; default `static` |
 * | `--repo-creds-secret NAME` | `AICR_REPO_CREDS_SECRET` | Argo CD repo-creds Secret (chart `registry.auth.repoCredsSecret`), default `aicr-registry` |
 * | `--engine-namespace NAME` | `AICR_ENGINE_NAMESPACE` | Argo CD's namespace (chart `engine.namespace`), default `argocd` |
 * | `--docker-config-secret NAME` | `AICR_DOCKER_CONFIG_SECRET` | the docker-config Secret in the operator namespace, default `aicr-registry-docker-config` |
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | default `aicr-system` |
 * | `--refresh-interval DURATION` | `AICR_TOKEN_REFRESH_INTERVAL` | aws: mint this long after the last mint at the latest, default `6h` |
 * | `--ecr-registry HOST` | `AICR_ECR_REGISTRY` | aws: the ECR registry whose tokens the runtime registry accepts; default the `--registry` host (only a local emulator or a proxy in front of ECR differs) |
 */
import { parseDurationMs, readAppFlags } from "@aicr/runtime"
import { Context } from "effect"
import { parseRegistry, type RegistryRef } from "./registry"
import { DEFAULT_REFRESH_INTERVAL_MS } from "./schedule"

export type Provider = "aws" | "static"

export interface SecretRef {
  readonly namespace: string
  readonly name: string
}

export interface RefresherSettings {
  readonly provider: Provider
  readonly registry: RegistryRef
  /** The flag value as given, for logs. */
  readonly repository: string
  readonly ecrHost: string
  readonly repoCreds: SecretRef
  readonly dockerConfig: SecretRef
  readonly refreshIntervalMs: number
}

export class RefresherConfig extends Context.Service<RefresherConfig, RefresherSettings>()("@aicr/ecr-credential-refresher/RefresherConfig") {}

const FLAGS = {
  registry: "AICR_REGISTRY_REPOSITORY",
  "auth-provider": "AICR_REGISTRY_AUTH_PROVIDER",
  "repo-creds-secret": "AICR_REPO_CREDS_SECRET",
  "engine-namespace": "AICR_ENGINE_NAMESPACE",
  "docker-config-secret": "AICR_DOCKER_CONFIG_SECRET",
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "refresh-interval": "AICR_TOKEN_REFRESH_INTERVAL",
  "ecr-registry": "AICR_ECR_REGISTRY",
} as const
type Flag = keyof typeof FLAGS

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/u

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): RefresherSettings => {
  const { one } = readAppFlags(argv, env, FLAGS)
  const name = (f: Flag, fallback: string): string => {
    const v = one(f) ?? fallback
    if (!NAME.test(v) || v.length > 253) throw new Error(`--${f} must be a Kubernetes object name, got ${JSON.stringify(v)}`)
    return v
  }
  const repository = one("registry")
  if (repository === undefined) throw new Error(`--registry (or ${FLAGS.registry}) is required: oci://<host>[:port]/<prefix>`)
  const provider = one("auth-provider") ?? "static"
  if (provider !== "aws" && provider !== "static") throw new Error(`--auth-provider must be aws or static, got ${JSON.stringify(provider)}`)
  const registry = parseRegistry(repository)
  const refreshIntervalMs = parseDurationMs(one("refresh-interval") ?? `${DEFAULT_REFRESH_INTERVAL_MS}ms`)
  if (refreshIntervalMs < 1_000) throw new Error("--refresh-interval must be at least 1s")
  const operatorNamespace = name("operator-namespace", env["POD_NAMESPACE"] ?? "aicr-system")
  return {
    provider,
    registry,
    repository,
    ecrHost: (one("ecr-registry") ?? registry.host).toLowerCase(),
    repoCreds: { namespace: name("engine-namespace", "argocd"), name: name("repo-creds-secret", "aicr-registry") },
    dockerConfig: { namespace: operatorNamespace, name: name("docker-config-secret", "aicr-registry-docker-config") },
    refreshIntervalMs,
  }
}
