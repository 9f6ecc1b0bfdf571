// The refresher as it ships (the esbuild bundle, one process per identity) against the real kube-apiserver and a
// local AWS (moto with IAM enforcement on, harness/aws.ts): static keys, IRSA with a real projected ServiceAccount
// token, EKS Pod Identity through a local credentials endpoint, access denied, no identity, refresh before expiry
// with short-lived tokens in real time, and staleness. The runtime registry is an htpasswd-protected distribution
// whose password is the minted token; a push with the docker-config Secret the refresher wrote must get in, before
// and after a rotation (the registry re-reads its htpasswd file; no restart). Every mint runs in the bundle's own
// `mint-process.mjs` (started by `main.mjs` as it ships), here behind a wrapper that records each start's pid.
import { spawn } from "node:child_process"
import { copyFile, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dockerConfigCredentials, EMPTY_JSON, MediaType, OciClient } from "@aicr/oras"
import {
  type AwsEmulator,
  createNamespace,
  createServiceAccountToken,
  eventually,
  expectOk,
  type HarnessInfo,
  htpasswdLine,
  kubeRequest,
  type PodIdentityAgent,
  type Proc,
  recordedProcess,
  type Registry,
  spawnProc,
  startAws,
  startPodIdentityAgent,
  startRegistry,
  untilCondition,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { buildApp } from "../../../hack/build-apps"

const info: HarnessInfo = inject("harness")
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ECR_HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
const TTL_SECONDS = 24
const vars = { PARTITION: "aws", REPOSITORY_PREFIX: "aicr/it", ACCOUNT_ID: "123456789012", REGION: "us-east-1" }

let aws: AwsEmulator
let registry: Registry
let agent: PodIdentityAgent | undefined
let work: string
let entry: string
let mints: ReturnType<typeof recordedProcess>
let argocd: string
let ops: string

interface Cond {
  type: string
  status: string
  reason: string
  message: string
}
interface Secret {
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> }
  type: string
  data: Record<string, string>
}
const ready = async () =>
  ((expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "get runtime") as { status?: { conditions?: Cond[] } }).status?.conditions ?? []).find(
    (c) => c.type === "RegistryCredentialsReady",
  )
const untilReady = (want: (c: Cond) => boolean, what: string, timeoutMs = 60_000) =>
  eventually(
    async () => {
      const c = await ready()
      return c !== undefined && want(c) ? c : undefined
    },
    { timeoutMs, what },
  )
const getSecret = async (ns: string, name: string) => {
  const res = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}/secrets/${name}` })
  return res.status === 404 ? undefined : (expectOk(res, `get Secret ${ns}/${name}`) as Secret)
}
const text = (s: Secret, key: string) => Buffer.from(s.data[key]!, "base64").toString("utf8")
const expiryOf = (s: Secret | undefined) => s?.metadata.annotations?.["operator.aicr.run/token-expires-at"]
const resetSecrets = async () => {
  for (const [ns, name] of [
    [argocd, "aicr-registry"],
    [ops, "aicr-registry-docker-config"],
  ] as const)
    await kubeRequest(info, { method: "DELETE", path: `/api/v1/namespaces/${ns}/secrets/${name}` })
  await kubeRequest(info, { method: "PATCH", path: `${RUNTIME}/status`, body: { status: { conditions: [], credentials: null } } })
}

/** The bundle with one identity's environment; the emulator's endpoint and nothing else of the machine's AWS setup. */
const refresher = async (name: string, identity: Record<string, string>): Promise<Proc> =>
  spawnProc({
    name,
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
      `oci://${registry.address}/aicr/it`,
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
    env: { ...aws.env, ...identity },
  })

/** Points the registry's htpasswd at the newest minted token: the registry accepts exactly what ECR would. */
const acceptLatestToken = async () => writeFile(registry.htpasswdFile!, `${htpasswdLine("AWS", aws.tokens().at(-1)!.password)}\n`)

/**
 * The bundle with its mint process behind a recording wrapper: `main.mjs` starts whatever `mint-process.mjs` sits next
 * to it, so the shipped one moves aside and the wrapper (which loads it) takes its name.
 */
const buildRecorded = async (): Promise<string> => {
  const built = await buildApp("ecr-credential-refresher", join(work, "dist"))
  const shipped = join(built.outdir, "mint-process-shipped.mjs")
  await rename(join(built.outdir, "mint-process.mjs"), shipped)
  mints = recordedProcess(work, shipped)
  await copyFile(mints.entry, join(built.outdir, "mint-process.mjs"))
  return built.entry
}

/** Runs the bundle's mint process once, as the refresher does (request on stdin), with `env`; its stdout and stderr. */
const mintOnce = (env: Record<string, string | undefined>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(work, "dist", "mint-process-shipped.mjs")], { env: { ...process.env, NODE_OPTIONS: "", ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")))
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(
      JSON.stringify({
        userAgent: "aicr-operator",
        registry: { host: ECR_HOST, accountId: vars.ACCOUNT_ID, region: vars.REGION, partition: "aws" },
      }),
    )
  })

/** Pushes a small OCI artifact with a docker config, as the registry mirror does with its mounted Secret. */
const push = async (dockerConfigJson: string, tag: string): Promise<"ok" | string> => {
  const client = new OciClient({ credentials: dockerConfigCredentials({ config: JSON.parse(dockerConfigJson) }), retry: { maxAttempts: 1 } })
  const repo = `${registry.address}/aicr/it/evidence/smoke`
  try {
    await client.pushBlob(repo, EMPTY_JSON.bytes, { digest: EMPTY_JSON.descriptor.digest })
    await client.pushManifest(`${repo}:${tag}`, {
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      artifactType: "application/vnd.aicr.test",
      config: EMPTY_JSON.descriptor,
      layers: [EMPTY_JSON.descriptor],
    })
    return "ok"
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  } finally {
    await client.close()
  }
}

const stopAndCheckLog = async (p: Proc) => {
  await p.stop()
  const log = await readFile(p.log, "utf8")
  for (const t of aws.tokens()) expect(log).not.toContain(t.password)
  return log
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "ecr-refresher-it-"))
  const template = await readFile(new URL("../../../charts/aicr-operator/files/ecr-iam-policy.json", import.meta.url), "utf8")
  const policy = template.replace(/\$\{([A-Z_]+)\}/gu, (_, k: keyof typeof vars) => vars[k])
  ;[aws, registry, entry] = await Promise.all([
    startAws({ policy, tokenTtlSeconds: TTL_SECONDS }),
    startRegistry({ name: "ecr-registry", htpasswd: { user: "AWS", password: "not-yet-minted" } }),
    buildRecorded(),
  ])
  argocd = await createNamespace(info, "argocd")
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
})

afterAll(async () => {
  await agent?.close()
  await kubeRequest(info, { method: "DELETE", path: RUNTIME })
  await aws?.stop()
  await registry?.stop()
  if (work) await rm(work, { recursive: true, force: true })
})

describe("ecr-credential-refresher against a local AWS with IAM enforcement on", () => {
  it("static keys: mints at start into both Secrets, the registry accepts the token, and it refreshes before expiry", async () => {
    const p = await refresher("refresher-keys", {
      AWS_ACCESS_KEY_ID: aws.fixtures.users.refresher.accessKeyId,
      AWS_SECRET_ACCESS_KEY: aws.fixtures.users.refresher.secretAccessKey,
    })
    try {
      const c = await untilReady((x) => x.status === "True", "RegistryCredentialsReady=True")
      expect(c.reason).toBe("TokenRefreshed")
      const repoCreds = (await getSecret(argocd, "aicr-registry"))!
      const dockerConfig = (await getSecret(ops, "aicr-registry-docker-config"))!
      const minted = aws.tokens()
      expect(minted).toHaveLength(1)
      // Argo CD 3.4.2's repo-creds shape for native OCI sources (charts pinned by digest, ADR 20261203-charts-by-digest).
      expect(repoCreds.metadata.labels?.["argocd.argoproj.io/secret-type"]).toBe("repo-creds")
      expect(
        Object.fromEntries(
          Object.keys(repoCreds.data)
            .sort()
            .map((k) => [k, text(repoCreds, k)]),
        ),
      ).toEqual({
        insecureOCIForceHttp: "true",
        password: minted[0]!.password,
        type: "oci",
        url: `oci://${registry.address}/aicr/it`,
        username: "AWS",
      })
      expect(Date.parse(expiryOf(repoCreds)!)).toBe(Math.floor(Date.parse(minted[0]!.expiresAt) / 1000) * 1000)
      expect(dockerConfig.type).toBe("kubernetes.io/dockerconfigjson")
      expect(expiryOf(dockerConfig)).toBe(expiryOf(repoCreds))

      // The registry's password is the minted token: the docker-config Secret gets a push in; an old login does not.
      const firstConfig = text(dockerConfig, ".dockerconfigjson")
      expect(await push(firstConfig, "before")).toMatch(/401|unauthorized|denied/iu)
      await acceptLatestToken()
      expect(await push(firstConfig, "first")).toBe("ok")

      // A refresh lands before the first token expires (24 s tokens refresh after 16–18 s), with a new token.
      const firstExpiry = Date.parse(expiryOf(repoCreds)!)
      const refreshed = await eventually(
        async () => {
          const s = await getSecret(argocd, "aicr-registry")
          return expiryOf(s) !== expiryOf(repoCreds) ? s : undefined
        },
        { timeoutMs: 40_000, what: "a refreshed repo-creds Secret" },
      )
      expect(Date.now()).toBeLessThan(firstExpiry)
      expect(aws.tokens().length).toBeGreaterThanOrEqual(2)
      expect(text(refreshed, "password")).toBe(aws.tokens().at(-1)!.password)
      const pid = registry.proc.pid
      await acceptLatestToken()
      const secondConfig = text((await getSecret(ops, "aicr-registry-docker-config"))!, ".dockerconfigjson")
      expect(secondConfig).not.toBe(firstConfig)
      expect(
        await eventually(async () => ((await push(secondConfig, "second")) === "ok" ? "ok" : undefined), {
          timeoutMs: 10_000,
          what: "a push with the rotated token",
        }),
      ).toBe("ok")
      expect(await push(firstConfig, "stale")).toMatch(/401|unauthorized|denied/iu)
      expect(registry.proc.pid).toBe(pid) // distribution re-read the rewritten htpasswd file without a restart
      expect((await ready())?.status).toBe("True")
      // Each mint ran in a child process of its own, neither the refresher nor this test.
      const pids = mints.pids()
      expect(pids.length).toBeGreaterThanOrEqual(aws.tokens().length)
      expect(new Set(pids).size).toBe(pids.length)
      expect(pids).not.toContain(process.pid)
      expect(pids).not.toContain(p.pid)
    } finally {
      const log = await stopAndCheckLog(p)
      expect(log).toContain("Minted ECR token")
    }
  })

  it("the mint process answers the token on stdout only: nothing on stderr, the expiry a number", async () => {
    const { code, stdout, stderr } = await mintOnce({
      ...aws.env,
      AWS_ACCESS_KEY_ID: aws.fixtures.users.refresher.accessKeyId,
      AWS_SECRET_ACCESS_KEY: aws.fixtures.users.refresher.secretAccessKey,
    })
    const minted = aws.tokens().at(-1)!
    expect(code).toBe(0)
    const answer = JSON.parse(stdout) as { ok: { username: string; password: string; expiresAt: unknown } }
    expect(answer).toEqual({ ok: { username: "AWS", password: minted.password, expiresAt: expect.any(Number) } })
    expect(Math.floor((answer.ok.expiresAt as number) / 1000)).toBe(Math.floor(Date.parse(minted.expiresAt) / 1000))
    expect(stderr).toBe("")
    for (const t of aws.tokens()) expect(stderr).not.toContain(t.password)
    // A denied mint answers the refresher's own error, fields and all.
    const denied = await mintOnce({
      ...aws.env,
      AWS_ACCESS_KEY_ID: aws.fixtures.users.noperm.accessKeyId,
      AWS_SECRET_ACCESS_KEY: aws.fixtures.users.noperm.secretAccessKey,
    })
    expect(denied.code).toBe(0)
    expect(JSON.parse(denied.stdout)).toMatchObject({
      failed: { _tag: "AccessDeniedError", action: "ecr:GetAuthorizationToken", principal: "arn:aws:iam::123456789012:user/noperm" },
    })
    expect(denied.stderr).toBe("")
  })

  it("access denied: a user without the policy gets Unauthorized naming ecr:GetAuthorizationToken", async () => {
    await resetSecrets()
    const p = await refresher("refresher-noperm", {
      AWS_ACCESS_KEY_ID: aws.fixtures.users.noperm.accessKeyId,
      AWS_SECRET_ACCESS_KEY: aws.fixtures.users.noperm.secretAccessKey,
    })
    try {
      const c = await untilCondition(ready, "RegistryCredentialsReady", "False", "Unauthorized")
      expect(c.status).toBe("False")
      expect(c.message).toBe(
        "AWS denied ecr:GetAuthorizationToken to arn:aws:iam::123456789012:user/noperm: attach the chart's files/ecr-iam-policy.json (it allows ecr:GetAuthorizationToken) to the operator's IAM role",
      )
      expect(await getSecret(argocd, "aicr-registry")).toBeUndefined()
    } finally {
      await stopAndCheckLog(p)
    }
  })

  it("no identity: RegistryCredentialsUnavailable saying how to give the operator one", async () => {
    await resetSecrets()
    const p = await refresher("refresher-none", {})
    try {
      const c = await untilCondition(ready, "RegistryCredentialsReady", "False", "RegistryCredentialsUnavailable")
      expect(c.message).toMatch(/^No AWS identity: the SDK's credential chain found none \(.*\); associate an EKS Pod Identity .* IRSA$/u)
    } finally {
      await stopAndCheckLog(p)
    }
  })

  it("IRSA: a projected ServiceAccount token for sts.amazonaws.com and AWS_ROLE_ARN; a role without the policy is denied", async () => {
    const token = await createServiceAccountToken(info, ops, "aicr-operator", { audiences: ["sts.amazonaws.com"], expirationSeconds: 3600 })
    expect(JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { aud: string[]; sub: string }).toMatchObject({
      aud: ["sts.amazonaws.com"],
      sub: `system:serviceaccount:${ops}:aicr-operator`,
    })
    const tokenFile = join(work, "irsa-token")
    await writeFile(tokenFile, token)
    for (const [role, want] of [
      ["aicr-operator", "TokenRefreshed"],
      ["aicr-noperm", "Unauthorized"],
    ] as const) {
      await resetSecrets()
      const p = await refresher(`refresher-irsa-${role}`, {
        AWS_ROLE_ARN: aws.fixtures.roles[role],
        AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
        AWS_ROLE_SESSION_NAME: "aicr-operator",
      })
      try {
        const c = await untilReady((x) => x.reason === want, `RegistryCredentialsReady ${want} with IRSA role ${role}`)
        if (want === "Unauthorized")
          expect(c.message).toMatch(/^AWS denied ecr:GetAuthorizationToken to arn:aws:sts::123456789012:assumed-role\/aicr-noperm\//u)
        else expect(text((await getSecret(argocd, "aicr-registry"))!, "password")).toBe(aws.tokens().at(-1)!.password)
      } finally {
        await stopAndCheckLog(p)
      }
    }
  })

  it("EKS Pod Identity: credentials from the container-credentials endpoint; denied credentials then turn the token stale", async () => {
    await resetSecrets()
    const token = await createServiceAccountToken(info, ops, "aicr-operator", { audiences: ["pods.eks.amazonaws.com"], expirationSeconds: 3600 })
    const tokenFile = join(work, "pod-identity-token")
    await writeFile(tokenFile, token)
    agent = await startPodIdentityAgent({ tokenFile, credentials: aws.fixtures.sessions["aicr-operator"] })
    const p = await refresher("refresher-pod-identity", { AWS_CONTAINER_CREDENTIALS_FULL_URI: agent.url, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile })
    try {
      await untilReady((x) => x.status === "True", "RegistryCredentialsReady=True with Pod Identity")
      expect(agent.served()).toMatchObject({ ok: expect.any(Number), refused: 0 })
      expect(agent.served().ok).toBeGreaterThanOrEqual(1)
      // The association now hands out a role without the policy: the next refresh (a new client, so credentials
      // are fetched again) is denied, then the token in the Secrets expires.
      agent.setCredentials(aws.fixtures.sessions["aicr-noperm"])
      const denied = await untilCondition(ready, "RegistryCredentialsReady", "False", "Unauthorized", { timeoutMs: 60_000 })
      const expiry = Date.parse(expiryOf(await getSecret(argocd, "aicr-registry"))!)
      expect(Date.now()).toBeLessThan(expiry)
      expect(denied.message).toContain("assumed-role/aicr-noperm/")
      const stale = await untilCondition(ready, "RegistryCredentialsReady", "False", "RegistryCredentialsStale", { timeoutMs: 40_000 })
      expect(Date.now()).toBeGreaterThanOrEqual(expiry)
      expect(stale.message).toContain(
        `expired at ${new Date(expiry).toISOString().replace(".000Z", "Z")} and no new one could be minted: AWS denied ecr:GetAuthorizationToken`,
      )
    } finally {
      await stopAndCheckLog(p)
    }
  })
})
