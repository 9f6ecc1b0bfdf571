// Leader election on a real Lease with the default timings (15 s lease, 10 s renew deadline, 2 s retry):
// exactly one leader; a SIGKILLed leader is replaced after about the lease duration; a graceful stop hands over
// at the next retry.
import { Core, type KubeObject } from "@aicr/api"
import { Kube, runLeaderElection, type LeaderElector } from "../src/index"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { liveKube, unique } from "./support"

const info = inject("harness")
/** The elector's defaults, which every candidate here runs with. */
const LEASE_MS = 15_000
const RETRY_MS = 2_000
const namespace = unique("lease")

type Lease = KubeObject & { spec: { holderIdentity?: string; leaseTransitions?: number } }

const candidate = (identity: string, lease: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const { kube } = liveKube(info)
    const elector = yield* runLeaderElection({ name: lease, namespace, identity }).pipe(Effect.provide(Layer.succeed(Kube)(kube)), Scope.provide(scope))
    return { elector, stop: Scope.close(scope, Exit.void) }
  })

const until = (cond: () => boolean, timeoutMs: number) =>
  Effect.gen(function* () {
    const start = Date.now()
    while (!cond()) {
      if (Date.now() - start > timeoutMs) return yield* Effect.die(new Error("timed out"))
      yield* Effect.sleep(50)
    }
    return Date.now() - start
  })

const holder = (lease: string) =>
  liveKube(info)
    .kube.get<Lease>(Core.Lease, `${namespace}/${lease}`)
    .pipe(Effect.map((o) => Option.getOrUndefined(o)?.spec))

describe("leader election on a real Lease", () => {
  beforeAll(() => Effect.runPromise(liveKube(info).kube.create(Core.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })))

  it("two candidates: exactly one leads, and the Lease names it", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* candidate("a", "one-leader")
        const b = yield* candidate("b", "one-leader")
        yield* until(() => a.elector.isLeader() || b.elector.isLeader(), 10_000)
        const leaders = (x: ReadonlyArray<LeaderElector>) => x.filter((e) => e.isLeader()).map((e) => e.identity)
        for (let i = 0; i < 25; i++) {
          expect(leaders([a.elector, b.elector])).toHaveLength(1)
          yield* Effect.sleep(200)
        }
        expect((yield* holder("one-leader"))?.holderIdentity).toBe(leaders([a.elector, b.elector])[0])
        yield* a.stop
        yield* b.stop
      }),
    )
  })

  it("a SIGKILLed leader (no release) is replaced after about the lease duration", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "fixtures", "lease-candidate.ts"), info.kubeconfig, namespace, "crash", "child"],
      {
        cwd: join(import.meta.dirname, "..", "..", ".."),
        stdio: ["ignore", "pipe", "inherit"],
      },
    )
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (d: Buffer) => d.toString().includes("LEADING") && resolve())
        child.once("exit", (code) => reject(new Error(`candidate exited early with ${code}`)))
        setTimeout(() => reject(new Error("child never led")), 60_000)
      })
      await Effect.runPromise(
        Effect.gen(function* () {
          const b = yield* candidate("b", "crash")
          yield* Effect.sleep(4_000)
          expect(b.elector.isLeader()).toBe(false) // the child renews
          child.kill("SIGKILL")
          const takeover = yield* until(() => b.elector.isLeader(), 30_000)
          // Expiry is judged from when b last saw the record change (≤ one jittered retry, 2 s + 20 %, after the child's
          // last renew), and b takes over at its first retry after that: at most the lease plus two such retries after
          // the kill, and a second for the requests' own time; at least the lease minus the child's renew period, with
          // the same second and as much again below it.
          expect(takeover).toBeGreaterThan(LEASE_MS - RETRY_MS - 2 * 1_000)
          expect(takeover).toBeLessThan(LEASE_MS + 2 * RETRY_MS * 1.2 + 1_000)
          expect(yield* holder("crash")).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 })
          yield* b.stop
        }),
      )
    } finally {
      child.kill("SIGKILL")
    }
  }, 120_000)

  it("a graceful stop releases the Lease and the standby takes over at its next retry", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* candidate("a", "graceful")
        yield* until(() => a.elector.isLeader(), 10_000)
        const b = yield* candidate("b", "graceful")
        yield* Effect.sleep(3_000)
        expect(b.elector.isLeader()).toBe(false)
        yield* a.stop
        expect((yield* holder("graceful"))?.holderIdentity).toBe("")
        const takeover = yield* until(() => b.elector.isLeader(), 10_000)
        expect(takeover).toBeLessThan(3_500) // one retry period (2 s + jitter), far below the 15 s lease
        yield* b.stop
      }),
    )
  }, 60_000)
})
