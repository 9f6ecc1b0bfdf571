// The docker-config Secret as its consumers use it: the refresher (aws, local AWS) writes it, the file is mounted
// into the registry mirror as a kubelet would (the Secret's `.dockerconfigjson`, written to the `--docker-config`
// path), and the mirror pushes a whole resolution into an htpasswd registry whose password is the minted token.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { contentConfigMapName } from "@aicr/api"
import { type ChartUpstream, fixtureBundle, fixtureRecipe, startChartUpstream } from "@aicr/chart-upstream"
import {
  applyManifests,
  type AwsEmulator,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  htpasswdLine,
  kubeRequest,
  type Proc,
  type Registry,
  spawnProc,
  startAws,
  startRegistry,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const INPUT_DIGEST = `sha256:${"e".repeat(64)}`
const vars: Record<string, string> = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/it", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }

let aws: AwsEmulator
let registry: Registry
let upstream: ChartUpstream
let work: string
const procs: Proc[] = []

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
const getRuntime = async () =>
  expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as {
    metadata: { generation: number }
    status?: { conditions?: Cond[]; mirror?: { bundle?: string; charts?: unknown[] } }
  }
const condition = async (type: string) => (await getRuntime()).status?.conditions?.find((c) => c.type === type)

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "ecr-mirror-it-"))
  const policy = (await readFile(new URL("../../../charts/aicr-operator/files/ecr-iam-policy.json", import.meta.url), "utf8")).replace(
    /\$\{([A-Z_]+)\}/gu,
    (_, k: string) => vars[k] ?? "",
  )
  ;[aws, registry, upstream] = await Promise.all([
    startAws({ policy }),
    startRegistry({ name: "ecr-mirror-registry", htpasswd: { user: "AWS", password: "not-yet-minted" } }),
    startChartUpstream(),
  ])
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
})

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()))
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await Promise.all([aws?.stop(), registry?.stop(), upstream?.stop()])
  if (work) await rm(work, { recursive: true, force: true })
})

describe("the docker-config Secret the refresher writes", () => {
  it("lets the registry mirror push a whole resolution into a registry that accepts only the minted token", async () => {
    const [refresherBuild, mirrorBuild] = await Promise.all([
      buildApp("ecr-credential-refresher", join(work, "r")),
      buildApp("registry-mirror", join(work, "m")),
    ])
    const argocd = await createNamespace(info, "argocd")
    const ops = await createNamespace(info, "aicr-mirror-creds")
    const keys = aws.fixtures.users.refresher
    const common = [
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=info",
      "--operator-namespace",
      ops,
    ]
    const prefix = `oci://${registry.address}/aicr/it`
    await applyManifests(info, [
      { apiVersion: "operator.aicr.run/v1alpha1", kind: "ClusterRuntime", metadata: { name: "cluster" }, spec: { intent: "training", platform: "kubeflow" } },
    ])
    procs.push(
      await spawnProc({
        name: "refresher",
        bin: process.execPath,
        logDir: join(work, "logs"),
        args: [
          refresherBuild.entry,
          ...common,
          "--registry",
          prefix,
          "--auth-provider",
          "aws",
          "--ecr-registry",
          "123456789012.dkr.ecr.us-east-1.amazonaws.com",
          "--engine-namespace",
          argocd,
        ],
        env: { ...aws.env, AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey },
      }),
    )
    await eventually(async () => (await condition("RegistryCredentialsReady"))?.status === "True", { timeoutMs: 60_000, what: "RegistryCredentialsReady=True" })
    await writeFile(registry.htpasswdFile!, `${htpasswdLine("AWS", aws.tokens().at(-1)!.password)}\n`)

    // What the kubelet mounts from the Secret.
    const secret = expectOk(
      await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ops}/secrets/aicr-registry-docker-config` }),
      "get Secret",
    ) as { data: Record<string, string> }
    const dockerConfig = join(work, "docker-config.json")
    await writeFile(dockerConfig, Buffer.from(secret.data[".dockerconfigjson"]!, "base64"))

    // The content and Resolved=True, as the resolver publishes them.
    const data = {
      "recipe.json": JSON.stringify(fixtureRecipe()),
      "values.json": JSON.stringify({
        apiVersion: "operator.aicr.run/v1alpha1",
        kind: "Bundle",
        deployer: "helm",
        files: fixtureBundle().files,
        modes: fixtureBundle().modes,
      }),
      "snapshot.json": "{}",
    }
    await applyManifests(info, [
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: contentConfigMapName(INPUT_DIGEST), namespace: ops, labels: { "operator.aicr.run/role": "content" } },
        data,
      },
    ])
    const generation = (await getRuntime()).metadata.generation
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `${RUNTIME}/status?fieldManager=aicr-resolver&force=true`,
        contentType: "application/apply-patch+yaml",
        body: {
          apiVersion: "operator.aicr.run/v1alpha1",
          kind: "ClusterRuntime",
          metadata: { name: "cluster" },
          status: {
            conditions: [
              {
                type: "Resolved",
                status: "True",
                observedGeneration: generation,
                lastTransitionTime: "2026-12-02T10:00:00Z",
                reason: "InputsResolved",
                message: "",
              },
            ],
            resolution: { inputDigest: INPUT_DIGEST, contentConfigMap: contentConfigMapName(INPUT_DIGEST), releases: 14 },
          },
        },
      }),
      "resolve",
    )
    procs.push(
      await spawnProc({
        name: "mirror",
        bin: process.execPath,
        logDir: join(work, "logs"),
        args: [
          mirrorBuild.entry,
          ...common,
          "--registry",
          prefix,
          "--docker-config",
          dockerConfig,
          ...Object.entries(upstream.rewrites).flatMap(([from, to]) => ["--upstream-rewrite", `${from}=${to}`]),
        ],
      }),
    )
    const mirrored = await eventually(
      async () => {
        const c = await condition("Mirrored")
        return c?.status === "True" || c?.reason === "Unauthorized" ? c : undefined
      },
      { timeoutMs: 90_000, what: "Mirrored settles" },
    )
    expect(mirrored).toMatchObject({ status: "True", reason: "ContentMirrored" })
    const mirror = (await getRuntime()).status!.mirror!
    expect(mirror.bundle).toContain(`${registry.address}/aicr/it/bundles/cluster:`)
    expect(mirror.charts!.length).toBeGreaterThan(10)
    // Anonymous access is refused: the push got in with the minted token only.
    const anonymous = await fetch(`http://${registry.address}/v2/`)
    expect(anonymous.status).toBe(401)
  })
})
