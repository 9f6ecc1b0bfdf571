import type { RuntimeRollout } from "@aicr/api"
import { describe, expect, it } from "vitest"
import { parseArgs } from "./args"
import { duration, frame, line, OUTCOME_EXIT } from "./watch"

const T = Date.parse("2026-12-03T10:00:00Z")
const t = (s: number) => new Date(T + s * 1000).toISOString().replace(/\.\d+Z$/u, "Z")
const cond = (type: string, status: string, reason: string, message: string, s = 0) => ({
  type,
  status,
  reason,
  message,
  observedGeneration: 1,
  lastTransitionTime: t(s),
})
const rollout = (o: { items: unknown[]; done: number; current?: string; outcome?: string; conditions?: unknown[]; validation?: unknown }) =>
  ({
    apiVersion: "operator.aicr.run/v1alpha1",
    kind: "RuntimeRollout",
    metadata: { name: "cluster-0123456789ab-2", ...(o.outcome ? { labels: { "operator.aicr.run/outcome": o.outcome } } : {}) },
    spec: {
      runtimeUID: "u",
      kind: "Upgrade",
      toDigest: "sha256:0",
      deadline: t(86_400),
      requiresApproval: true,
      approval: { approvedBy: "bob", groups: [], reason: "r", approvedAt: t(0), expiresAt: t(7200), toDigest: "sha256:0" },
    },
    status: {
      conditions: o.conditions ?? [],
      steps: { total: 3, done: o.done, ...(o.current ? { current: o.current } : {}), items: o.items },
      ...(o.validation ? { validation: o.validation } : {}),
    },
  }) as unknown as RuntimeRollout
const step = (index: number, release: string, state: string, extra: Record<string, unknown> = {}) => ({
  index,
  release,
  namespace: release,
  action: "Upgrade",
  state,
  ...extra,
})

describe("kubectl aicr watch: the screen", () => {
  it("durations read like a person writes them", () => {
    expect([duration(0), duration(12_400), duration(65_000), duration(3_725_000), duration(-5)]).toEqual(["0s", "12s", "1m05s", "1h02m", "0s"])
  })

  it("draws a progress bar, each finished step's duration, and the step in flight against its deadline", () => {
    const r = rollout({
      done: 1,
      current: "2/3 gpu-operator (Upgrade)",
      items: [
        step(1, "cert-manager", "Ready", { startedAt: t(0) }),
        step(2, "gpu-operator", "WaitingForReady", { startedAt: t(42), deadline: t(42 + 900) }),
        step(3, "kai-scheduler", "Pending"),
      ],
      conditions: [cond("Progressing", "True", "StepInProgress", "step 2/3 gpu-operator (Upgrade): Waiting for v25.10.1", 42)],
    })
    const screen = frame(r, T + 107_000, 80)
    expect(screen.split("\n")).toEqual([
      "cluster-0123456789ab-2  Upgrade  approved by bob",
      "[#############---------------------------] 1/3  2/3 gpu-operator (Upgrade)",
      "  ✓   1 cert-manager  Upgrade 42s",
      `  ▶   2 gpu-operator  Upgrade 1m05s of 15m00s (deadline ${t(942)})`,
      "  ·   3 kai-scheduler Upgrade",
      // Cut to the 80 columns of this terminal.
      "Progressing: True StepInProgress: step 2/3 gpu-operator (Upgrade): Waiting for…",
      "",
    ])
  })

  it("ends with every step's duration (the last one's up to the steps' completion), the outcome and the validation", () => {
    const r = rollout({
      done: 3,
      outcome: "Succeeded",
      items: [step(1, "a", "Ready", { startedAt: t(0) }), step(2, "b", "Ready", { startedAt: t(10) }), step(3, "c", "Ready", { startedAt: t(25) })],
      conditions: [
        cond("Progressing", "True", "StepsCompleted", "All 3 steps are ready", 95),
        cond("Ready", "True", "RolledOut", "rollout done; validation run 1", 120),
      ],
      validation: { result: "Passed", runID: "20261203-100200-0123456789abcdef", evidenceRef: "r/aicr/evidence/cluster@sha256:1" },
    })
    const screen = frame(r, T + 130_000, 120)
    expect(screen).toContain("ended Succeeded")
    expect(screen).toContain("[########################################] 3/3")
    expect(
      screen
        .split("\n")
        .filter((l) => l.startsWith("  ✓"))
        .map((l) => l.split(/\s+/u).at(-1)),
    ).toEqual(["10s", "15s", "1m10s"])
    expect(screen).toContain("Ready: True RolledOut: rollout done; validation run 1")
    expect(screen).toContain("validation: Passed (run 20261203-100200-0123456789abcdef), evidence r/aicr/evidence/cluster@sha256:1")
  })

  it("piped, one line names the step in flight and its state, or the outcome", () => {
    const inFlight = rollout({
      done: 1,
      items: [step(1, "a", "Ready"), step(2, "b", "AwaitingAcknowledgement"), step(3, "c", "Pending")],
      conditions: [cond("Progressing", "False", "AwaitingAcknowledgement", "m")],
    })
    expect(line(inFlight)).toBe("cluster-0123456789ab-2 2/3 b (Upgrade) AwaitingAcknowledgement; AwaitingAcknowledgement")
    const revoked = rollout({
      done: 1,
      outcome: "Revoked",
      items: [step(1, "a", "Ready"), step(2, "b", "Pending"), step(3, "c", "Pending")],
      conditions: [cond("Progressing", "False", "RolloutRevoked", "revoked by bob")],
    })
    expect(line(revoked)).toBe("cluster-0123456789ab-2 ended Revoked: 1/3 steps ready; RolloutRevoked: revoked by bob")
  })

  it("exits with the outcome, never with the usage error's 2", () => {
    expect(OUTCOME_EXIT).toEqual({ Succeeded: 0, Failed: 1, Expired: 3, Revoked: 4, Superseded: 5 })
  })

  it("watch and describe --watch / -w parse; watch needs a name", () => {
    expect(parseArgs(["watch", "r1"])).toMatchObject({ _tag: "Run", command: "watch", name: "r1" })
    expect(parseArgs(["describe", "r1", "--watch"])).toMatchObject({ _tag: "Run", command: "describe", flags: { watch: true } })
    expect(parseArgs(["describe", "-w", "r1"])).toMatchObject({ _tag: "Run", command: "describe", name: "r1", flags: { watch: true } })
    expect(parseArgs(["watch"])).toEqual({
      _tag: "Usage",
      message: "watch needs a rollout name: kubectl aicr watch ROLLOUT (kubectl get runtimerollouts lists them)",
    })
  })
})
