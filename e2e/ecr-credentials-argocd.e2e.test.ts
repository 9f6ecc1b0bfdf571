/**
 * ECR credentials end to end, as on EKS with `registry.auth.provider: aws`: the refresher as it ships mints tokens
 * from a local AWS (moto, IAM enforcement on, short-lived tokens) into Argo CD's repo-creds Secret and the
 * docker-config Secret; helm pushes charts with the docker-config Secret into a registry whose only accepted login is
 * `AWS` with the newest minted token (htpasswd, re-read by the registry without a restart); Argo CD's repo-server
 * pulls them through the repo-creds Secret; after the refresher rotates the token the old one is refused, and an
 * upgrade to a chart pushed after the rotation still syncs: Argo CD read the rewritten Secret.
 *
 * The registry follows moto's log of minted tokens, not the Secret: it accepts what ECR minted, so only a Secret that
 * holds the newest minted token gets anyone in. It is stricter than ECR, which keeps accepting every token until it
 * expires (htpasswd holds one password per user).
 *
 * The Application is written the way the step-executor writes them: Argo CD's native OCI source, the chart's own
 * repository `oci://<host>/aicr/it/charts/demo`, targetRevision the manifest digest (pinned, never the tag). The
 * registry is addressed as `localhost:PORT`, a DNS name like ECR's.
 */
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ARGOCD_NAMESPACE,
  type AwsEmulator,
  createNamespace,
  deleteApplication,
  eventually,
  expectOk,
  htpasswdLine,
  ociApplication,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  packageDemoChart,
  type Proc,
  type Registry,
  repoRoot,
  spawnProc,
  startAws,
  startRegistry,
  waitForApplication,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../hack/build-apps"

const info = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ECR_HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
/** Token lifetime: the refresher mints again 27–30 s after a mint (a quarter of the lifetime before expiry, jittered). */
const TTL_SECONDS = 40
const vars: Record<string, string> = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/it", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }
const EXPIRES = "operator.aicr.run/token-expires-at"
const APP = "ecr-demo"

interface Secret {
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> }
  data: Record<string, string>
}
interface Cond {
  type: string
  status: string
  reason: string
}

let aws: AwsEmulator
let registry: Registry
let helm: IsolatedHelm
let refresher: Proc
let work: string
let ops: string
/** host:port of the protected registry as Argo CD, helm and the refresher see it. */
let host: string
/** When the refresher was started. */
let startedAt = 0
let following = true
let follower: Promise<void> = Promise.resolve()
/** Each password the registry was switched to, with when. */
const accepted: { password: string; at: number }[] = []
const destination = `ecr-demo-${Math.random().toString(36).slice(2, 7)}`

const getSecret = async (ns: string, name: string) => {
  const res = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/secrets/${name}` })
  return res.status === 404 ? undefined : (expectOk(res, `get Secret ${ns}/${name}`) as Secret)
}
const repoCreds = () => getSecret(ARGOCD_NAMESPACE, "aicr-registry")
const text = (s: Secret, key: string) => Buffer.from(s.data[key]!, "base64").toString("utf8")
const ready = async () =>
  ((expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as { status?: { conditions?: Cond[] } }).status?.conditions ?? []).find(
    (c) => c.type === "RegistryCredentialsReady",
  )

/** The registry's answer to a login as AWS with password (200 in, 401 refused). */
/**
 * The manifest digest the registry serves for the demo chart's tag (what the mirror would record), read with the
 * newest minted token (retried: the registry follows moto's log a moment after a mint).
 */
const chartDigest = (version: string): Promise<string> =>
  eventually(
    async () => {
      const res = await fetch(`http://${registry.address}/v2/aicr/it/charts/demo/manifests/${version}`, {
        method: "HEAD",
        headers: {
          accept: "application/vnd.oci.image.manifest.v1+json",
          authorization: `Basic ${Buffer.from(`AWS:${aws.tokens().at(-1)!.password}`).toString("base64")}`,
        },
      })
      return res.status === 200 ? (res.headers.get("docker-content-digest") ?? undefined) : undefined
    },
    { what: `the manifest digest of demo:${version}` },
  )

const login = async (password: string) =>
  (await fetch(`http://${registry.address}/v2/`, { headers: { authorization: `Basic ${Buffer.from(`AWS:${password}`).toString("base64")}` } })).status

/** Keeps the registry's htpasswd at the newest token moto minted, as ECR accepts what it minted. */
const followMintedTokens = async () => {
  while (following) {
    const newest = aws.tokens().at(-1)
    if (newest !== undefined && newest.password !== accepted.at(-1)?.password) {
      // Renamed into place: the registry reads the file at every request and must never see half of it.
      await writeFile(`${registry.htpasswdFile!}.new`, `${htpasswdLine("AWS", newest.password)}\n`, { mode: 0o600 })
      await rename(`${registry.htpasswdFile!}.new`, registry.htpasswdFile!)
      accepted.push({ password: newest.password, at: Date.now() })
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Pushes a chart with helm, logged in through the docker-config Secret as it is now (mounted as a registry config). */
const pushWithDockerConfig = async (version: string, appVersion: string) => {
  const secret = (await getSecret(ops, "aicr-registry-docker-config"))!
  const config = join(work, `registry-config-${version}.json`)
  await writeFile(config, text(secret, ".dockerconfigjson"))
  await helm.helm(
    "push",
    await packageDemoChart(helm, "demo", version, appVersion),
    `oci://${host}/aicr/it/charts`,
    "--plain-http",
    "--registry-config",
    config,
  )
  return text(secret, ".dockerconfigjson")
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "ecr-argocd-e2e-"))
  const policy = (await readFile(join(repoRoot(), "charts", "aicr-operator", "files", "ecr-iam-policy.json"), "utf8")).replace(
    /\$\{([A-Z_]+)\}/gu,
    (_, k: string) => vars[k] ?? "",
  )
  let entry: string
  ;[aws, registry, helm, entry] = await Promise.all([
    startAws({ policy, tokenTtlSeconds: TTL_SECONDS }),
    startRegistry({ name: "ecr-argocd-registry", htpasswd: { user: "AWS", password: "not-yet-minted" } }),
    isolatedHelm("aicr-ecr-argocd-"),
    buildApp("ecr-credential-refresher", join(work, "dist")).then((b) => b.entry),
  ])
  host = `localhost:${registry.address.split(":").at(-1)!}`
  ops = await createNamespace(info, "aicr-ecr")
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await eventually(async () => (await kubeRequest(info, { method: "GET", path: RUNTIME })).status === 404, { what: "no leftover runtime" })
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
    "create runtime",
  )
  follower = followMintedTokens()
  const keys = aws.fixtures.users.refresher
  startedAt = Date.now()
  refresher = await spawnProc({
    name: "ecr-credential-refresher-e2e",
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
      `oci://${host}/aicr/it`,
      "--auth-provider",
      "aws",
      "--ecr-registry",
      ECR_HOST,
      "--engine-namespace",
      ARGOCD_NAMESPACE,
      "--operator-namespace",
      ops,
    ],
    logDir: join(work, "logs"),
    env: { ...aws.env, AWS_ACCESS_KEY_ID: keys.accessKeyId, AWS_SECRET_ACCESS_KEY: keys.secretAccessKey },
  })
})

afterAll(async () => {
  following = false
  await follower
  await refresher?.stop()
  await deleteApplication(info, APP)
  await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${ARGOCD_NAMESPACE}/secrets/aicr-registry` })
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await Promise.all([aws?.stop(), registry?.stop(), helm?.cleanup()])
  if (work) await rm(work, { recursive: true, force: true })
})

describe("ECR tokens from the refresher, used by helm and by Argo CD across a rotation", () => {
  let first: { password: string; expiresAt: number; dockerConfig: string }

  it("writes the repo-creds template for localhost:PORT/aicr/it at start, and helm pushes with the docker-config Secret", async () => {
    const secret = await eventually(
      async () => {
        const s = await repoCreds()
        return s?.metadata.annotations?.[EXPIRES] !== undefined ? s : undefined
      },
      { timeoutMs: 60_000, what: "the repo-creds Secret" },
    )
    const firstWriteMs = Date.now() - startedAt
    // The Secrets are written at start, before the runtime's status (ADR 20261203-credentials-before-runtime): two
    // writes, so the condition may land a pass after the Secret does.
    const condition = await eventually(ready, { timeoutMs: 30_000, what: "the runtime's RegistryCredentialsReady condition" })
    expect(condition.reason).toBe("TokenRefreshed")
    expect(secret.metadata.labels?.["argocd.argoproj.io/secret-type"]).toBe("repo-creds")
    const minted = aws.tokens()
    expect(
      Object.fromEntries(
        Object.keys(secret.data)
          .sort()
          .map((k) => [k, text(secret, k)]),
      ),
    ).toEqual({
      insecureOCIForceHttp: "true",
      password: minted.at(-1)!.password,
      type: "oci",
      url: `oci://${host}/aicr/it`,
      username: "AWS",
    })
    // Anonymous and the placeholder login are refused; the minted token gets in once the registry knows it.
    await eventually(async () => accepted.at(-1)?.password === minted.at(-1)!.password, { what: "the registry following the minted token" })
    expect((await fetch(`http://${registry.address}/v2/`)).status).toBe(401)
    expect(await login("not-yet-minted")).toBe(401)
    expect(await login(text(secret, "password"))).toBe(200)
    const dockerConfig = await pushWithDockerConfig("0.1.0", "1.0.0")
    first = { password: text(secret, "password"), expiresAt: Date.parse(secret.metadata.annotations![EXPIRES]!), dockerConfig }
    console.info(`[ecr-e2e] first Secret write ${firstWriteMs} ms after the refresher started`)
  })

  it("lets Argo CD's repo-server pull the chart through that Secret: Synced and Healthy", async () => {
    const t0 = Date.now()
    const digest = await chartDigest("0.1.0")
    const app = ociApplication({ name: APP, repoURL: `oci://${host}/aicr/it/charts/demo`, targetRevision: digest, destinationNamespace: destination })
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/${APP}?fieldManager=ecr-e2e&force=true`,
        body: app,
        contentType: "application/apply-patch+yaml",
      }),
      "create Application",
    )
    const synced = await waitForApplication(info, APP, digest, { timeoutMs: 90_000 })
    expect(synced.status?.operationState?.syncResult?.revision).toBe(digest)
    // The only credential Argo CD has for this registry is the refresher's template.
    const repoSecrets = expectOk(
      await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ARGOCD_NAMESPACE}/secrets?labelSelector=argocd.argoproj.io%2Fsecret-type` }),
      "list Argo CD credentials",
    ) as { items: Secret[] }
    expect(repoSecrets.items.filter((s) => text(s, "url").includes(host)).map((s) => text(s, "url"))).toEqual([`oci://${host}/aicr/it`])
    const dep = expectOk(await kubeRequest(info, { method: "GET", path: `/apis/apps/v1/namespaces/${destination}/deployments/${APP}` }), "get Deployment")
    expect(dep.spec.template.spec.containers[0].image).toBe("registry.example/demo:1.0.0")
    console.info(`[ecr-e2e] Application Synced/Healthy at 0.1.0 in ${Date.now() - t0} ms`)
  })

  it("rotates the token before it expires; the registry then refuses the old one", async () => {
    const rotated = await eventually(
      async () => {
        const s = await repoCreds()
        return s !== undefined && text(s, "password") !== first.password ? s : undefined
      },
      { timeoutMs: (TTL_SECONDS + 10) * 1_000, intervalMs: 100, what: "a rotated repo-creds Secret" },
    )
    const rotatedAt = Date.now()
    expect(rotatedAt).toBeLessThan(first.expiresAt)
    expect(Date.parse(rotated.metadata.annotations![EXPIRES]!)).toBeGreaterThan(first.expiresAt)
    const newest = text(rotated, "password")
    expect(aws.tokens().map((t) => t.password)).toContain(newest)
    await eventually(async () => accepted.at(-1)?.password === aws.tokens().at(-1)!.password, { what: "the registry following the rotated token" })
    expect(await login(first.password)).toBe(401)
    expect(await login(text((await repoCreds())!, "password"))).toBe(200)
    expect((await ready())?.status).toBe("True")
    console.info(`[ecr-e2e] rotation ${rotatedAt - startedAt} ms after start, ${first.expiresAt - rotatedAt} ms before the first token expired`)
  })

  it("syncs an upgrade to a chart pushed after the rotation: Argo CD pulls with the rewritten Secret", async () => {
    // Pushed only now, with the rotated docker-config Secret, so no cache holds it and the old login cannot fetch it.
    const dockerConfig = await pushWithDockerConfig("0.2.0", "1.1.0")
    expect(dockerConfig).not.toBe(first.dockerConfig)
    const digest = await chartDigest("0.2.0")
    const t0 = Date.now()
    expectOk(
      await kubeRequest(info, {
        method: "PATCH",
        path: `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/${APP}`,
        body: { spec: { source: { targetRevision: digest } } },
      }),
      "upgrade the Application",
    )
    const app = await waitForApplication(info, APP, digest, { timeoutMs: 90_000 })
    expect(app.status?.operationState?.syncResult?.revision).toBe(digest)
    const dep = expectOk(await kubeRequest(info, { method: "GET", path: `/apis/apps/v1/namespaces/${destination}/deployments/${APP}` }), "get Deployment")
    expect(dep.spec.template.spec.containers[0].image).toBe("registry.example/demo:1.1.0")
    expect(await login(first.password)).toBe(401)
    console.info(`[ecr-e2e] upgrade Synced/Healthy at 0.2.0 in ${Date.now() - t0} ms; ${aws.tokens().length} tokens minted so far`)
  })

  it("never logged a token", async () => {
    following = false
    await follower
    await refresher.stop()
    const log = await readFile(refresher.log, "utf8")
    expect(log).toContain("Minted ECR token")
    for (const t of aws.tokens()) expect(log).not.toContain(t.password)
  })
})
