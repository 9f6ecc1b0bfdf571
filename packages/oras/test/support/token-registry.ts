// A real distribution registry configured for Docker token auth, plus the token server it trusts: an in-process
// HTTP server that checks basic credentials and issues RS256 JWTs signed by a throwaway self-signed certificate
// (made with openssl). The registry verifies the tokens itself, so the client's whole bearer flow is real.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createPrivateKey, randomBytes, sign, X509Certificate } from "node:crypto"
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { toolPath } from "@aicr/testing/harness"

export interface TokenRegistry {
  /** host:port of the registry (plain HTTP). */
  readonly address: string
  /** Every token request: its scopes and whether it carried valid credentials. */
  readonly tokenRequests: { scopes: string[]; authenticated: boolean }[]
  stop(): Promise<void>
}

const SERVICE = "oras-test-registry"
const ISSUER = "oras-test-issuer"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createNetServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo
      s.close(() => resolve(port))
    })
  })

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url")

export const startTokenRegistry = async (user: { user: string; password: string }, ttlSeconds = 300): Promise<TokenRegistry> => {
  const dir = mkdtempSync(join(tmpdir(), "oras-token-registry-"))
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=oras-test-token",
    ],
    { stdio: "ignore" },
  )
  const key = createPrivateKey(readFileSync(join(dir, "key.pem")))
  const cert = new X509Certificate(readFileSync(join(dir, "cert.pem")))
  const tokenRequests: TokenRegistry["tokenRequests"] = []
  const basic = `Basic ${Buffer.from(`${user.user}:${user.password}`).toString("base64")}`

  const tokens: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x")
    const scopes = url.searchParams.getAll("scope")
    const authenticated = req.headers.authorization === basic
    tokenRequests.push({ scopes, authenticated })
    if (req.headers.authorization !== undefined && !authenticated) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}')
      return
    }
    const access = authenticated
      ? scopes.map((s) => {
          const last = s.lastIndexOf(":")
          const first = s.indexOf(":")
          return { type: s.slice(0, first), name: s.slice(first + 1, last), actions: s.slice(last + 1).split(",") }
        })
      : []
    const now = Math.floor(Date.now() / 1000)
    const header = b64url(JSON.stringify({ typ: "JWT", alg: "RS256", x5c: [cert.raw.toString("base64")] }))
    const claims = b64url(
      JSON.stringify({
        iss: ISSUER,
        sub: authenticated ? user.user : "",
        aud: SERVICE,
        exp: now + ttlSeconds,
        nbf: now - 10,
        iat: now,
        jti: randomBytes(8).toString("hex"),
        access,
      }),
    )
    const signature = b64url(sign("sha256", Buffer.from(`${header}.${claims}`), key))
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ token: `${header}.${claims}.${signature}`, expires_in: ttlSeconds, issued_at: new Date(now * 1000).toISOString() }))
  })
  await new Promise<void>((resolve) => tokens.listen(0, "127.0.0.1", resolve))
  const tokenAddress = `127.0.0.1:${(tokens.address() as AddressInfo).port}`

  const port = await freePort()
  const address = `127.0.0.1:${port}`
  mkdirSync(join(dir, "data"))
  writeFileSync(
    join(dir, "config.yml"),
    [
      "version: 0.1",
      "log: {level: warn, accesslog: {disabled: true}}",
      `storage: {filesystem: {rootdirectory: ${JSON.stringify(join(dir, "data"))}}, maintenance: {uploadpurging: {enabled: false}}}`,
      `http: {addr: ${address}, secret: ${randomBytes(16).toString("hex")}}`,
      "auth:",
      "  token:",
      `    realm: http://${tokenAddress}/token`,
      `    service: ${SERVICE}`,
      `    issuer: ${ISSUER}`,
      `    rootcertbundle: ${JSON.stringify(join(dir, "cert.pem"))}`,
      "",
    ].join("\n"),
  )
  const log = openSync(join(dir, "registry.log"), "a")
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("REGISTRY_")))
  const proc: ChildProcess = spawn(toolPath("docker-registry"), ["serve", join(dir, "config.yml")], { stdio: ["ignore", log, log], env })
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r))
      proc.kill("SIGTERM")
      await exited
    }
    await new Promise((r) => tokens.close(r))
  }
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(1_000) })
      await res.body?.cancel()
      if (res.status === 401) break
    } catch {
      // not listening yet
    }
    if (i > 200 || proc.exitCode !== null) {
      await stop()
      throw new Error(`token registry did not start: ${readFileSync(join(dir, "registry.log"), "utf8").slice(-2000)}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { address, tokenRequests, stop }
}
