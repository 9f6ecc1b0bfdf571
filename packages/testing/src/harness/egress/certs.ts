// The webhook stand-in's TLS material, made with the openssl CLI: one CA per plane dir (kept across restarts, so a
// caBundle written once stays valid) and a serving certificate per Service DNS name, minted on first use.
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ensureDir } from "../proc"

export interface StandInPki {
  /** PEM of the CA every stood-in webhook's caBundle holds. */
  readonly caPem: string
  /** base64 of caPem, as a caBundle field holds it. */
  readonly caBundle: string
  /** PEM key and certificate serving `name` (a Service DNS name such as `svc.ns.svc`), signed by the CA. */
  serving(name: string): { readonly key: string; readonly cert: string }
}

const openssl = (args: string[], cwd: string) => execFileSync("openssl", args, { cwd, stdio: ["ignore", "pipe", "pipe"] })

export const standInPki = (dir: string): StandInPki => {
  const d = ensureDir(join(dir, "pki"))
  const caKey = join(d, "ca.key")
  const caCrt = join(d, "ca.crt")
  const leafKey = join(d, "serving.key")
  if (!existsSync(caCrt) || !existsSync(caKey)) {
    openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        caKey,
        "-out",
        caCrt,
        "-days",
        "3650",
        "-subj",
        "/CN=aicr-harness-webhook-stand-in-ca",
      ],
      d,
    )
  }
  if (!existsSync(leafKey)) openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", leafKey], d)
  const caPem = readFileSync(caCrt, "utf8")
  const key = readFileSync(leafKey, "utf8")
  const certs = new Map<string, string>()
  return {
    caPem,
    caBundle: Buffer.from(caPem).toString("base64"),
    serving: (name) => {
      let cert = certs.get(name)
      if (cert === undefined) {
        const safe = name.replace(/[^a-zA-Z0-9.-]/gu, "_")
        const csr = join(d, `${safe}.csr`)
        const ext = join(d, `${safe}.ext`)
        const crt = join(d, `${safe}.crt`)
        writeFileSync(ext, `subjectAltName=DNS:${name}\nextendedKeyUsage=serverAuth\n`)
        openssl(["req", "-new", "-key", leafKey, "-out", csr, "-subj", `/CN=${name}`], d)
        openssl(["x509", "-req", "-in", csr, "-CA", caCrt, "-CAkey", caKey, "-CAcreateserial", "-out", crt, "-days", "3650", "-extfile", ext], d)
        cert = readFileSync(crt, "utf8")
        certs.set(name, cert)
      }
      return { key, cert }
    },
  }
}
