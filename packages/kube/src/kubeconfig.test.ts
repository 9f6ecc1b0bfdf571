import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadConnection } from "./kubeconfig"

const write = (name: string, text: string) => {
  const dir = mkdtempSync(join(tmpdir(), "kc-"))
  writeFileSync(join(dir, "ca.crt"), "CA-PEM")
  writeFileSync(join(dir, "token"), "file-token\n")
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

const yaml = (user: string, cluster = "    certificate-authority: ca.crt") => `apiVersion: v1
kind: Config
current-context: t
clusters:
- name: t
  cluster:
    server: https://127.0.0.1:6443/
${cluster}
users:
- name: u
  user:
${user}
contexts:
- name: t
  context: {cluster: t, user: u}
- name: other
  context: {cluster: t, user: nobody}
`

describe("loadConnection", () => {
  it("reads a YAML kubeconfig with a token and a CA file relative to the kubeconfig", async () => {
    const conn = (await loadConnection({ kubeconfigPath: write("config", yaml("    token: abc")) }))!
    expect(conn.server).toBe("https://127.0.0.1:6443")
    expect(String(conn.tls.ca)).toBe("CA-PEM")
    expect(conn.tls.rejectUnauthorized).toBe(true)
    expect(conn.headers()).toEqual({ authorization: "Bearer abc" })
  })

  it("reads a JSON kubeconfig with tokenFile, impersonation and inline CA data", async () => {
    const path = write(
      "config.json",
      JSON.stringify({
        "current-context": "t",
        clusters: [
          {
            name: "t",
            cluster: { server: "https://h:1", "certificate-authority-data": Buffer.from("INLINE").toString("base64"), "insecure-skip-tls-verify": true },
          },
        ],
        users: [{ name: "u", user: { tokenFile: "token", as: "alice" } }],
        contexts: [{ name: "t", context: { cluster: "t", user: "u" } }],
      }),
    )
    const conn = (await loadConnection({ kubeconfigPath: path }))!
    expect(String(conn.tls.ca)).toBe("INLINE")
    expect(conn.tls.rejectUnauthorized).toBe(false)
    expect(conn.headers()).toEqual({ authorization: "Bearer file-token", "impersonate-user": "alice" })
  })

  it("uses basic auth and client certificates", async () => {
    const b64 = (s: string) => Buffer.from(s).toString("base64")
    const conn = (await loadConnection({
      kubeconfigPath: write(
        "config",
        yaml(`    username: admin\n    password: pw\n    client-certificate-data: ${b64("CERT")}\n    client-key-data: ${b64("KEY")}`),
      ),
    }))!
    expect([String(conn.tls.cert), String(conn.tls.key)]).toEqual(["CERT", "KEY"])
    expect(conn.headers()).toEqual({ authorization: `Basic ${b64("admin:pw")}` })
  })

  it("returns undefined (fall back to client-node) for exec plugins and auth providers", async () => {
    expect(
      await loadConnection({ kubeconfigPath: write("config", yaml("    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws")) }),
    ).toBeUndefined()
    expect(await loadConnection({ kubeconfigPath: write("config", yaml("    auth-provider:\n      name: oidc")) })).toBeUndefined()
    expect(await loadConnection({ kubeconfigPath: write("config", yaml("    token: x", "    proxy-url: http://proxy:3128")) })).toBeUndefined()
  })

  it("selects a named context and refuses an unknown one", async () => {
    const path = write("config", yaml("    token: abc"))
    expect((await loadConnection({ kubeconfigPath: path, context: "other" }))!.headers()).toEqual({})
    await expect(loadConnection({ kubeconfigPath: path, context: "missing" })).rejects.toThrow(/no context "missing"/)
  })
})
