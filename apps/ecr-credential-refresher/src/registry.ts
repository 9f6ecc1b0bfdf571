/**
 * The runtime registry as the refresher sees it: `oci://host[:port]/prefix` (chart `registry.repository`), and for
 * `aws` the private ECR registry behind it (`<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]`), whose host
 * names the account, the region and the partition. Pure.
 */

export interface RegistryRef {
  /** host[:port], the key of the docker config's `auths` and the start of Argo CD's repo-creds `url`. */
  readonly host: string
  /** Repository prefix under the host, e.g. `aicr/cluster` (may be empty). */
  readonly prefix: string
}

export interface EcrRegistry {
  readonly host: string
  readonly accountId: string
  readonly region: string
  readonly partition: "aws" | "aws-cn"
}

export const parseRegistry = (value: string): RegistryRef => {
  const m = /^oci:\/\/([^/\s]+)(?:\/([^\s]*))?$/u.exec(value.trim())
  if (m === null) throw new Error(`--registry must be oci://<host>[:port]/<prefix>, got ${JSON.stringify(value)}`)
  return { host: m[1]!.toLowerCase(), prefix: (m[2] ?? "").replace(/\/+$/u, "") }
}

const ECR_HOST = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/u

export type EcrParse = { readonly ok: true; readonly ecr: EcrRegistry } | { readonly ok: false; readonly why: string }

/** The private ECR registry a host names, or why it is none (public.ecr.aws is unsupported, spec §4.4). */
export const parseEcrHost = (host: string): EcrParse => {
  const h = host.toLowerCase()
  if (h === "public.ecr.aws" || h.endsWith(".public.ecr.aws")) {
    return {
      ok: false,
      why: `${host} is ECR Public, which the operator does not support: use a private ECR registry (<account>.dkr.ecr.<region>.amazonaws.com)`,
    }
  }
  const m = ECR_HOST.exec(h)
  if (m === null) {
    return {
      ok: false,
      why: `${host} is not a private ECR registry (<account>.dkr.ecr.<region>.amazonaws.com): set registry.auth.provider static for other registries and supply their docker-config Secret`,
    }
  }
  return { ok: true, ecr: { host: h, accountId: m[1]!, region: m[2]!, partition: m[3] === undefined ? "aws" : "aws-cn" } }
}

/**
 * Argo CD's repo-creds `url`: `oci://` + the registry prefix, a prefix of every repoURL the operator writes
 * (`oci://<host>/<prefix>/charts/<chart>`, native OCI sources pinned by digest).
 */
export const repoCredsUrl = (r: RegistryRef): string => `oci://${r.prefix === "" ? r.host : `${r.host}/${r.prefix}`}`

/** Loopback registries are spoken to over plain HTTP (the local control plane); ECR is always HTTPS. */
export const isLoopback = (host: string): boolean => /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/u.test(host)
