// What the comparison-exception int tests share: an Application as the step executor writes it for a real chart,
// AICR's own values for a component (from the real `aicr bundle` of a pinned AICR), and the with/without checks on
// real Argo CD: a comparison after the first successful sync reports exactly the expected resources OutOfSync, or the
// Application is ready at its digest and later comparisons find nothing different.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { aicrBinary, ARGOCD_NAMESPACE, deleteApplication, eventually, expectOk, getApplication, type HarnessInfo, kubeRequest } from "@aicr/testing/harness"
import type { Chart } from "@aicr/testing/world"
import { expect } from "vitest"
import { parse } from "yaml"
import { type Application, notReadyAt, releaseApplication } from "../src/index"

export const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`

/** The Application the step executor writes for `chart` (project default), deploying into `namespace`. */
export const chartApplication = (name: string, namespace: string, chart: Chart, values: Record<string, unknown> = {}) =>
  releaseApplication({
    name,
    namespace: ARGOCD_NAMESPACE,
    project: "default",
    release: name,
    destinationNamespace: namespace,
    chartRef: chart.ref,
    chartDigest: chart.digest,
    valuesDigest: "sha256:0",
    values,
    labels: {},
    planDigest: "sha256:0",
    writtenAt: new Date().toISOString(),
    syncRetries: 0,
    record: {
      release: { name, namespace, order: 0, dependsOn: [], chart: { ref: chart.ref, digest: chart.digest }, values: { digest: "sha256:0" } },
      plan: [name],
    },
  })

/**
 * The bundle of the reference recipe (EKS, H100, Ubuntu, training, Kubeflow) made by the real `aicr` of `version` in
 * `work`: `<work>/bundle/<component>/values.yaml` are AICR's values for each release.
 */
export const aicrBundle = (version: string, work: string): string => {
  const env = { PATH: process.env.PATH ?? "", HOME: work }
  const recipe = join(work, `recipe-${version}.yaml`)
  const out = join(work, `bundle-${version}`)
  execFileSync(
    aicrBinary(version),
    ["recipe", "--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training", "--platform", "kubeflow", "--output", recipe],
    { env, stdio: "ignore" },
  )
  execFileSync(aicrBinary(version), ["bundle", "--recipe", recipe, "--output", out], { env, stdio: "ignore" })
  return out
}

/** AICR's values for one component of a bundle made by `aicrBundle`. */
export const bundleValues = (bundle: string, component: string): Record<string, unknown> =>
  parse(readFileSync(join(bundle, component, "values.yaml"), "utf8")) as Record<string, unknown>

type Compared = Awaited<ReturnType<typeof getApplication>>
export const reconciledAt = (a: Compared): string => (a.status as { reconciledAt?: string }).reconciledAt ?? ""
/** The resources Argo CD's comparison reported OutOfSync (hooks, which carry no sync status, are not among them). */
export const outOfSyncResources = (a: Compared): string[] =>
  ((a.status as { resources?: Array<{ kind: string; name: string; status?: string }> }).resources ?? [])
    .filter((r) => r.status === "OutOfSync")
    .map((r) => `${r.kind}/${r.name}`)

/** Creates the Application, runs the check, and deletes it whatever happened (the real charts' objects have fixed names). */
export const withApplication = async (
  info: HarnessInfo,
  app: { readonly metadata: { readonly name: string }; readonly spec: unknown },
  check: () => Promise<void>,
) => {
  expectOk(await kubeRequest(info, { method: "POST", path: APPS, body: app }), `create ${app.metadata.name}`)
  try {
    await check()
  } finally {
    await deleteApplication(info, app.metadata.name, { timeoutMs: 600_000 })
  }
}

/** When the first sync at the chart's digest finished successfully. */
export const firstSyncFinished = async (info: HarnessInfo, name: string, at: Chart): Promise<string> =>
  eventually(
    async () => {
      const op = (await getApplication(info, name)).status?.operationState as
        { phase?: string; finishedAt?: string; syncResult?: { revision?: string } } | undefined
      return op?.phase === "Succeeded" && op.syncResult?.revision === at.digest && op.finishedAt
    },
    { timeoutMs: 1_200_000, intervalMs: 1_000, what: `Application ${name}: sync succeeded` },
  )

/**
 * Without an exception Argo CD finds the resource different after every successful sync: a comparison after the first
 * one reports the Application OutOfSync on exactly `expected` (right after a sync, and while Argo CD reloads its cluster
 * cache after a CRD change, it may report Synced, or everything OutOfSync, for some seconds; self-heal syncs again).
 */
export const outOfSyncAfterSync = async (info: HarnessInfo, name: string, at: Chart, expected: ReadonlyArray<string>) => {
  const finished = await firstSyncFinished(info, name, at)
  const seen: string[][] = []
  await eventually(
    async () => {
      const a = await getApplication(info, name)
      if (reconciledAt(a) <= finished || a.status?.sync?.status !== "OutOfSync") return false
      const different = outOfSyncResources(a)
      if (seen.length < 20) seen.push(different)
      return JSON.stringify(different) === JSON.stringify(expected)
    },
    {
      timeoutMs: 300_000,
      intervalMs: 1_000,
      what: `Application ${name}: a comparison after its sync at ${finished} reporting exactly ${expected.join(", ")} OutOfSync`,
    },
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; OutOfSync comparisons seen: ${JSON.stringify(seen)}`, { cause: e })
  })
}

/**
 * With the exceptions: ready at the digest, and every comparison until two more were made (Argo CD compares every
 * 30 s here, later under load) finds nothing different.
 */
export const stillSynced = async (info: HarnessInfo, name: string, at: Chart) => {
  // Ready by the operator's own predicate (the harness's waitForApplication compares the source with its nulls, which
  // Argo CD drops from what it compared: AICR's values hold nulls).
  let why: string[] = ["never read"]
  await eventually(
    async () => {
      why = notReadyAt((await getApplication(info, name)) as unknown as Application, at.digest)
      return why.length === 0
    },
    { timeoutMs: 900_000, intervalMs: 1_000, what: `Application ${name} ready at ${at.digest}` },
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}: ${why.join("; ")}`, { cause: e })
  })
  const seen = new Set<string>()
  const deadline = Date.now() + 300_000
  while (seen.size < 3) {
    expect(Date.now(), `Application ${name}: two more comparisons within 300 s`).toBeLessThan(deadline)
    const a = await getApplication(info, name)
    expect({ at: reconciledAt(a), sync: a.status?.sync?.status, different: outOfSyncResources(a) }).toEqual({
      at: reconciledAt(a),
      sync: "Synced",
      different: [],
    })
    seen.add(reconciledAt(a))
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}
