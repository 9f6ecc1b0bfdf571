/**
 * `kubectl aicr evidence ROLLOUT`: pulls the rollout's validation evidence (`status.validation.evidenceRef`) from the
 * registry with `@aicr/oras` (credentials from the docker config, as `oras` and `docker` use them; loopback registries
 * over plain HTTP), checks that the report is the one the binding names (sha256), says whether the binding carries a
 * signature, and prints the binding and every check. Pure rendering is `evidenceText`.
 */
import { createHash } from "node:crypto"
import { Annotation, dockerConfigCredentials, type ImageManifest, OciClient, parseReference } from "@aicr/oras"

export interface EvidenceFiles {
  readonly ref: string
  readonly files: Readonly<Record<string, Buffer>>
}

/** Every layer of the evidence artifact by its title, verified against its digest by the client. */
export const pullEvidence = async (ref: string): Promise<EvidenceFiles> => {
  const client = new OciClient({ credentials: dockerConfigCredentials(), userAgent: "kubectl-aicr" })
  try {
    const r = parseReference(ref)
    const m = await client.fetchManifest(r)
    const manifest = m.manifest as ImageManifest
    const files: Record<string, Buffer> = {}
    for (const layer of manifest.layers ?? []) {
      const title = layer.annotations?.[Annotation.Title]
      if (title !== undefined) files[title] = await client.fetchBlob(`${r.registry}/${r.repository}`, { digest: layer.digest, size: layer.size })
    }
    return { ref, files }
  } finally {
    await client.close()
  }
}

interface Binding {
  readonly rollout?: { readonly name?: string; readonly toDigest?: string }
  readonly plan?: { readonly desiredStateDigest?: string }
  readonly bundle?: { readonly ref?: string; readonly digest?: string }
  readonly approval?: {
    readonly approvedBy?: string
    readonly groups?: string[]
    readonly reason?: string
    readonly approvedAt?: string
    readonly expiresAt?: string
  }
  readonly aicr?: { readonly version?: string; readonly image?: string }
  readonly validators?: string[]
  readonly run?: { readonly id?: string; readonly result?: string; readonly reason?: string; readonly startedAt?: string; readonly completedAt?: string }
  readonly report?: { readonly digest?: string }
}
interface Ctrf {
  readonly results?: { readonly tests?: ReadonlyArray<{ name: string; status: string; duration?: number; message?: string; stdout?: string[] }> }
}

export interface EvidenceDoc {
  readonly ref: string
  readonly binding: Binding
  readonly report: Ctrf
  /** The report's sha256 equals the one the binding names. */
  readonly reportMatches: boolean
  /** `binding.json.sig` is present (a signature to verify with the KMS public key). */
  readonly signed: boolean
}

export const readEvidence = (e: EvidenceFiles): EvidenceDoc => {
  const binding = JSON.parse((e.files["binding.json"] ?? Buffer.from("{}")).toString("utf8")) as Binding
  const ctrf = e.files["ctrf.json"]
  const report = JSON.parse((ctrf ?? Buffer.from("{}")).toString("utf8")) as Ctrf
  const digest = ctrf === undefined ? undefined : `sha256:${createHash("sha256").update(ctrf).digest("hex")}`
  return {
    ref: e.ref,
    binding,
    report,
    reportMatches: digest !== undefined && digest === binding.report?.digest,
    signed: e.files["binding.json.sig"] !== undefined,
  }
}

export const evidenceText = (d: EvidenceDoc): string => {
  const b = d.binding
  const a = b.approval
  const out = [
    `Evidence:      ${d.ref}`,
    `Rollout:       ${b.rollout?.name ?? "-"} → plan ${b.plan?.desiredStateDigest ?? "-"}`,
    `Bundle:        ${b.bundle?.ref ?? "-"}${b.bundle?.digest ? ` (${b.bundle.digest})` : ""}`,
    `Approved by:   ${a ? `${a.approvedBy ?? "-"}${a.groups?.length ? ` (groups ${a.groups.join(", ")})` : ""} at ${a.approvedAt ?? "-"}, until ${a.expiresAt ?? "-"}: ${a.reason ?? ""}` : "-"}`,
    `AICR:          ${b.aicr?.version ?? "-"} (${b.aicr?.image ?? "-"}); validators ${(b.validators ?? []).join(", ") || "-"}`,
    `Run:           ${b.run?.id ?? "-"}: ${b.run?.result ?? "-"} (${b.run?.reason ?? "-"}), ${b.run?.startedAt ?? "-"} → ${b.run?.completedAt ?? "-"}`,
    `Report:        ${d.reportMatches ? "ctrf.json is the report the binding names (sha256 matches)" : "MISMATCH: ctrf.json is not the report the binding names"}`,
    `Signature:     ${d.signed ? "binding.json.sig present; verify it with the KMS public key: cosign verify-blob --key <public key> --signature binding.json.sig --insecure-ignore-tlog binding.json" : "none (unsigned evidence)"}`,
    "",
    "Checks:",
  ]
  for (const t of d.report.results?.tests ?? []) {
    out.push(`  ${t.name}: ${t.status} (${t.duration ?? 0} ms)${t.message ? `: ${t.message}` : ""}`)
    for (const line of (t.stdout ?? []).slice(-20)) out.push(`    ${line}`)
  }
  return out.join("\n") + "\n"
}
