// The ecr-credential-refresher's memory as a user pays for it (architecture.md §7: budget ≤ 80 MiB per idle
// controller), after its first pass: its shipped bundle started as the image starts it (packages/runtime/bench/idle.ts:
// NODE_ENV=production, metrics and health on, the environment the chart gives it, values.yaml `ecrCredentialRefresher`:
// NODE_OPTIONS, MALLOC_ARENA_MAX; BENCH_NODE_FLAGS replaces that environment), with `static` (the AWS SDK never
// loads) and with `aws` after minting a token from the local AWS (moto); then VmRSS every 5 s over BENCH_IDLE_MINUTES
// (default 5), no forced GC, and apart what a full GC leaves. Also the wall time from the start to the first
// `RegistryCredentialsReady=True` (with `aws`, the mint: in the bundle's mint process as shipped). Not a test: it
// prints one JSON line per provider.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/ecr-credential-refresher/bench/rss.bench.ts DIR. BENCH_REFRESHER_BUNDLE=<dir>/main.mjs measures a
// bundle built before (e.g. of an older commit) instead of building this tree's; BENCH_PROVIDERS="aws" measures one.
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { applyManifests, createNamespace, eventually, expectOk, kubeRequest, repoRoot, runningPlane, startAws } from "@aicr/testing/harness"
import { mib, procStatus, sampleIdle, shippedOrBenchFlags, startShipped } from "@aicr/runtime/bench/idle"
import { buildApp, summary } from "../../../hack/build-apps"
import { memoryEnvOf } from "../../../hack/local-operator"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: rss.bench.ts <harness dir>")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}`)
const IDLE_MINUTES = Number(process.env["BENCH_IDLE_MINUTES"] ?? 5)
const PROVIDERS = (process.env["BENCH_PROVIDERS"] ?? "static aws").split(" ").filter(Boolean) as Array<"static" | "aws">
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ECR_HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
const work = await mkdtemp(join(tmpdir(), "ecr-rss-"))
const nodeFlags = shippedOrBenchFlags(memoryEnvOf("ecr-credential-refresher"))
const entry =
  process.env["BENCH_REFRESHER_BUNDLE"] ??
  (await buildApp("ecr-credential-refresher", join(work, "dist")).then((b) => {
    console.error(summary(b).join("\n"))
    return b.entry
  }))
const template = readFileSync(join(repoRoot(), "charts", "aicr-operator", "files", "ecr-iam-policy.json"), "utf8")
const vars: Record<string, string> = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/rss", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }
const aws = await startAws({ policy: template.replace(/\$\{([A-Z_]+)\}/gu, (_, k: string) => vars[k] ?? "") })
await applyManifests(info, join(repoRoot(), "crds"))
const argocd = await createNamespace(info, "argocd-rss")
// One operator namespace per provider: the admin's docker-config Secret of `static` is not the refresher's to write.
const namespaces = { static: await createNamespace(info, "aicr-rss-static"), aws: await createNamespace(info, "aicr-rss-aws") }
await kubeRequest(info, { method: "DELETE", path: RUNTIME })
await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404)
await applyManifests(info, [
  { apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: { intent: "training", platform: "kubeflow" } },
])
const reason = async () =>
  (
    (expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get") as { status?: { conditions?: Array<{ type: string; reason: string }> } }).status
      ?.conditions ?? []
  ).find((c) => c.type === "RegistryCredentialsReady")?.reason

const measure = async (provider: "static" | "aws", want: string, env: Record<string, string>) => {
  await kubeRequest(info, { method: "PATCH", path: `${RUNTIME}/status`, body: { status: { conditions: [] } } })
  const t0 = performance.now()
  const shipped = startShipped(
    entry,
    [
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      `--log-level=${process.env["BENCH_LOG_LEVEL"] ?? "warn"}`,
      "--registry",
      `oci://${info.registry}/aicr/rss`,
      "--auth-provider",
      provider,
      "--ecr-registry",
      ECR_HOST,
      "--engine-namespace",
      argocd,
      "--operator-namespace",
      namespaces[provider],
    ],
    { workDir: work, nodeFlags, stdio: ["ignore", "inherit", "inherit"], env },
  )
  const pid = shipped.child.pid!
  try {
    let peakDuringPass = 0
    let seen: string | undefined
    await eventually(
      async () => {
        peakDuringPass = Math.max(peakDuringPass, procStatus(pid, "VmRSS"))
        seen = await reason()
        return seen === want
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `RegistryCredentialsReady ${want} (last seen: ${seen ?? "none"})` },
    )
    const firstPassSeconds = (performance.now() - t0) / 1000
    const idle = await sampleIdle(shipped, { minutes: IDLE_MINUTES })
    console.log(
      JSON.stringify({
        what: `ecr-credential-refresher bundle, --auth-provider ${provider}, after its first pass`,
        bundle: entry,
        nodeFlags,
        firstPass: { seconds: +firstPassSeconds.toFixed(2), reason: want },
        rssPeakDuringPassMiB: mib(peakDuringPass),
        idleAfterPass: idle,
      }),
    )
  } finally {
    shipped.child.kill("SIGKILL")
    await new Promise((r) => shipped.child.once("exit", r))
  }
}

try {
  // static needs the admin's docker-config Secret: one for the local registry.
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/dockerconfigjson",
      metadata: { name: "aicr-registry-docker-config", namespace: namespaces.static },
      data: {
        ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { [info.registry]: { auth: Buffer.from("a:b").toString("base64") } } })).toString("base64"),
      },
    },
  ])
  const keys = aws.fixtures.users.refresher
  for (const provider of PROVIDERS)
    if (provider === "static") await measure("static", "CredentialsPresent", {})
    else
      await measure("aws", "TokenRefreshed", {
        ...(aws.env as Record<string, string>),
        AWS_ACCESS_KEY_ID: keys.accessKeyId,
        AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
      })
} finally {
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await aws.stop()
  await rm(work, { recursive: true, force: true })
}
process.exit(0)
