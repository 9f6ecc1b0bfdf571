/** Shared helpers for the real-API-server tests of @aicr/kube. */
import { makeKube, type KubeLiveOptions, type KubeShape } from "../src/index"
import { applyManifests, type HarnessInfo } from "@aicr/testing/harness"
import { widgetCrd } from "@aicr/testing"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Install the test-only Widget CRD (idempotent) and wait for it to be served. */
export const installWidgetCrd = (info: HarnessInfo) => applyManifests(info, [widgetCrd])

/** A kubeconfig (JSON is YAML) for one apiserver URL with a bearer token. */
export const writeKubeconfig = (server: string, caFile: string, token: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), "aicr-kube-int-")), "kubeconfig")
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "t",
      clusters: [{ name: "t", cluster: { server, "certificate-authority": caFile } }],
      users: [{ name: "u", user: { token } }],
      contexts: [{ name: "t", context: { cluster: "t", user: "u" } }],
    }),
  )
  return path
}

/** The live Kube against the harness as admin, counting requests. */
export const liveKube = (
  info: HarnessInfo,
  options: Omit<KubeLiveOptions, "kubeconfigPath"> = {},
): { kube: KubeShape; requests: Array<{ method: string; path: string; code: number }> } => {
  const requests: Array<{ method: string; path: string; code: number }> = []
  const kube = makeKube({
    kubeconfigPath: info.kubeconfig,
    userAgent: "aicr-kube-int-test",
    ...options,
    onResponse: (r) => {
      requests.push({ method: r.method, path: r.path, code: r.code })
      options.onResponse?.(r)
    },
  })
  return { kube, requests }
}

export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`
