// Fixture-based: no AICR 1.x binary runs here (the local control plane builds v0.10.16 and v0.11.1, which have no
// upgrade-check). The reports below are shaped after the documented JSON report and the goldens of AICR's
// pkg/upgrade/testdata (research/aicr-newer.md §1.4–1.6); the Job is checked as the object it builds.
import { describe, expect, it } from "vitest"
import { DEFAULT_JOB_SETTINGS, LABEL_JOB_KIND } from "./job"
import { parseUpgradeCheck, UPGRADE_CHECK_INPUT_DIR, upgradeCheckInput, upgradeCheckJob, upgradeCheckJobName } from "./upgrade-check"

const report = (rows: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    from: "a",
    to: "b",
    deployer: "argocd",
    components: rows,
    summary: { components: rows.length, failing: 1 },
    atRisk: { scanned: false, reason: "no cluster access requested" },
    ...extra,
  })

describe("aicr upgrade-check report (fixture-based, documented shape)", () => {
  it("keeps AICR's verdicts, steps and flags, and tolerates missing optional keys", () => {
    const r = parseUpgradeCheck(
      report([
        {
          component: "alpha-operator",
          change: "version",
          from: "1.2.0",
          to: "1.2.3",
          verdict: "safe",
          notes: "3 patches, verified, safe across 1 minor",
          reason: "recorded",
          jump: "3 patches",
          covers: "1 minor",
          breaking: false,
          downgrade: false,
          failsRun: false,
        },
        {
          component: "beta-operator",
          change: "version",
          from: "0.17.2",
          to: "0.18.1",
          verdict: "manual",
          reason: "recorded",
          steps: [{ id: "rename-crs", description: "In a single commit, remove the legacy manifests and add their replacements." }],
          breaking: true,
          failsRun: true,
        },
        { component: "zeta-operator", change: "added", to: "0.4.0", notes: "new component, nothing to do", breaking: false, downgrade: false, failsRun: false },
      ]),
    )
    expect(r.ok && r.value.components.map((c) => [c.component, c.verdict, c.failsRun])).toEqual([
      ["alpha-operator", "safe", false],
      ["beta-operator", "manual", true],
      ["zeta-operator", undefined, false],
    ])
    expect(r.ok && r.value.components[1]!.steps).toEqual([
      { id: "rename-crs", description: "In a single commit, remove the legacy manifests and add their replacements." },
    ])
    expect(r.ok && r.value.summary).toEqual({ components: 3, failing: 1 })
  })

  it("reads the early shape (no identityChanges, atRisk, source) and the later one (identity rows, cluster source)", () => {
    const early = parseUpgradeCheck(
      JSON.stringify({
        components: [{ component: "delta-operator", change: "version", from: "0.18.0", to: "0.19.0", verdict: "unknown", reason: "no-record" }],
        summary: { components: 1, failing: 1 },
      }),
    )
    expect(early.ok && early.value.components[0]).toMatchObject({ verdict: "unknown", failsRun: true, breaking: false })
    const later = parseUpgradeCheck(
      report(
        [
          {
            component: "rho-operator",
            change: "identity",
            from: "2.1.0",
            to: "2.1.0",
            identityChanges: [{ field: "namespace", from: "rho-system", to: "nvidia-rho-system" }],
            verdict: "unknown",
            reason: "identity-changed",
            breaking: false,
            downgrade: false,
            failsRun: true,
          },
        ],
        {
          objectNamesCompared: true,
          source: {
            kubeconfig: "/k",
            matched: 2,
            helm: { records: 37, unattributed: 2, unreadable: 1, uninstalled: 3, stampedUnmatched: 0 },
            argo: { applications: 5, unattributed: 6, unreadable: 7 },
          },
        },
      ),
    )
    expect(later.ok && later.value.components[0]!.identityChanges).toEqual([{ field: "namespace", from: "rho-system", to: "nvidia-rho-system" }])
  })

  it("fails closed on an unknown verdict or change kind", () => {
    const r = parseUpgradeCheck(
      report([
        { component: "x", change: "teleported", verdict: "safe" },
        { component: "y", change: "version", verdict: "probably-fine" },
      ]),
    )
    expect(r.ok && r.value.components.map((c) => [c.verdict, c.failsRun, c.notes])).toEqual([
      ["unknown", true, 'unrecognised change "teleported" from upgrade-check, treated as unknown'],
      ["unknown", true, 'unrecognised verdict "probably-fine" from upgrade-check, treated as unknown'],
    ])
  })

  it("keeps blocked rows blocked, with their reason", () => {
    const r = parseUpgradeCheck(
      report([
        {
          component: "gamma-operator",
          change: "version",
          from: "1.0.0",
          to: "3.0.0",
          verdict: "blocked",
          reason: "multiple-boundaries",
          stoppedAt: ">=2.0.0 <3.0.0",
          failsRun: true,
        },
      ]),
    )
    expect(r.ok && r.value.components[0]).toMatchObject({ verdict: "blocked", reason: "multiple-boundaries" })
  })

  it("refuses a document that is not the report (no components and summary, not JSON)", () => {
    expect(parseUpgradeCheck("{}")).toMatchObject({ ok: false, why: expect.stringContaining("does not parse") })
    expect(parseUpgradeCheck("UPGRADE CHECK\n  from a.yaml\n").ok).toBe(false)
  })
})

describe("aicr upgrade-check Job", () => {
  const settings = { ...DEFAULT_JOB_SETTINGS, namespace: "aicr-jobs", image: "ghcr.io/nvidia/aicr:v1.3.0" }
  const key = "sha256:" + "ab".repeat(32)

  it("runs upgrade-check from and to the mounted recipes, JSON into its output ConfigMap, not failing on a rated change", () => {
    const job = upgradeCheckJob(settings, key) as unknown as {
      metadata: { name: string; namespace: string; labels: Record<string, string> }
      spec: {
        suspend: boolean
        backoffLimit: number
        template: { spec: { containers: Array<{ image: string; args: string[]; volumeMounts: unknown[] }>; volumes: unknown[] } }
      }
    }
    expect(job.metadata).toMatchObject({ name: upgradeCheckJobName(key), namespace: "aicr-jobs", labels: { [LABEL_JOB_KIND]: "upgrade-check" } })
    expect(job.metadata.name).toBe("aicr-upgrade-check-abababababab")
    expect(job.spec).toMatchObject({ suspend: true, backoffLimit: 0 })
    const c = job.spec.template.spec.containers[0]!
    expect(c.image).toBe("ghcr.io/nvidia/aicr:v1.3.0")
    expect(c.args).toEqual([
      "upgrade-check",
      "--from",
      `${UPGRADE_CHECK_INPUT_DIR}/from.json`,
      "--to",
      `${UPGRADE_CHECK_INPUT_DIR}/to.json`,
      "--deployer",
      "argocd",
      "--format",
      "json",
      "--fail-on-error=false",
      "--output",
      "cm://aicr-jobs/aicr-upgrade-check-abababababab",
    ])
    expect(c.volumeMounts).toEqual([{ name: "recipes", mountPath: UPGRADE_CHECK_INPUT_DIR, readOnly: true }])
    expect(job.spec.template.spec.volumes).toEqual([{ name: "recipes", configMap: { name: "aicr-upgrade-check-abababababab-input" } }])
  })

  it("owns its input ConfigMap, in its own namespace", () => {
    const input = upgradeCheckInput({ metadata: { name: "aicr-upgrade-check-abababababab", namespace: "aicr-jobs", uid: "u-1" } }, key, {
      from: '{"a":1}',
      to: '{"b":2}',
    })
    expect(input.metadata).toMatchObject({
      name: "aicr-upgrade-check-abababababab-input",
      namespace: "aicr-jobs",
      ownerReferences: [{ kind: "Job", name: "aicr-upgrade-check-abababababab", uid: "u-1", controller: true }],
    })
    expect(input["data"]).toEqual({ "from.json": '{"a":1}', "to.json": '{"b":2}' })
  })
})
