// Idle RSS of the bundled ecr-credential-refresher (architecture.md §7: budget ≤ 80 MiB per idle controller), after
// its first pass: with `static` (the AWS SDK never loads) and with `aws` after minting a token from the local AWS
// (moto; the SDK chunk is loaded). Not a test: it prints numbers.
// Needs a running local control plane: npx tsx packages/testing/src/harness/cli.ts up --detach --dir DIR
// Run: npx tsx apps/ecr-credential-refresher/bench/rss.bench.ts DIR
import { spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { applyManifests, createNamespace, eventually, expectOk, kubeRequest, repoRoot, runningPlane, startAws } from "@aicr/testing/harness"
import { buildApp, summary } from "../../../hack/build-apps"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: rss.bench.ts <harness dir>")
const info = await runningPlane(dir)
if (info === undefined) throw new Error(`no healthy control plane in ${dir}`)
const MiB = 1024 * 1024
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ECR_HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
const work = await mkdtemp(join(tmpdir(), "ecr-rss-"))
const built = await buildApp("ecr-credential-refresher", join(work, "dist"))
console.log(summary(built).join("\n"))
const probe = join(work, "rss-probe.mjs")
writeFileSync(
  probe,
  "process.on('SIGUSR2', () => { globalThis.gc(); const m = process.memoryUsage(); process.stderr.write(`RSS ${m.rss} ${m.heapUsed}\\n`) })\n",
)
const template = readFileSync(join(repoRoot(), "charts", "aicr-operator", "files", "ecr-iam-policy.json"), "utf8")
const vars: Record<string, string> = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/rss", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }
const aws = await startAws({ policy: template.replace(/\$\{([A-Z_]+)\}/gu, (_, k: string) => vars[k] ?? "") })
await applyManifests(info, join(repoRoot(), "crds"))
const argocd = await createNamespace(info, "argocd-rss")
const ns = await createNamespace(info, "aicr-rss")
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

const measure = async (provider: "static" | "aws", want: string, env: Record<string, string | undefined>) => {
  await kubeRequest(info, { method: "PATCH", path: `${RUNTIME}/status`, body: { status: { conditions: [] } } })
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      probe,
      built.entry,
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=warn",
      "--registry",
      `oci://${info.registry}/aicr/rss`,
      "--auth-provider",
      provider,
      "--ecr-registry",
      ECR_HOST,
      "--engine-namespace",
      argocd,
      "--operator-namespace",
      ns,
    ],
    { stdio: ["ignore", "inherit", "pipe"], env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)) },
  )
  let reported: [number, number] | undefined
  child.stderr.on("data", (d: Buffer) => {
    const m = /RSS (\d+) (\d+)/u.exec(d.toString())
    if (m) reported = [Number(m[1]), Number(m[2])]
    else process.stderr.write(d)
  })
  try {
    await eventually(async () => (await reason()) === want, { timeoutMs: 30_000, what: `RegistryCredentialsReady ${want}` })
    await new Promise((r) => setTimeout(r, 3_000)) // idle: informers synced, first pass done
    const samples: number[] = []
    let heap = 0
    for (let i = 0; i < 3; i++) {
      reported = undefined
      child.kill("SIGUSR2")
      const [rss, h] = await eventually(async () => reported, { timeoutMs: 5_000, what: "RSS report" })
      samples.push(rss)
      heap = h
      await new Promise((r) => setTimeout(r, 500))
    }
    const hwm = Number(/VmHWM:\s+(\d+) kB/u.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) * 1024
    console.log(
      `${provider}: idle RSS after GC ${samples.map((s) => (s / MiB).toFixed(1)).join(" / ")} MiB (heap ${(heap / MiB).toFixed(1)} MiB, peak RSS ${(hwm / MiB).toFixed(1)} MiB)`,
    )
  } finally {
    child.kill("SIGTERM")
    if (child.exitCode === null) await once(child, "exit")
  }
}

try {
  // static needs the admin's docker-config Secret: one for the local registry.
  await applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/dockerconfigjson",
      metadata: { name: "aicr-registry-docker-config", namespace: ns },
      data: {
        ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { [info.registry]: { auth: Buffer.from("a:b").toString("base64") } } })).toString("base64"),
      },
    },
  ])
  await measure("static", "CredentialsPresent", {})
  const keys = aws.fixtures.users.refresher
  await measure("aws", "TokenRefreshed", { ...aws.env, AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey })
} finally {
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await aws.stop()
  await rm(work, { recursive: true, force: true })
}
