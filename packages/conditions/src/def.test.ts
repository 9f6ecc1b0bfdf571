import { describe, expect, it } from "vitest"
import { ConditionDef, StandardUnknownReasons, type ReasonCatalog } from "./def"

const Approved = ConditionDef.make({
  type: "Approved",
  owner: "approval-guard",
  polarity: "normal-true",
  doc: "This rollout may proceed now",
  reasons: {
    True: { ApprovedByUser: "an approval bound to the target plan is present" },
    False: { AwaitingApproval: "no approval yet", RolloutRevoked: "an approver revoked the rollout" },
    Unknown: StandardUnknownReasons,
  },
})

const Stalled = ConditionDef.make({
  type: "Stalled",
  owner: "planner",
  polarity: "abnormal-true",
  doc: "Progress needs a human",
  reasons: { True: { AwaitingApproval: "a rollout waits for an approval" }, False: { NotStalled: "nothing needs a human" } },
})

describe("ConditionDef constructors", () => {
  it.each([
    { name: "builds True with a True reason", got: Approved.true("ApprovedByUser", "Approved by alice"), want: { status: "True", reason: "ApprovedByUser" } },
    { name: "builds False with a False reason", got: Approved.false("AwaitingApproval", "Waiting"), want: { status: "False", reason: "AwaitingApproval" } },
    {
      name: "builds Unknown with a standard reason",
      got: Approved.unknown("InternalError", "Please check controller logs for errors"),
      want: { status: "Unknown", reason: "InternalError" },
    },
  ])("$name", ({ got, want }) => {
    expect(got).toMatchObject({ type: "Approved", ...want })
  })

  it("formats the message: no trailing period, one line", () => {
    expect(Approved.false("AwaitingApproval", "Waiting for an approval.\nSee kubectl aicr describe.").message).toBe(
      "Waiting for an approval; See kubectl aicr describe",
    )
  })

  it("refuses a reason of another status at compile time and at run time", () => {
    // @ts-expect-error AwaitingApproval is a False reason, not a True one
    expect(() => Approved.true("AwaitingApproval", "x")).toThrow(/not a True reason/)
  })

  it("refuses any reason for a status without a catalog", () => {
    // @ts-expect-error Stalled has no Unknown reasons
    expect(() => Stalled.unknown("NotYetObserved", "x")).toThrow(/not a Unknown reason/)
  })
})

describe("ConditionDef metadata", () => {
  it.each([
    { name: "a normal-true condition is healthy when True", def: Approved, want: "True" },
    { name: "an abnormal-true condition is healthy when False", def: Stalled, want: "False" },
  ])("$name", ({ def, want }) => {
    expect(def.healthy).toBe(want)
  })

  it("lists every reason with its status, in declaration order", () => {
    expect(Stalled.entries()).toEqual([
      { status: "True", reason: "AwaitingApproval", doc: "a rollout waits for an approval" },
      { status: "False", reason: "NotStalled", doc: "nothing needs a human" },
    ])
  })

  it("answers whether a reason belongs to a status", () => {
    expect([Approved.allows("False", "RolloutRevoked"), Approved.allows("True", "RolloutRevoked"), Approved.allows("True", "toString")]).toEqual([
      true,
      false,
      false,
    ])
  })
})

describe("ConditionDef.make validation", () => {
  it.each([
    { name: "refuses a type with a space", spec: { type: "Not Ready", reasons: {} }, want: /not a valid metav1.Condition type/ },
    { name: "refuses a reason that is not CamelCase", spec: { type: "Ready", reasons: { True: { "rolled-out": "x" } } }, want: /not CamelCase/ },
    { name: "refuses a reason without surfaces-when text", spec: { type: "Ready", reasons: { True: { RolledOut: " " } } }, want: /no "surfaces when" text/ },
    { name: "refuses a definition without owner", spec: { type: "Ready", owner: "", reasons: {} }, want: /no owner/ },
  ] as ReadonlyArray<{ name: string; spec: { type: string; owner?: string; reasons: ReasonCatalog }; want: RegExp }>)("$name", ({ spec, want }) => {
    expect(() => ConditionDef.make({ owner: "planner", polarity: "normal-true", doc: "d", ...spec })).toThrow(want)
  })
})
