import { describe, expect, it } from "vitest"
import { HELP, parseArgs, parseDuration } from "./args"

describe("parseArgs", () => {
  it("parses the seed's command lines, flags before or after the name", () => {
    expect(parseArgs(["approve", "cluster-1", "--expires", "2h", "--reason", "Maintenance window"])).toMatchObject({
      _tag: "Run",
      command: "approve",
      name: "cluster-1",
      flags: { expires: "2h", reason: "Maintenance window", operatorNamespace: "aicr-system", dir: "aicr-reproduce" },
    })
    expect(parseArgs(["--context", "prod", "describe", "-o", "yaml", "cluster-1"])).toMatchObject({
      _tag: "Run",
      command: "describe",
      name: "cluster-1",
      flags: { context: "prod", output: "yaml" },
    })
    expect(parseArgs(["reproduce"])).toMatchObject({ _tag: "Run", command: "reproduce", name: undefined, flags: { plan: undefined } })
    expect(parseArgs(["reproduce", "--plan=sha256:ab"])).toMatchObject({ flags: { plan: "sha256:ab" } })
    expect(parseArgs(["reproduce", "ab12", "-ojson"])).toMatchObject({ flags: { plan: "ab12", output: "json" } })
    expect(parseArgs(["acknowledge", "r", "--step", "a", "--step", "b"])).toMatchObject({ flags: { step: ["a", "b"] } })
  })

  it("answers --help on every command, and help COMMAND", () => {
    for (const c of ["describe", "approve", "revoke", "acknowledge", "evidence", "reproduce", "completion"] as const) {
      expect(parseArgs([c, "--help"])).toEqual({ _tag: "Help", command: c })
      expect(HELP[c]).toContain("--kubeconfig")
    }
    expect(parseArgs([])).toEqual({ _tag: "Help", command: undefined })
    expect(parseArgs(["help", "approve"])).toEqual({ _tag: "Help", command: "approve" })
  })

  it.each([
    { argv: ["approve", "r"], want: 'approve needs --reason "…" (why you approve)' },
    { argv: ["revoke", "r", "--reason", " "], want: 'revoke needs --reason "…" (why you revoke)' },
    { argv: ["describe"], want: "describe needs a rollout name: kubectl aicr describe ROLLOUT (kubectl get runtimerollouts lists them)" },
    { argv: ["approve", "r", "--reason"], want: "flag --reason needs a value" },
    {
      argv: ["frobnicate"],
      want: 'unknown command "frobnicate"; commands: describe, watch, approve, revoke, acknowledge, evidence, reproduce, completion, help',
    },
    { argv: ["describe", "r", "--bogus"], want: "unknown flag --bogus; see kubectl aicr --help" },
    { argv: ["describe", "r", "-o", "table"], want: "--output must be json or yaml, not table" },
    { argv: ["describe", "a", "b"], want: "describe takes one name, got a b" },
    { argv: ["approve", "r", "--reason", "x".repeat(1025)], want: "--reason is 1025 characters; at most 1024" },
    { argv: ["completion", "fish"], want: "completion needs a shell: bash or zsh" },
  ])("refuses $argv with a usage message", ({ argv, want }) => expect(parseArgs(argv)).toEqual({ _tag: "Usage", message: want }))
})

describe("parseDuration", () => {
  it.each([
    ["2h", 7_200_000],
    ["90m", 5_400_000],
    ["1h30m", 5_400_000],
    ["45s", 45_000],
    ["1.5h", 5_400_000],
    ["-1h", -3_600_000],
    ["1d", 86_400_000],
  ] as const)("%s → %i ms", (text, ms) => expect(parseDuration(text)).toBe(ms))
  it.each(["", "2", "h", "2 hours", "1h-5m"])("refuses %j", (text) => expect(parseDuration(text)).toBeUndefined())
})
