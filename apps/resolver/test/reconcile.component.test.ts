// reconcile() against FakeKube: the writes it makes on each path. FakeKube runs no Job, so the test plays the Job
// controller and kubelet: it completes or fails the Jobs the resolver created, with real AICR outputs (the recipe
// and bundle the real v0.11.1 CLI writes, its real failure lines) in the places the real CLI puts them.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { type BundleFiles, capabilitiesOf, DEFAULT_JOB_SETTINGS, versionGate } from "@aicr/aicr"
import { type ClusterRuntime, ClusterRuntimeKind, Core, type KubeObject } from "@aicr/api"
import { eventRecorderLayer } from "@aicr/kube"
import { makeFakeKube } from "@aicr/testing"
import { aicrBinary, readVersions } from "@aicr/testing/harness"
import { it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { beforeAll, describe, expect } from "vitest"
import { ResolverConfig, type ResolverSettings } from "../src/config"
import type { NodeView } from "../src/discovery"
import { reconcile } from "../src/reconcile"
import { BundlePullError, BundleStore, Nodes, nodesOf } from "../src/services"

const VERSION = readVersions().aicr
const NS = "aicr-system"
const T0 = Date.parse("2026-12-02T10:00:00Z")
const settings = (over: Partial<ResolverSettings> = {}): ResolverSettings => ({
  caps: capabilitiesOf(VERSION)!,
  version: VERSION,
  // The AICR built here is 0.x: the development allowance, as the local control plane sets it.
  gate: versionGate(capabilitiesOf(VERSION)!, { prerelease: false, outsideRange: true }),
  jobs: { ...DEFAULT_JOB_SETTINGS, image: `ghcr.io/nvidia/aicr:${VERSION}` },
  namespace: NS,
  registry: { host: "registry.example", prefix: "aicr/cluster" },
  plainHttp: [],
  dockerConfig: undefined,
  allowedNamespaces: ["cert-manager", "gpu-operator", "kai-scheduler", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"],
  ...over,
})

/** The sample runtime, system group only: no snapshot, the declared criteria stand. */
const SPEC = {
  intent: "training",
  platform: "kubeflow",
  criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
  placement: { system: { nodeSelector: { pool: "system" } } },
}
const runtime = (spec: object = SPEC): ClusterRuntime =>
  ({ apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster", generation: 1, uid: "u-1" }, spec }) as ClusterRuntime
const nodes: NodeView[] = [
  { metadata: { name: "s1", labels: { pool: "system" } } },
  { metadata: { name: "g1", labels: { pool: "gpu", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3" } } },
]

let recipeJson: string
let bundleTree: BundleFiles
let snapshotNoCluster: string
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), "resolver-comp-"))
  const bin = aicrBinary(VERSION)
  const env = { PATH: process.env.PATH ?? "", HOME: dir, KUBECONFIG: join(dir, "none") }
  execFileSync(
    bin,
    [
      "recipe",
      "--service",
      "eks",
      "--accelerator",
      "h100",
      "--os",
      "ubuntu",
      "--intent",
      "training",
      "--platform",
      "kubeflow",
      "--format",
      "json",
      "--output",
      join(dir, "r.json"),
    ],
    { env, stdio: "ignore" },
  )
  recipeJson = readFileSync(join(dir, "r.json"), "utf8")
  execFileSync(bin, ["bundle", "--recipe", join(dir, "r.json"), "--output", join(dir, "b"), "--system-node-selector", "pool=system"], {
    env,
    cwd: dir,
    stdio: "ignore",
  })
  const files: Record<string, string> = {}
  const modes: Record<string, number> = {}
  const walk = (d: string) =>
    readdirSync(d).forEach((n) => {
      const p = join(d, n)
      if (statSync(p).isDirectory()) return walk(p)
      files[relative(join(dir, "b"), p)] = readFileSync(p, "utf8")
      modes[relative(join(dir, "b"), p)] = statSync(p).mode & 0o777
    })
  walk(join(dir, "b"))
  bundleTree = { files, modes }
  execFileSync(bin, ["snapshot", "--output", join(dir, "s.yaml")], { env: { ...env, AICR_AGENT_MODE: "true", NODE_NAME: "g1" }, stdio: "ignore" })
  snapshotNoCluster = readFileSync(join(dir, "s.yaml"), "utf8")
}, 60_000)

const DIGEST = `sha256:${"ab".repeat(32)}`

const setup = (opts: { spec?: object; settings?: Partial<ResolverSettings>; pull?: () => Effect.Effect<BundleFiles, BundlePullError> } = {}) => {
  const fake = makeFakeKube({ listMapKeys: { "ClusterRuntime.operator.aicr.run": { "status.conditions": "type" } } })
  fake.seed(ClusterRuntimeKind, runtime(opts.spec))
  const pulls: string[] = []
  const store = {
    pull: (ref: string) => (pulls.push(ref), opts.pull ? opts.pull() : Effect.succeed(bundleTree)),
    credential: () => Effect.succeed('{"auths":{}}'),
  }
  const events = eventRecorderLayer({ controller: "operator.aicr.run/resolver", instance: "test" }).pipe(Layer.provide(fake.layer))
  const run = reconcile("cluster").pipe(
    Effect.provide(Layer.mergeAll(fake.layer, events)),
    Effect.provideService(ResolverConfig, settings(opts.settings)),
    Effect.provideService(Nodes, nodesOf(nodes)),
    Effect.provideService(BundleStore, store),
    Effect.exit,
  )
  const rt = () => fake.peek<ClusterRuntime>(ClusterRuntimeKind, "cluster")!
  const condition = (type: string) => rt().status?.conditions?.find((c) => c.type === type)
  const jobs = () =>
    fake
      .writesTo(Core.Job)
      .filter((w) => w.verb === "create")
      .map((w) => w.key)
  /** Plays the Job controller and kubelet: the Job ends, its pod records the exit, AICR's writer fills the ConfigMap. */
  const finish = (key: string, exitCode: number, message: string, output?: string) => {
    const [ns, name] = key.split("/") as [string, string]
    const job = fake.peek<KubeObject & { spec: object }>(Core.Job, key)!
    fake.seed(Core.Job, {
      ...job,
      status:
        exitCode === 0
          ? { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }
          : { failed: 1, conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] },
    } as KubeObject)
    fake.seed(Core.Pod, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${name}-x`, namespace: ns, labels: { "job-name": name } },
      status: { phase: exitCode === 0 ? "Succeeded" : "Failed", containerStatuses: [{ name: "aicr", state: { terminated: { exitCode, message } } }] },
    } as KubeObject)
    if (output !== undefined) {
      const cm = fake.peek<KubeObject>(Core.ConfigMap, key)!
      fake.seed(Core.ConfigMap, { ...cm, data: { "snapshot.json": output, format: "json", timestamp: "t" } } as KubeObject)
    }
  }
  return { fake, run, rt, condition, jobs, finish, pulls }
}
const at = <A, E, R>(body: Effect.Effect<A, E, R>) => TestClock.setTime(T0).pipe(Effect.andThen(body))

describe("resolver reconcile", () => {
  it.effect("first visit: both conditions set; the recipe Job is created suspended, its output ConfigMap owned by it, then resumed", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.condition("Discovered")).toMatchObject({ status: "True", reason: "NodeGroupsDiscovered", observedGeneration: 1 })
        expect(t.condition("Resolved")).toMatchObject({ status: "False", reason: "Resolving" })
        const [key] = t.jobs()
        expect(key).toMatch(/^aicr-system\/aicr-recipe-[0-9a-f]{12}$/)
        const job = t.fake.peek<
          KubeObject & {
            spec: {
              suspend: boolean
              backoffLimit: number
              activeDeadlineSeconds: number
              ttlSecondsAfterFinished: number
              template: { spec: { serviceAccountName: string; containers: Array<{ image: string; args: string[] }> } }
            }
          }
        >(Core.Job, key!)!
        expect(job.spec).toMatchObject({ suspend: false, backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 })
        expect(job.spec.template.spec.serviceAccountName).toBe("aicr-jobs")
        expect(job.spec.template.spec.containers[0]!.image).toBe(`ghcr.io/nvidia/aicr:${VERSION}`)
        expect(job.spec.template.spec.containers[0]!.args).toEqual([
          "recipe",
          "--service",
          "eks",
          "--accelerator",
          "h100",
          "--os",
          "ubuntu",
          "--intent",
          "training",
          "--platform",
          "kubeflow",
          "--format",
          "json",
          "--output",
          `cm://${key!.replace("/", "/")}`,
        ])
        const out = t.fake.peek<KubeObject & { metadata: { ownerReferences: Array<{ kind: string; name: string }> } }>(Core.ConfigMap, key!)!
        expect(out.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: "Job", name: key!.split("/")[1] })])
      }),
    ),
  )

  it.effect("recipe then bundle then the content ConfigMap and Resolved=True; an idle pass writes nothing", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const recipeKey = t.jobs()[0]!
        t.finish(recipeKey, 0, "", recipeJson)
        yield* t.run
        const bundleKey = t.jobs()[1]!
        expect(bundleKey).toMatch(/\/aicr-bundle-/)
        const bundleJob = t.fake.peek<KubeObject & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }>(Core.Job, bundleKey)!
        expect(bundleJob.spec.template.spec.containers[0]!.args).toEqual([
          "bundle",
          "--recipe",
          `cm://${recipeKey}`,
          "--deployer",
          "helm",
          "--system-node-selector",
          "pool=system",
          "--output",
          expect.stringMatching(/^oci:\/\/registry\.example\/aicr\/cluster\/bundles\/cluster:aicr-[0-9a-f]{32}$/),
          "--image-refs",
          "/dev/termination-log",
        ])
        expect(t.fake.peek(Core.Secret, `${bundleKey}-registry`)).toMatchObject({ metadata: { ownerReferences: [expect.objectContaining({ kind: "Job" })] } })
        t.finish(bundleKey, 0, `${DIGEST}\n`)
        yield* t.run
        expect(t.pulls).toEqual([expect.stringMatching(new RegExp(`^registry\\.example/aicr/cluster/bundles/cluster@${DIGEST}$`))])
        const r = t.rt()
        // The development allowance that lets this 0.x AICR through is named in the message, never silent.
        expect(t.condition("Resolved")).toMatchObject({
          status: "True",
          reason: "InputsResolved",
          message: expect.stringMatching(
            /into 13 releases; AICR \S+ is outside the supported range >=1\.0\.0,<2\.0\.0, allowed for development only \(aicr\.allowUnsupportedVersion\)$/,
          ),
        })
        expect(r.status?.resolution).toMatchObject({ releases: 13, aicr: { version: VERSION }, resolvedAt: "2026-12-02T10:00:00Z" })
        const content = t.fake.peek<KubeObject & { immutable: boolean; data: Record<string, string> }>(
          Core.ConfigMap,
          `${NS}/${r.status!.resolution!.contentConfigMap}`,
        )!
        expect(content.immutable).toBe(true)
        expect(content.data["recipe.json"]).toBe(recipeJson)
        expect(JSON.parse(content.data["values.json"]!).files).toEqual(bundleTree.files)
        // The bundle argv the Job ran, placement flags included, for the plan's record (`kubectl aicr reproduce`).
        expect(JSON.parse(content.data["flags.json"]!)).toEqual(bundleJob.spec.template.spec.containers[0]!.args)
        t.fake.clearWrites()
        yield* t.run
        expect(t.fake.writes).toEqual([])
      }),
    ),
  )

  it.effect("AICR's own failure line → its reason, in the message; the Job stays (terminal)", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const key = t.jobs()[0]!
        t.finish(
          key,
          8,
          '{"time":"t","level":"ERROR","msg":"command failed","module":"aicr","version":"0.11.1","error":"[INTERNAL] error building recipe: [NOT_FOUND] recipe data not found","exitCode":8}',
        )
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "AICRNotFound",
          message: expect.stringMatching(
            /^Recipe Job aicr-system\/aicr-recipe-\w+ exited 8: \[INTERNAL\] error building recipe: \[NOT_FOUND\] recipe data not found$/,
          ),
        })
        expect(t.fake.peek(Core.Job, key)).toBeDefined()
      }),
    ),
  )

  it.effect("a transient AICR failure: Resolving with the cause, the Job deleted for a retry, the reconcile fails for backoff", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const key = t.jobs()[0]!
        t.finish(key, 6, '{"level":"ERROR","msg":"command failed","error":"[SERVICE_UNAVAILABLE] failed to reach the API server","exitCode":6}')
        const exit = yield* t.run
        expect(Exit.isFailure(exit)).toBe(true)
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "Resolving",
          message: expect.stringMatching(/retrying after a transient failure: .*\[SERVICE_UNAVAILABLE\]/),
        })
        expect(t.fake.peek(Core.Job, key)).toBeUndefined()
      }),
    ),
  )

  it.effect("a finished recipe Job whose output ConfigMap is gone: Resolving (output lost, not a bad artifact), the Job run again", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        const key = t.jobs()[0]!
        t.finish(key, 0, "", recipeJson)
        yield* t.fake.kube.delete(Core.ConfigMap, key)
        const exit = yield* t.run
        expect(Exit.isFailure(exit)).toBe(true)
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "Resolving",
          message: expect.stringContaining(`completed, but its output ConfigMap ${key} is gone; running it again`),
        })
        expect(t.fake.peek(Core.Job, key)).toBeUndefined()
        // The next pass runs the recipe Job again, with a fresh output ConfigMap owned by it.
        yield* t.run
        expect(t.jobs()).toEqual([key, key])
        expect(t.fake.peek(Core.ConfigMap, key)).toMatchObject({ metadata: { ownerReferences: [expect.objectContaining({ kind: "Job" })] } })
        t.finish(key, 0, "", recipeJson)
        yield* t.run
        expect(t.jobs()[2]).toMatch(/\/aicr-bundle-/)
      }),
    ),
  )

  it.effect("a release outside the allowed namespaces: NamespaceNotAllowed naming each", () =>
    at(
      Effect.gen(function* () {
        const t = setup({
          settings: {
            allowedNamespaces: ["cert-manager", "gpu-operator", "kube-system", "kubeflow", "monitoring", "nvidia-dra-driver", "nvsentinel", "skyhook"],
          },
        })
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson)
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "NamespaceNotAllowed",
          message: expect.stringMatching(/1 release\(s\) outside the allowed namespaces .*: kai-scheduler \(kai-scheduler\)$/),
        })
        expect(t.jobs().filter((k) => k.includes("bundle"))).toEqual([])
      }),
    ),
  )

  it.effect("a truncated or forged recipe output is AICRArtifactUnsupported, never a crash", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson.slice(0, 500))
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({ status: "False", reason: "AICRArtifactUnsupported", message: expect.stringMatching(/does not parse/) })
      }),
    ),
  )

  it.effect("registry down while reading the bundle back: Resolving, retried", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ pull: () => Effect.fail(new BundlePullError({ kind: "transient", message: "registry.example is unavailable (ECONNREFUSED)" })) })
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson)
        yield* t.run
        t.finish(t.jobs()[1]!, 0, `${DIGEST}\n`)
        const exit = yield* t.run
        expect(Exit.isFailure(exit)).toBe(true)
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "Resolving",
          message: expect.stringMatching(/retrying after a transient failure: \[SERVICE_UNAVAILABLE\] registry.example is unavailable/),
        })
      }),
    ),
  )

  it.effect("a bundle too large for its content ConfigMap: ContentTooLarge", () =>
    at(
      Effect.gen(function* () {
        const huge: BundleFiles = { files: { ...bundleTree.files, "README.md": "x".repeat(2 * 1024 * 1024) }, modes: bundleTree.modes }
        const sums = huge.files["checksums.txt"]!.split("\n")
          .filter((l) => !l.endsWith("  README.md"))
          .join("\n")
        const t = setup({ pull: () => Effect.succeed({ ...huge, files: { ...huge.files, "checksums.txt": sums } }) })
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson)
        yield* t.run
        t.finish(t.jobs()[1]!, 0, `${DIGEST}\n`)
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({ status: "False", reason: "ContentTooLarge" })
      }),
    ),
  )

  it.effect("the accelerated group: a snapshot Job on its first node; a snapshot without facts is SnapshotIncomplete", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ spec: { ...SPEC, placement: { ...SPEC.placement, accelerated: { nodeSelector: { pool: "gpu" } } } } })
        yield* t.run
        expect(t.condition("Discovered")).toMatchObject({ status: "False", reason: "Discovering", message: expect.stringMatching(/on node g1: started$/) })
        const key = t.jobs()[0]!
        const job = t.fake.peek<
          KubeObject & {
            spec: {
              template: { spec: { serviceAccountName: string; hostPID: boolean; affinity: object; containers: Array<{ env: Array<{ name: string }> }> } }
            }
          }
        >(Core.Job, key)!
        expect(job.spec.template.spec).toMatchObject({ serviceAccountName: "aicr-agent", hostPID: true })
        expect(JSON.stringify(job.spec.template.spec.affinity)).toContain('"matchFields":[{"key":"metadata.name","operator":"In","values":["g1"]}]')
        expect(job.spec.template.spec.containers[0]!.env.map((e) => e.name)).toEqual(
          expect.arrayContaining(["AICR_AGENT_MODE", "NODE_NAME", "AICR_MAX_NODES_PER_ENTRY"]),
        )
        // The real agent's output with no cluster to read (no K8s facts).
        t.finish(key, 0, "", snapshotNoCluster)
        yield* t.run
        expect(t.condition("Discovered")).toMatchObject({
          status: "False",
          reason: "SnapshotIncomplete",
          message: expect.stringMatching(/the snapshot lacks K8s\.server\.version/),
        })
        expect(t.condition("Resolved")).toMatchObject({ status: "False", reason: "SnapshotIncomplete" })
      }),
    ),
  )

  it.effect("the version gate: a 0.x AICR without the development allowance is AICRVersionMismatch with the range, and no Job runs", () =>
    at(
      Effect.gen(function* () {
        const caps = capabilitiesOf(VERSION)!
        const t = setup({
          spec: { ...SPEC, placement: { ...SPEC.placement, accelerated: { nodeSelector: { pool: "gpu" } } } },
          settings: { gate: versionGate(caps, { prerelease: false, outsideRange: false }) },
        })
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        const message = `AICR ${caps.version} is outside the supported range >=1.0.0,<2.0.0: pin a supported release (chart aicr.version); a development control plane may allow it with aicr.allowUnsupportedVersion (resolver --allow-unsupported-aicr)`
        expect(t.condition("Resolved")).toMatchObject({ status: "False", reason: "AICRVersionMismatch", message })
        expect(t.condition("Discovered")).toMatchObject({ status: "False", reason: "AICRVersionMismatch", message })
        expect(t.jobs()).toEqual([])
        expect(t.fake.writesTo(Core.Event).map((w) => w.body as { type: string; reason: string })).toEqual([
          expect.objectContaining({ type: "Warning", reason: "AICRVersionMismatch" }),
        ])
      }),
    ),
  )

  it.effect("the version gate: a 1.x prerelease without AllowPrereleaseAICR is AICRVersionMismatch naming the allowance", () =>
    at(
      Effect.gen(function* () {
        const caps = capabilitiesOf("v1.2.0-rc0")!
        const t = setup({ settings: { caps, version: "v1.2.0-rc0", gate: versionGate(caps, { prerelease: false, outsideRange: false }) } })
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "AICRVersionMismatch",
          message: expect.stringMatching(/^AICR 1\.2\.0-rc0 is a prerelease: .*--allow-prerelease-aicr\)$/),
        })
        expect(t.jobs()).toEqual([])
      }),
    ),
  )

  it.effect("spec.paused: no AICR Job starts (Resolving, not a stall, no Warning) until it is cleared; then the resolution runs", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ spec: { ...SPEC, paused: true } })
        expect(yield* t.run).toEqual(Exit.succeed({ _tag: "OnChange" }))
        expect(t.condition("Discovered")).toMatchObject({ status: "True", reason: "NodeGroupsDiscovered" })
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "Resolving",
          message: expect.stringMatching(/^spec\.paused is set: input [0-9a-f]{12} is not resolved until it is cleared$/),
        })
        expect(t.jobs()).toEqual([])
        expect(t.fake.writesTo(Core.Event)).toEqual([])
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { paused: false } } })
        yield* t.run
        expect(t.jobs()).toEqual([expect.stringMatching(/\/aicr-recipe-/)])
      }),
    ),
  )

  it.effect("spec.paused: a resolved runtime stays Resolved=True; a new input waits, and the accelerated group's snapshot is not taken", () =>
    at(
      Effect.gen(function* () {
        const t = setup()
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson)
        yield* t.run
        t.finish(t.jobs()[1]!, 0, `${DIGEST}\n`)
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({ status: "True", reason: "InputsResolved" })
        const resolution = t.rt().status?.resolution
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { paused: true } } })
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({ status: "True", reason: "InputsResolved", observedGeneration: 2 })
        // A new intent while paused: nothing runs, the published resolution stays.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", { type: "merge", body: { spec: { intent: "inference" } } })
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "Resolving",
          message: expect.stringMatching(/^spec\.paused is set: input [0-9a-f]{12} is not resolved until it is cleared$/),
        })
        expect(t.rt().status?.resolution).toEqual(resolution)
        expect(t.jobs()).toHaveLength(2)
        // An accelerated group, still paused: no snapshot agent either.
        yield* t.fake.kube.patch(ClusterRuntimeKind, "cluster", {
          type: "merge",
          body: { spec: { placement: { ...SPEC.placement, accelerated: { nodeSelector: { pool: "gpu" } } } } },
        })
        yield* t.run
        expect(t.condition("Discovered")).toMatchObject({
          status: "False",
          reason: "Discovering",
          message: "spec.paused is set: no snapshot is taken on node g1 until it is cleared",
        })
        expect(t.jobs()).toHaveLength(2)
        expect(t.fake.writesTo(Core.Event)).toEqual([])
      }),
    ),
  )

  it.effect("an override the rendered bundle lacks is OverridePathUnknown; a --set AICR refuses is InvalidOverride; no content either way", () =>
    at(
      Effect.gen(function* () {
        // The bundle the real AICR rendered for an unknown component key: the same as without it.
        const t = setup({ spec: { ...SPEC, overrides: [{ path: "nosuchcomponent:foo.bar", value: "1" }] } })
        yield* t.run
        t.finish(t.jobs()[0]!, 0, "", recipeJson)
        yield* t.run
        t.finish(t.jobs()[1]!, 0, `${DIGEST}\n`)
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "OverridePathUnknown",
          message: expect.stringMatching(/did not apply 1 override\(s\): nosuchcomponent:foo\.bar=1: no release is named "nosuchcomponent"/),
        })
        expect(t.fake.writesTo(Core.ConfigMap).filter((w) => w.verb === "create" && w.key.includes("aicr-content-"))).toEqual([])

        const u = setup({ spec: { ...SPEC, overrides: [{ path: "gpuoperator:driver.version", value: "" }] } })
        yield* u.run
        u.finish(u.jobs()[0]!, 0, "", recipeJson)
        yield* u.run
        // The real v0.11.1's failure line for an empty --set value.
        u.finish(
          u.jobs()[1]!,
          2,
          '{"level":"ERROR","msg":"command failed","error":"[INVALID_REQUEST] invalid bundle command options: [INVALID_REQUEST] invalid --set flag: [INVALID_REQUEST] invalid format \'gpuoperator:driver.version=\': path and value cannot be empty","exitCode":2}',
        )
        yield* u.run
        expect(u.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "InvalidOverride",
          message: expect.stringMatching(
            /^AICR refused the override gpuoperator:driver\.version=: Bundle Job aicr-system\/aicr-bundle-\w+ exited 2: .*path and value cannot be empty$/,
          ),
        })
      }),
    ),
  )

  it.effect("intent gaming: AICRInvalidRequest naming it and the accepted values, no Job", () =>
    at(
      Effect.gen(function* () {
        const t = setup({ spec: { ...SPEC, intent: "gaming" } })
        yield* t.run
        expect(t.condition("Resolved")).toMatchObject({
          status: "False",
          reason: "AICRInvalidRequest",
          message: `spec.intent "gaming" is not one AICR ${capabilitiesOf(VERSION)!.version} accepts (inference, training)`,
        })
        expect(t.jobs()).toEqual([])
      }),
    ),
  )
})
