// The first install of the reference recipe (AICR's pinned version, 13 releases) through the whole pipeline, once
// with the stand-in charts and once with the real upstream charts, in one run (`npm run bench real-charts`). Not a
// test: it prints one JSON object. Each run is `hack/aicr-dev.mjs up --detach` in its own state dir (the charts
// chosen with AICR_UPSTREAM_CHARTS=stand-in or real), the rollout approved with `kubectl aicr approve` as the approver, then:
//  - wall time from the approval to the runtime's Ready=True;
//  - per release: the API writes Argo CD made while that release's step ran (audit log, Argo CD's own user; the
//    executor rolls out one release at a time, so a write belongs to the step whose Application was written last),
//    the sync operations Argo CD recorded (status.history) and the retries of the last one;
//  - the largest object written: the biggest live object among every Application's resources (JSON bytes).
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { LABEL_OUTCOME } from "@aicr/api"
import { type Application } from "@aicr/argocd"
import { ARGOCD_NAMESPACE, eventually, expectOk, type HarnessInfo, kubeRequest, readAuditEvents, repoRoot } from "@aicr/testing/harness"

const run = promisify(execFile)
const root = repoRoot()
const dev = join(root, "hack", "aicr-dev.mjs")
const APPS = `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications`
const ROLLOUTS = "/apis/operator.aicr.run/v1alpha1/runtimerollouts"
const RUNTIME = "/apis/operator.aicr.run/v1alpha1/clusterruntimes/cluster"
const ARGOCD_USER = "system:argocd-application-controller"
const EXECUTOR_USER = "system:serviceaccount:aicr-system:aicr-step-executor"

const install = async (charts: "stand-in" | "real") => {
  const dir = mkdtempSync(join(tmpdir(), `aicr-bench-${charts}-`))
  // The step timeout as up raises it for the real charts (up passes it to the chart): on a shared 2-core machine
  // kube-prometheus-stack's first sync on the real charts took longer than the default 15 minutes.
  const env = { ...process.env, AICR_LOCAL_DIR: dir, AICR_UPSTREAM_CHARTS: charts, AICR_STEP_TIMEOUT: "45m" }
  try {
    await run(process.execPath, [dev, "up", "--detach"], { cwd: root, env, maxBuffer: 64 << 20 })
    const info = (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { info: HarnessInfo }).info
    const rollout = await eventually(
      async () => {
        const items = expectOk(await kubeRequest(info, { method: "GET", path: ROLLOUTS }), "rollouts").items as Array<{
          metadata: { name: string; labels?: Record<string, string> }
        }>
        return items.find((r) => !r.metadata.labels?.[LABEL_OUTCOME])
      },
      { timeoutMs: 600_000, what: "rollout" },
    )
    const t0 = Date.now()
    // `kubectl aicr approve` as the approver, the line up prints (the plugin fills in who approved and when).
    await run("kubectl", ["aicr", "approve", rollout.metadata.name, "--expires", "2h", "--reason", "bench", "--context", "approver"], {
      env: {
        ...process.env,
        KUBECONFIG: info.kubeconfig,
        PATH: [join(root, "dist", "apps", "kubectl-aicr"), dirname(info.bin.kubectl!), dirname(process.execPath), process.env.PATH].join(":"),
      },
    })
    await eventually(
      async () =>
        (expectOk(await kubeRequest(info, { method: "GET", path: RUNTIME }), "runtime").status?.conditions ?? []).some(
          (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
        ),
      {
        timeoutMs: 3_600_000,
        intervalMs: 1_000,
        what: "Ready=True",
      },
    )
    const seconds = +((Date.now() - t0) / 1000).toFixed(1)
    const apps = expectOk(await kubeRequest(info, { method: "GET", path: APPS }), "apps").items as Array<
      Application & { status?: { history?: unknown[]; operationState?: { retryCount?: number } } }
    >
    // Step windows: from the executor's first write of an Application to the next release's.
    const starts = readAuditEvents(info, { resource: "applications", namespace: ARGOCD_NAMESPACE, username: EXECUTOR_USER })
      .filter((e) => e.verb === "patch" || e.verb === "create")
      .map((e) => ({ name: e.objectRef!.name!, at: Date.parse((e as unknown as { requestReceivedTimestamp: string }).requestReceivedTimestamp) }))
      .filter((e, i, all) => all.findIndex((x) => x.name === e.name) === i)
      .sort((a, b) => a.at - b.at)
    const writes = readAuditEvents(info, { username: ARGOCD_USER }).filter((e) => e.objectRef?.resource !== "applications")
    const perRelease: Record<string, { writes: number; syncs: number; retries: number; largestObjectBytes: number; largestObject: string }> = {}
    let largest = { bytes: 0, object: "" }
    for (const [i, s] of starts.entries()) {
      const end = starts[i + 1]?.at ?? Number.POSITIVE_INFINITY
      const app = apps.find((a) => a.metadata.name === s.name)
      let big = { bytes: 0, object: "" }
      for (const r of app?.status?.resources ?? []) {
        const kind = r.group ? `${r.kind}.${(r as { version?: string }).version}.${r.group}` : r.kind
        const got = await run(
          info.bin.kubectl!,
          ["--kubeconfig", info.kubeconfig, "get", kind, r.name, ...(r.namespace ? ["-n", r.namespace] : []), "-o", "json"],
          { maxBuffer: 64 << 20 },
        ).catch(() => undefined)
        if (got === undefined) continue
        const bytes = Buffer.byteLength(JSON.stringify(JSON.parse(got.stdout)))
        if (bytes > big.bytes) big = { bytes, object: `${r.kind}/${r.name}` }
      }
      if (big.bytes > largest.bytes) largest = big
      perRelease[s.name] = {
        writes: writes.filter((e) => {
          const at = Date.parse((e as unknown as { requestReceivedTimestamp: string }).requestReceivedTimestamp)
          return at >= s.at && at < end
        }).length,
        syncs: app?.status?.history?.length ?? 0,
        retries: app?.status?.operationState?.retryCount ?? 0,
        largestObjectBytes: big.bytes,
        largestObject: big.object,
      }
    }
    return { charts, releases: apps.length, approvalToReadySeconds: seconds, argoCdWrites: writes.length, largestObject: largest, perRelease }
  } finally {
    await run(process.execPath, [dev, "down"], { cwd: root, env }).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}

const standIn = await install("stand-in")
const real = await install("real")
process.stdout.write(`${JSON.stringify({ standIn, real })}\n`)
process.exit(0)
