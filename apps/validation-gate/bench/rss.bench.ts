// The validation gate's memory as a user pays for it, after its work: its shipped bundle as its own process, started
// as the image starts it (packages/runtime/bench/idle.ts: NODE_ENV=production, metrics and health on, the chart's environment),
// on a fresh local control plane whose process kubelet runs the real AICR v0.11.1 snapshot agent, `aicr validate` and
// its deployment validator; one validation run of four checks with the evidence signed by a KMS key (moto as the local
// KMS) and pushed to the local registry; then VmRSS sampled every 5 s over BENCH_IDLE_MINUTES (default 5), no forced
// GC, and apart what a full GC leaves. The world around the gate is played as in apps/validation-gate/test/gate.int.test.ts
// (plan and content ConfigMaps, an approved rollout whose steps are done, the launcher's ServiceAccount and binding,
// the GPU Operator workload the checks read). Not a test: it prints one JSON line.
// Run: npx tsx apps/validation-gate/bench/rss.bench.ts. BENCH_GATE_BUNDLE=<dir>/main.mjs measures a bundle built
// before (e.g. of an older commit) instead of building this tree's. The gate runs with the environment the chart gives
// it (values.yaml `validationGate`: NODE_OPTIONS, MALLOC_ARENA_MAX) and its bundle's own V8 flags; BENCH_NODE_FLAGS
// replaces that environment (node flags, and `NAME=value` variables, e.g. `AICR_V8_FLAGS=` for none).
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { setTimeout as sleep } from "node:timers/promises"
import { ANNOTATION_EDITED_BY, contentConfigMapName, desiredStateDigest, type Plan, sha256 } from "@aicr/api"
import { digestOf, EMPTY_JSON, MediaType, OciClient } from "@aicr/oras"
import { CreateAliasCommand, CreateKeyCommand, KMSClient } from "@aws-sdk/client-kms"
import { aicrBinary, applyManifests, eventually, expectOk, kubeRequest, readVersions, startAws, startControlPlane } from "@aicr/testing/harness"
import { applyPlan, applyStatusAs, get, ROLLOUTS, RUNTIME, setApproved } from "@aicr/testing/world"
import { buildApp } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"
import { mib, procStatus, sampleIdle, shippedOrBenchFlags, startShipped } from "@aicr/runtime/bench/idle"

const IDLE_MINUTES = Number(process.env["BENCH_IDLE_MINUTES"] ?? 5)
const { aicr: AICR } = readVersions()
const IMAGE = `ghcr.io/nvidia/aicr:${AICR}`
const NS = "aicr-system"
const VNS = "aicr-validation"
const LAUNCHER = "aicr-validation"
const PREFIX = "aicr/cluster"
const CHECKS = ["operator-health", "expected-resources", "gpu-operator-version", "check-nvidia-smi"]
const ALIAS = "alias/aicr-evidence"
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z")
const work = mkdtempSync(join(tmpdir(), "validation-gate-bench-"))

const plane = await startControlPlane({ fresh: true })
const { info } = plane
const aws = await startAws({
  policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "kms:*", Resource: "*" }] }),
  enforceIam: false,
})
try {
  await applyManifests(info, join(process.cwd(), "crds"))
  await applyManifests(
    info,
    [NS, VNS, "gpu-operator"].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
  )
  // The signing key, in the local KMS.
  const credentials = { accessKeyId: "AKIAVALIDATIONGATE01", secretAccessKey: "local-secret" }
  const kms = new KMSClient({ endpoint: aws.endpoint, region: "us-east-1", credentials })
  const key = await kms.send(new CreateKeyCommand({ KeySpec: "ECC_NIST_P256", KeyUsage: "SIGN_VERIFY", Description: "aicr evidence" }))
  await kms.send(new CreateAliasCommand({ AliasName: ALIAS, TargetKeyId: key.KeyMetadata!.KeyId! }))
  kms.destroy()
  // The runtime, its discovery, the launcher (the chart's validation.enabled for AICR < 1.1) and the GPU Operator.
  await applyManifests(info, [
    {
      apiVersion: "operator.aicr.run/v1alpha1",
      kind: "ClusterRuntime",
      metadata: { name: "cluster", annotations: { [ANNOTATION_EDITED_BY]: "alice" } },
      spec: {
        intent: "training",
        platform: "kubeflow",
        criteria: { service: "eks", accelerator: "h100", os: "ubuntu" },
        validation: { deployment: "Required" },
      },
    },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: LAUNCHER, namespace: VNS } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${VNS}-launcher` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: LAUNCHER, namespace: VNS }],
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "gpu-operator", namespace: "gpu-operator", labels: { app: "gpu-operator", "app.kubernetes.io/version": "v25.10.1" } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "gpu-operator" } },
        template: {
          metadata: { labels: { app: "gpu-operator" } },
          spec: {
            nodeName: "kwok-system-0",
            tolerations: [{ operator: "Exists" }],
            containers: [{ name: "gpu-operator", image: "nvcr.io/nvidia/gpu-operator:v25.10.1" }],
          },
        },
      },
    },
  ])
  const uid: string = (await get(info, RUNTIME)).metadata.uid
  await applyStatusAs(info, "aicr-resolver", {
    discovery: {
      accelerated: { nodeCount: 4, nodes: ["kwok-gpu-0", "kwok-gpu-1", "kwok-gpu-2", "kwok-gpu-3"] },
      system: { nodeCount: 2, nodes: ["kwok-system-0", "kwok-system-1"] },
    },
  })
  // The real recipe for the sample runtime, restricted to the four checks; a small bundle as the evidence's subject.
  const out = join(work, "recipe.json")
  await promisify(execFile)(
    aicrBinary(AICR),
    [
      "recipe",
      "--service",
      "eks",
      "--accelerator",
      "h100",
      "--intent",
      "training",
      "--os",
      "ubuntu",
      "--platform",
      "kubeflow",
      "--format",
      "json",
      "--output",
      out,
    ],
    { env: { PATH: process.env["PATH"], HOME: work } },
  )
  const recipe = JSON.parse(readFileSync(out, "utf8"))
  recipe.validation.deployment.checks = CHECKS
  const recipeJson = JSON.stringify(recipe)
  const client = new OciClient()
  const repo = `${info.registry}/${PREFIX}/bundles/cluster`
  const layer = Buffer.from("bundle files\n")
  await client.pushBlob(repo, layer, { digest: digestOf(layer), size: layer.length })
  await client.pushBlob(repo, EMPTY_JSON.bytes, { digest: EMPTY_JSON.descriptor.digest, size: 2 })
  await client.pushManifest(`${repo}:input`, {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    artifactType: "application/vnd.aicr.bundle.v1",
    config: { mediaType: MediaType.OciEmpty, digest: EMPTY_JSON.descriptor.digest, size: 2 },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: digestOf(layer), size: layer.length }],
  })
  await client.close()
  // The plan and content ConfigMaps the planner writes.
  const engine = { kind: "argocd" as const, project: "aicr" }
  const releases = [
    {
      name: "gpu-operator",
      namespace: "gpu-operator",
      order: 0,
      dependsOn: [],
      chart: { ref: `${info.registry}/${PREFIX}/charts/gpu-operator:v25.10.1`, digest: sha256("chart") },
      values: { digest: sha256("values") },
    },
  ]
  const digest = desiredStateDigest({ engine, releases })
  const content = contentConfigMapName(digest)
  const plan: Plan = {
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "Plan",
    runtimeUID: uid,
    createdAt: iso(Date.now()),
    source: "Resolution",
    desiredStateDigest: digest,
    inputDigest: sha256("input"),
    aicr: { version: AICR, image: IMAGE },
    flags: ["--deployer", "helm"],
    bundle: { ref: `${repo}:input` },
    engine,
    releases,
    content: [{ key: "recipe.json", configMap: content, digest: sha256(recipeJson) }],
  }
  await applyPlan(info, NS, plan, recipeJson)

  // The gate, as it ships, with the key; AWS credentials from the environment (the SDK's standard chain).
  const entry = process.env["BENCH_GATE_BUNDLE"] ?? (await buildApp("validation-gate", join(work, "dist"))).entry
  // The environment the chart gives the gate (values.yaml `validationGate`), unless BENCH_NODE_FLAGS replaces it.
  const nodeFlags = shippedOrBenchFlags(memoryEnvOf("validation-gate"))
  const gate = startShipped(
    entry,
    [
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--log-level=info",
      "--registry",
      `oci://${info.registry}/${PREFIX}`,
      `--plain-http=${info.registry}`,
      "--operator-namespace",
      NS,
      "--validation-namespace",
      VNS,
      "--launcher-service-account",
      LAUNCHER,
      "--signing-key",
      `awskms:///${ALIAS}`,
    ],
    {
      workDir: work,
      nodeFlags,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...aws.env, AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey, AWS_REGION: "us-east-1" } as Record<
        string,
        string
      >,
    },
  )
  const pid = gate.child.pid!
  await sleep(15_000)
  const idleBefore = procStatus(pid, "VmRSS")

  // An approved Install rollout whose one step is done, as the approval-guard and the step-executor report it.
  const name = "bench-validation"
  const now = Date.now()
  expectOk(
    await kubeRequest(info, {
      method: "POST",
      path: ROLLOUTS,
      body: {
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "RuntimeRollout",
        metadata: { name },
        spec: {
          runtimeUID: uid,
          toDigest: digest,
          kind: "Install",
          deadline: iso(now + 3_600_000),
          requiresApproval: true,
          steps: [{ release: "gpu-operator", namespace: "gpu-operator", action: "Install" }],
          approval: {
            approvedBy: "bob",
            groups: ["aicr-approvers"],
            reason: "validation-gate bench",
            approvedAt: iso(now),
            expiresAt: iso(now + 3_000_000),
            toDigest: digest,
          },
        },
      },
    }),
    `create rollout ${name}`,
  )
  await setApproved(info, name, "True", "ApprovedByUser", "Approved by bob")
  const r = await get(info, `${ROLLOUTS}/${name}`)
  await applyStatusAs(
    info,
    "aicr-step-executor",
    {
      conditions: [
        {
          type: "Progressing",
          status: "True",
          reason: "StepsCompleted",
          message: "Every step is ready",
          observedGeneration: r.metadata.generation,
          lastTransitionTime: iso(Date.now()),
        },
      ],
    },
    { kind: "RuntimeRollout", name },
  )
  const t0 = performance.now()
  let peakDuringRun = 0
  const validated = await eventually(
    async () => {
      peakDuringRun = Math.max(peakDuringRun, procStatus(pid, "VmRSS"))
      const c = (await get(info, `${ROLLOUTS}/${name}`)).status?.conditions?.find((x: { type: string }) => x.type === "Validated")
      return c?.reason !== undefined && c.reason !== "Validating" && c.reason !== "AwaitingSteps" && c
    },
    { timeoutMs: 600_000, intervalMs: 250, what: `rollout ${name} Validated` },
  )
  const runSeconds = (performance.now() - t0) / 1000
  const room = (await get(info, `${ROLLOUTS}/${name}`)).status?.validation ?? {}
  // With a signing key, a pass is signed evidence (else EvidenceUnsigned).
  if (validated.reason !== "ValidationPassed") console.error(`the run did not pass: ${validated.reason}: ${validated.message} ${JSON.stringify(room)}`)
  await sleep(10_000)
  const idle = await sampleIdle(gate, { minutes: IDLE_MINUTES })
  gate.child.kill("SIGKILL")
  console.log(
    JSON.stringify({
      what: "validation-gate bundle after one signed validation run (4 checks)",
      bundle: entry,
      nodeFlags,
      run: { seconds: +runSeconds.toFixed(1), validated: `${validated.status}/${validated.reason}`, evidence: room.evidenceRef },
      rssBeforeRunMiB: mib(idleBefore),
      rssPeakDuringRunMiB: mib(peakDuringRun),
      idleAfterRun: idle,
    }),
  )
} finally {
  await aws.stop()
  await plane.stop()
}
process.exit(0)
