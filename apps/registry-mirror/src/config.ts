/**
 * The registry-mirror's own settings, from flags with environment fallbacks (chart values are passed as flags):
 *
 * | flag | env | meaning |
 * |---|---|---|
 * | `--registry oci://host[:port]/prefix` | `AICR_REGISTRY_REPOSITORY` | the runtime registry prefix (chart `registry.repository`), required |
 * | `--plain-http host[:port]` (repeatable, or comma-separated) | `AICR_REGISTRY_PLAIN_HTTP` | registries spoken to over plain HTTP (loopback always is) |
 * | `--docker-config PATH` | `AICR_DOCKER_CONFIG` | docker `config.json` with credentials, re-read at each handshake (rotated tokens) |
 * | `--operator-namespace NAME` | `AICR_OPERATOR_NAMESPACE` / `POD_NAMESPACE` | where content ConfigMaps live (default `aicr-system`) |
 * | `--upstream-rewrite FROM=TO` (repeatable, or comma-separated) | `AICR_UPSTREAM_REWRITES` | chart source prefix rewrites (air-gapped mirrors, the local upstream) |
 * | `--mirror-concurrency N` | `AICR_MIRROR_CONCURRENCY` | artifacts copied in parallel (default 4) |
 * | `--verify-interval D` | `AICR_MIRROR_VERIFY_INTERVAL` | how often the recorded tags are checked in the registry (default 10m; also at start) |
 */
import { parseDurationMs, readAppFlags } from "@aicr/runtime"
import { Context, Layer } from "effect"
import { parseRegistryPrefix, parseRewrites, type RegistryPrefix, type Rewrites } from "./source"

export interface MirrorSettings {
  readonly prefix: RegistryPrefix
  /** The flag value as given, for logs. */
  readonly registry: string
  readonly plainHttp: ReadonlyArray<string>
  readonly dockerConfig: string | undefined
  readonly namespace: string
  readonly rewrites: Rewrites
  readonly concurrency: number
  /** How often a complete mirror's recorded tags are checked in the registry (verify.ts). */
  readonly verifyIntervalMs: number
}

export class MirrorConfig extends Context.Service<MirrorConfig, MirrorSettings>()("@aicr/registry-mirror/MirrorConfig") {
  static layer(settings: MirrorSettings): Layer.Layer<MirrorConfig> {
    return Layer.succeed(MirrorConfig)(settings)
  }
}

const FLAGS = {
  registry: "AICR_REGISTRY_REPOSITORY",
  "plain-http": "AICR_REGISTRY_PLAIN_HTTP",
  "docker-config": "AICR_DOCKER_CONFIG",
  "operator-namespace": "AICR_OPERATOR_NAMESPACE",
  "upstream-rewrite": "AICR_UPSTREAM_REWRITES",
  "mirror-concurrency": "AICR_MIRROR_CONCURRENCY",
  "verify-interval": "AICR_MIRROR_VERIFY_INTERVAL",
} as const

/** Parses the app's flags (the runtime's own flags arrive here as `RuntimeConfig.rest`). Throws on bad input. */
export const parseSettings = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>> = process.env): MirrorSettings => {
  const { all, one } = readAppFlags(argv, env, FLAGS)
  const registry = one("registry")
  if (registry === undefined) throw new Error(`--registry (or ${FLAGS.registry}) is required: oci://<host>[:port]/<prefix>`)
  const concurrency = Number(one("mirror-concurrency") ?? 4)
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw new Error("--mirror-concurrency must be an integer from 1 to 32")
  const verifyIntervalMs = parseDurationMs(one("verify-interval") ?? "10m")
  if (!(verifyIntervalMs >= 1000)) throw new Error("--verify-interval must be a duration of at least 1s (e.g. 10m)")
  return {
    prefix: parseRegistryPrefix(registry),
    registry,
    plainHttp: all("plain-http")
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== ""),
    dockerConfig: one("docker-config"),
    namespace: one("operator-namespace") ?? env["POD_NAMESPACE"] ?? "aicr-system",
    rewrites: parseRewrites(all("upstream-rewrite")),
    concurrency,
    verifyIntervalMs,
  }
}
