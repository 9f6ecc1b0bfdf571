/**
 * What every operation module needs: the transport and the client's limits. Internal; `OciClient` builds it.
 */
import { type ErrorTarget } from "./errors"
import { pullScope, pushScope } from "./auth/challenge"
import { type Transport } from "./transport/http"
import { type RetryPolicy } from "./transport/retry"

/** A repository on a registry (a `Reference` without tag/digest works too). */
export interface Repo {
  readonly registry: string
  readonly repository: string
}

/** Shared state of one client. */
export interface Ctx {
  readonly transport: Transport
  /** Chunk size of chunked uploads (bytes held in memory per in-flight chunk). */
  readonly chunkSize: number
  /** Largest manifest accepted in memory. */
  readonly maxManifestBytes: number
  /** Per registry: does it implement the referrers API (learned from the first 404 or success)? */
  readonly referrersApi: Map<string, boolean>
  /** Retry policy, also used for whole-blob retries of streamed copies. */
  readonly retry: RetryPolicy
}

/** Per-call options every operation accepts. */
export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
}

export const target = (repo: Repo, reference?: string): ErrorTarget => ({
  registry: repo.registry,
  repository: repo.repository,
  ...(reference !== undefined ? { reference } : {}),
})

export const pull = (repo: Repo): string[] => [pullScope(repo.repository)]
export const push = (repo: Repo): string[] => [pushScope(repo.repository)]
