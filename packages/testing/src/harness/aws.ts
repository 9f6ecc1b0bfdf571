// A local AWS for the ECR credential refresher's tests: moto's server (PyPI, a venv built by
// `hack/build-tools.sh moto`) on a free loopback port, started through moto-launch.py (three fixes, see there),
// with IAM fixtures (moto-fixtures.py) and IAM enforcement switched on afterwards; plus a stand-in for the EKS Pod
// Identity agent, speaking the container-credentials protocol on 127.0.0.1. Process-managed like every component
// (spawnProc): nothing outlives the test run.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { ensureDir, freePort, type Proc, retryPortClash, spawnProc, waitReady } from "./proc"
import { readVersions, toolsCache } from "./tools"

/** Access keys of an IAM user, or an assumed role's session. */
export interface AwsKeys {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  readonly expiration?: string
}

export interface AwsFixtures {
  readonly policyArn: string
  /** `refresher` (the policy attached) and `noperm` (nothing attached). */
  readonly users: Readonly<Record<"refresher" | "noperm", AwsKeys>>
  /** Role ARNs: `aicr-operator` (the policy) and `aicr-noperm` (nothing). */
  readonly roles: Readonly<Record<"aicr-operator" | "aicr-noperm", string>>
  /** Assumed-role sessions of both roles, as a Pod Identity agent hands them out. */
  readonly sessions: Readonly<Record<"aicr-operator" | "aicr-noperm", AwsKeys>>
}

export interface MintedToken {
  readonly registryId: string
  readonly password: string
  readonly expiresAt: string
}

export interface AwsEmulator {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string
  readonly proc: Proc
  readonly fixtures: AwsFixtures
  /**
   * Environment for a process using the AWS SDK against the emulator and nothing else: the endpoint, no IMDS, no
   * config or credential files, no inherited AWS credentials. Add the identity (keys, IRSA or Pod Identity).
   */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Every ECR token minted so far, oldest first. */
  tokens(): ReadonlyArray<MintedToken>
  stop(): Promise<void>
}

export interface AwsOptions {
  /** The IAM policy document attached to `refresher` and `aicr-operator` (JSON text). */
  readonly policy: string
  /** Lifetime of minted ECR tokens; default 43200 (12 h, as ECR). */
  readonly tokenTtlSeconds?: number
  /** Switch IAM enforcement on after the fixtures (default true). */
  readonly enforceIam?: boolean
  readonly dir?: string
  /** false: survive this process (`up --detach`). Default true. */
  readonly attached?: boolean
}

const here = import.meta.dirname

/** The moto venv's python; throws how to build it when missing. */
export const motoPython = (): string => {
  const version = readVersions().moto
  if (version === undefined) throw new Error("harness: MOTO_VERSION missing from hack/tools/versions.env")
  const dir = join(toolsCache(), `moto-${version}`)
  if (!existsSync(join(dir, ".complete")))
    throw new Error(`harness: moto ${version} is not installed (no ${dir}/.complete): run 'bash hack/build-tools.sh moto'`)
  return join(dir, "bin", "python")
}

/** Environment keys an AWS SDK reads for credentials and configuration; cleared so nothing leaks in. */
const AWS_IDENTITY_ENV = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_PROFILE",
  "AWS_ROLE_ARN",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_ROLE_SESSION_NAME",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
  "AWS_REGION",
  "AWS_DEFAULT_REGION",
  "AWS_ENDPOINT_URL_ECR",
  "AWS_ENDPOINT_URL_STS",
]

export const startAws = (opts: AwsOptions): Promise<AwsEmulator> => retryPortClash(false, () => startAwsOnce(opts))

const startAwsOnce = async (opts: AwsOptions): Promise<AwsEmulator> => {
  const python = motoPython()
  const dir = ensureDir(opts.dir ?? mkdtempSync(join(tmpdir(), "aicr-aws-")))
  const port = await freePort()
  const endpoint = `http://127.0.0.1:${port}`
  const tokenLog = join(dir, "ecr-tokens.jsonl")
  rmSync(tokenLog, { force: true })
  const proc = await spawnProc({
    name: "moto",
    bin: python,
    args: [join(here, "moto-launch.py"), "-H", "127.0.0.1", "-p", String(port)],
    logDir: join(dir, "logs"),
    attached: opts.attached,
    env: {
      ...Object.fromEntries(AWS_IDENTITY_ENV.map((k) => [k, undefined])),
      MOTO_ECR_TOKEN_TTL_SECONDS: String(opts.tokenTtlSeconds ?? 43_200),
      MOTO_ECR_TOKEN_LOG: tokenLog,
      AWS_EC2_METADATA_DISABLED: "true",
      INITIAL_NO_AUTH_ACTION_COUNT: undefined,
      PYTHONDONTWRITEBYTECODE: "1",
    },
  })
  await waitReady(proc, async () => (await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) })).status === 200, 30_000, 50)
  let fixtures: AwsFixtures
  try {
    const { stdout } = await promisify(execFile)(python, [join(here, "moto-fixtures.py"), endpoint, opts.policy], {
      env: { PATH: process.env.PATH, AWS_EC2_METADATA_DISABLED: "true", PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 60_000,
    })
    fixtures = JSON.parse(stdout) as AwsFixtures
    if (opts.enforceIam ?? true) {
      const res = await fetch(`${endpoint}/moto-api/reset-auth`, { method: "POST", body: "0", headers: { "content-type": "text/plain" } })
      if (res.status !== 200) throw new Error(`moto reset-auth answered ${res.status}: ${await res.text()}`)
    }
  } catch (e) {
    await proc.stop()
    throw e
  }
  const env: Record<string, string | undefined> = {
    ...Object.fromEntries(AWS_IDENTITY_ENV.map((k) => [k, undefined])),
    AWS_ENDPOINT_URL: endpoint,
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_CONFIG_FILE: join(dir, "no-aws-config"),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, "no-aws-credentials"),
  }
  const tokens = (): MintedToken[] =>
    existsSync(tokenLog)
      ? readFileSync(tokenLog, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as MintedToken)
      : []
  return {
    endpoint,
    proc,
    fixtures,
    env,
    tokens,
    stop: async () => {
      await proc.stop()
      if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface PodIdentityAgent {
  /** The value of AWS_CONTAINER_CREDENTIALS_FULL_URI. */
  readonly url: string
  /** Requests answered so far, and how many carried the wrong Authorization. */
  readonly served: () => { readonly ok: number; readonly refused: number }
  /** What the agent hands out from now on; `undefined` answers 500, as an agent without an association. */
  setCredentials(keys: AwsKeys | undefined): void
  close(): Promise<void>
}

/**
 * A stand-in for the EKS Pod Identity agent: answers `GET /v1/credentials` with `{AccessKeyId, SecretAccessKey,
 * Token, AccountId, Expiration}` when the `Authorization` header equals the token file's content (re-read on every
 * request, as the agent validates the projected token), 401 otherwise.
 */
export const startPodIdentityAgent = async (opts: {
  readonly tokenFile: string
  readonly credentials: AwsKeys
  readonly accountId?: string
}): Promise<PodIdentityAgent> => {
  let keys: AwsKeys | undefined = opts.credentials
  let ok = 0
  let refused = 0
  const server = createServer((req, res) => {
    const want = readFileSync(opts.tokenFile, "utf8").trim()
    if (req.method !== "GET" || req.url !== "/v1/credentials" || req.headers.authorization !== want) {
      refused++
      res.writeHead(req.headers.authorization !== want ? 401 : 404, { "content-type": "application/json" }).end('{"message":"refused"}')
      return
    }
    if (keys === undefined) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"message":"no pod identity association"}')
      return
    }
    ok++
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        AccessKeyId: keys.accessKeyId,
        SecretAccessKey: keys.secretAccessKey,
        Token: keys.sessionToken ?? "",
        AccountId: opts.accountId ?? "123456789012",
        // A minute: the SDK refreshes credentials within five minutes of their expiry, so it asks on every use.
        Expiration: new Date(Date.now() + 60_000).toISOString(),
      }),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/v1/credentials`,
    served: () => ({ ok, refused }),
    setCredentials: (k) => void (keys = k),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
