// The refresher as it ships (the esbuild bundle, as a process) on the real kube-apiserver with a local AWS (moto, IAM
// enforcement on), started while no ClusterRuntime exists, as the install guide has it: the repo-creds Secret is
// written at start, and the guide's token line (the real kubectl) prints its expiry before any runtime is created.
// The runtime created later gets RegistryCredentialsReady=True/TokenRefreshed and the same expiry, with no second mint.
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import {
  applyManifests,
  ARGOCD_NAMESPACE,
  type AwsEmulator,
  createNamespace,
  eventually,
  expectOk,
  type HarnessInfo,
  kubeRequest,
  type Proc,
  spawnProc,
  startAws,
  expectCondition,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"

const run = promisify(execFile)
const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ECR_HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
const vars = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/it", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }

let aws: AwsEmulator
let work: string
let argocd: string
let refresher: Proc | undefined

/** The install guide's line, verbatim, with the real kubectl (admin's kubeconfig; `-n argocd` is the namespace it reads). */
const tokenLine = async () => {
  const line = "kubectl -n argocd get secret aicr-registry \\\n  -o jsonpath='{.metadata.annotations.operator\\.aicr\\.run/token-expires-at}{\"\\n\"}'"
  try {
    const { stdout } = await run("bash", ["-c", `set -euo pipefail\n${line}`], {
      env: { PATH: [dirname(info.bin.kubectl!), "/usr/bin", "/bin"].join(":"), KUBECONFIG: info.kubeconfig, HOME: work },
    })
    return stdout
  } catch {
    return "" // NotFound until the Secret is written
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "ecr-before-runtime-"))
  const template = await readFile(new URL("../../../charts/aicr-operator/files/ecr-iam-policy.json", import.meta.url), "utf8")
  const policy = template.replace(/\$\{([A-Z_]+)\}/gu, (_, k: keyof typeof vars) => vars[k])
  let entry: string
  ;[aws, entry] = await Promise.all([startAws({ policy }), buildApp("ecr-credential-refresher", join(work, "dist")).then((b) => b.entry)])
  // The guide's line reads namespace argocd itself.
  argocd = ARGOCD_NAMESPACE
  await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: argocd } }])
  const ops = await createNamespace(info, "aicr-ecr-before")
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${argocd}/secrets/aicr-registry` })
  await kubeRequest(info, { method: "PATCH", path: RUNTIME, body: { metadata: { finalizers: null } } })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
  refresher = await spawnProc({
    name: "refresher-before-runtime",
    bin: process.execPath,
    args: [
      entry,
      "--kubeconfig",
      info.kubeconfig,
      "--leader-elect=false",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
      "--log-level=debug",
      "--registry",
      `oci://${info.registry}/aicr/it`,
      "--auth-provider",
      "aws",
      "--ecr-registry",
      ECR_HOST,
      "--engine-namespace",
      argocd,
      "--operator-namespace",
      ops,
    ],
    logDir: join(work, "logs"),
    env: { ...aws.env, AWS_ACCESS_KEY_ID: aws.fixtures.users.refresher.accessKeyId, AWS_SECRET_ACCESS_KEY: aws.fixtures.users.refresher.secretAccessKey },
  })
}, 300_000)

afterAll(async () => {
  await refresher?.stop()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${argocd}/secrets/aicr-registry` })
  await aws?.stop()
  if (work) await rm(work, { recursive: true, force: true })
})

describe("ecr-credential-refresher started before any ClusterRuntime exists", () => {
  let expiry = ""

  it("writes Argo CD's repo-creds Secret at start: the guide's token line prints the token's expiry, and no runtime was needed", async () => {
    const out = await eventually(async () => ((await tokenLine()).trim() === "" ? undefined : await tokenLine()), { timeoutMs: 60_000, what: "the token line" })
    expect(out).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/u)
    expiry = out.trim()
    const minted = aws.tokens()
    expect(minted).toHaveLength(1)
    expect(Date.parse(expiry)).toBe(Math.floor(Date.parse(minted[0]!.expiresAt) / 1000) * 1000)
    const secret = expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${argocd}/secrets/aicr-registry` }), "get the repo-creds Secret")
    expect(Buffer.from(secret.data.password, "base64").toString("utf8")).toBe(minted[0]!.password)
    expect((await kubeRequest(info, { method: "GET", path: RUNTIME })).status).toBe(404)
  })

  it("the runtime created afterwards gets RegistryCredentialsReady=True/TokenRefreshed and the Secret's expiry, with no second mint", async () => {
    expectOk(
      await kubeRequest(info, {
        method: "POST",
        path: "/apis/operator.aicr.run/v1alpha1/clusterruntimes",
        body: {
          apiVersion: "operator.aicr.run/v1alpha1",
          kind: "ClusterRuntime",
          metadata: { name: "cluster" },
          spec: { intent: "training", platform: "kubeflow" },
        },
      }),
      "create the runtime",
    )
    const runtime = await eventually(
      async () => {
        const r = expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get the runtime")
        return r.status?.conditions?.some((c: { type: string }) => c.type === "RegistryCredentialsReady") ? r : undefined
      },
      { timeoutMs: 60_000, what: "RegistryCredentialsReady on the runtime" },
    )
    expectCondition(
      runtime.status.conditions.find((c: { type: string }) => c.type === "RegistryCredentialsReady"),
      "RegistryCredentialsReady",
      "True",
      "TokenRefreshed",
    )
    expect(runtime.status.credentials).toMatchObject({ provider: "aws", secret: { namespace: argocd, name: "aicr-registry" }, expiresAt: expiry })
    expect(aws.tokens()).toHaveLength(1)
    expect((await tokenLine()).trim()).toBe(expiry)
  })
})
