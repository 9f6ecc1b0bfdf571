/**
 * Wrapper charts around a release's manifests, composed while planning (pure; the archive is written by the mirror
 * executor): `Chart.yaml`, one template that emits every `manifests/*` file verbatim, the files themselves, and a
 * content-addressed version.
 */
import type { TarEntry } from "@aicr/oras"
import { createHash } from "node:crypto"

export const WRAPPER_TEMPLATE = '{{- range $path, $_ := .Files.Glob "manifests/*" }}\n---\n{{ $.Files.Get $path }}\n{{- end }}\n'

/** Content-addressed wrapper version: `0.0.0-aicr-<16 hex>` over the wrapped files (a valid SemVer pre-release). */
export const wrapperVersion = (files: ReadonlyArray<readonly [string, string]>): string => {
  const h = createHash("sha256")
  for (const [p, t] of files) h.update(`${Buffer.byteLength(p)}:${p}${Buffer.byteLength(t)}:${t}`)
  return `0.0.0-aicr-${h.digest("hex").slice(0, 16)}`
}

/**
 * A wrapper chart around manifests: `Chart.yaml`, one template that emits every `manifests/*` file verbatim
 * (`.Files.Get`, so text that looks like a Go template is never rendered), and the files themselves.
 */
export const manifestWrapperFiles = (
  name: string,
  version: string,
  manifests: ReadonlyArray<readonly [string, string]>,
  annotations: Readonly<Record<string, string>>,
): TarEntry[] => {
  const chartYaml = [
    "apiVersion: v2",
    `name: ${name}`,
    `version: ${version}`,
    "type: application",
    `description: ${JSON.stringify(`Manifests of release ${name}, wrapped by the aicr registry-mirror`)}`,
    "annotations:",
    ...Object.entries(annotations)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`),
    "",
  ].join("\n")
  return [
    { path: `${name}/Chart.yaml`, data: Buffer.from(chartYaml) },
    { path: `${name}/templates/manifests.yaml`, data: Buffer.from(WRAPPER_TEMPLATE) },
    ...manifests.map(([f, t]) => ({ path: `${name}/manifests/${f}`, data: Buffer.from(t) })),
  ]
}
