// vitest globalSetup of the `int` and `e2e` projects: a fresh local control plane per run (never skipped: any
// component that cannot start fails the run with its log tail). Tests read it with `inject("harness")`. The `e2e`
// project also gets Argo CD (`inject("argocd")`); `int` tests that need it start their own with startArgoCd, so the
// many that do not are not slowed down (docs/adr/20261202-argocd-on-demand.md).
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { type ArgoCd, type ArgoCdInfo, startArgoCd } from "./argocd"
import { applyManifests } from "./kube"
import { startControlPlane } from "./plane"
import { HarnessError } from "./proc"
import { repoRoot } from "./tools"
import type { HarnessInfo } from "./types"

declare module "vitest" {
  export interface ProvidedContext {
    harness: HarnessInfo
    /** Set in the e2e project only. */
    argocd: ArgoCdInfo | undefined
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now()
  // $AICR_HARNESS_DIR/<project> keeps state and logs at a known place (one subdir per project, since `int` and `e2e`
  // may run in one vitest invocation); whatever an earlier run left there is stopped and replaced.
  const fixedDir = process.env.AICR_HARNESS_DIR
  const dir = fixedDir ? join(fixedDir, project.name) : mkdtempSync(join(tmpdir(), "aicr-harness-"))
  const plane = await startControlPlane({ dir, fresh: true })
  // Every CRD of the project (override the directory with AICR_HARNESS_CRDS).
  const crds = process.env.AICR_HARNESS_CRDS ?? join(repoRoot(), "crds")
  try {
    if (existsSync(crds) && readdirSync(crds).some((f) => /\.ya?ml$/.test(f))) await applyManifests(plane.info, crds)
  } catch (e) {
    await plane.stop()
    throw new HarnessError(`harness: applying ${crds} failed (logs kept in ${dir}): ${e instanceof Error ? e.message : String(e)}`, { cause: e })
  }
  let argocd: ArgoCd | undefined
  if (project.name === "e2e") {
    try {
      argocd = await startArgoCd(plane.info)
    } catch (e) {
      await plane.stop()
      throw e
    }
  }
  project.provide("harness", plane.info)
  project.provide("argocd", argocd?.info)
  const v = plane.info.versions
  process.stderr.write(
    `[harness] ${project.name}: kube ${v.k8s}, etcd ${v.etcd}, kwok ${v.kwok}, helm ${v.helm}, ${v.registry}, aicr ${v.aicr} and ${v.aicrPrevious}; ` +
      `started ${plane.info.startedAt} in ${((Date.now() - t0) / 1000).toFixed(1)}s; ${plane.info.server}, dir ${dir}` +
      (argocd ? `; Argo CD ${argocd.info.version} in ${(argocd.startMs / 1000).toFixed(1)}s` : "") +
      "\n",
  )
  return async () => {
    await argocd?.stop()
    await plane.stop()
    if (!fixedDir && process.env.AICR_HARNESS_KEEP !== "1") rmSync(dir, { recursive: true, force: true })
  }
}
