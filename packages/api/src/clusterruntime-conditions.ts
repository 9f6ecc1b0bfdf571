/**
 * Condition catalog of `ClusterRuntime`: type, owner (architecture.md §2), polarity and every reason with when it
 * surfaces. Reasons are operator.md §3.2's [D]/[C] vocabulary; the few we add are in ADR 20261202-condition-catalog.
 */
import { ConditionDef, StandardUnknownReasons } from "@aicr/conditions"

/** Discovery failures (operator.md §3.2, Discovery runbook). */
const discoveryReasons = {
  NodeGroupEmpty: "a placement nodeSelector matches no node",
  PlacementOverlap: "a node matches both the system and the accelerated nodeSelector",
  AcceleratedGroupHeterogeneous: "the accelerated group mixes accelerator or OS profiles; one homogeneous profile is supported",
  SnapshotIncomplete: "the AICR snapshot lacks facts the recipe needs",
  CriteriaConflict: "the snapshot contradicts spec.criteria",
} as const

/** AICR Job failures, mapped from the CLI's exit codes (operator.md §3.2, AICR Job runbook). */
const aicrJobReasons = {
  AICRInvalidRequest: "AICR refused the request (exit code for invalid input)",
  AICRNotFound: "AICR could not find a referenced input (recipe data, component, file)",
  AICRUnauthorized: "AICR was refused by the cluster or the registry",
  AICRInternal: "AICR failed internally",
  AICRTimeout: "an AICR Job ran past its deadline",
} as const

const versionReasons = {
  AICRVersionMismatch:
    "the pinned AICR is outside >=1.0.0,<2.0.0 (or a prerelease without the allowance), or an artifact records an AICR version other than the pinned one",
  AICRArtifactUnsupported: "an artifact's apiVersion or schema is one the operator's parsers do not accept",
} as const

const renderReasons = {
  OverridePathUnknown: "an override is absent from the rendered values (an unknown component key, which AICR ignores silently); the message names each",
  InvalidOverride: "an override AICR cannot express: it refused the --set, or the path runs through a value that is not a map; the message names each",
  InvalidPlacement: "a placement AICR cannot express",
  NamespaceNotAllowed: "the plan renders releases outside the chart's namespaces.components; the message names each",
  ChartSourceUnsupported:
    "a rendered release holds no chart source the mirror can copy: neither an upstream chart reference nor a local chart, or an upstream that lacks the chart",
  ContentTooLarge: "a plan or content ConfigMap would pass 1 MiB",
  Conflict: "a registry tag or object name already holds different content",
} as const

const credentialReasons = {
  RegistryCredentialsUnavailable: "no registry credentials could be obtained",
  RegistryCredentialsStale: "the registry token is past its expiry annotation",
  Unauthorized: "the registry or the API server refused the operator",
} as const

const engineReasons = {
  EngineMissing: "Argo CD's CRDs are absent; Applications are watched once they appear",
  ProjectMissing: "the AppProject named by engine.project cannot be read",
  Unauthorized: "the operator is not authorised on Argo CD's objects",
} as const
/** [I] Not on Ready (whose reasons are the documented ones): EngineAvailable and Stalled only. */
const engineDownReason = {
  EngineNotResponding: "Argo CD has not compared an operator Application for longer than the operator allows: its application-controller is down or stuck",
} as const

const rolloutStallReasons = {
  AwaitingApproval: "a rollout waits for kubectl aicr approve",
  AwaitingAcknowledgement: "a manual step's post-apply actions wait for kubectl aicr acknowledge",
  TransitionBlocked: "upgrade-check rated a change blocked, or an identity change needs a qualified migration; no rollout starts",
  InventoryDrift: "live engine objects differ from what the plan and rollout expect",
  StepUnknown: "a rollout references a step kind this operator build does not understand",
  MovedReleaseMissing: "a release that moved between plans cannot be found at its old location",
  NamespaceMissing: "a step's release namespace does not exist (Argo CD does not create namespaces); the message gives the command that creates it",
  EngineSuspensionRefused: "an Application could not be suspended",
  RolloutFailed: "a step failed or timed out; nothing rolls back on its own",
  RolloutExpired: "the rollout or its approval expired",
  RolloutRevoked: "an approver revoked the rollout",
  ForeignObject: "an engine object with the wanted name was not created by this operator",
  OrphanedObjectsPresent: "engine objects of another runtime UID exist and spec.adoption does not name it",
  AdoptionBlocked: "the adopted runtime's objects do not rebuild into a plan, or were edited out of band",
  ValidationUnavailable: "validation is Required but not installed (chart validation.enabled=false)",
  PlanUnreadable: "a plan ConfigMap is malformed or its digest does not match",
} as const

/** Ready: the target plan is fully rolled out and ready at its revisions, validation passed when required. Oscillates. */
export const Ready = ConditionDef.make({
  type: "Ready",
  owner: "planner",
  polarity: "normal-true",
  doc: "True when the target plan is fully rolled out, every release is ready at its current revision and validation passed when required; oscillates",
  reasons: {
    True: {
      RolledOut: "the active plan is the target, every release is ready and validation passed",
      ValidationDisabled: "as RolledOut, with spec.validation.deployment Disabled",
    },
    False: {
      RollingOut: "a rollout is assessed, waits or runs; the message names the rollout and step",
      NotReady: "a release of the active plan is not ready at its revision",
      NoActivePlan: "nothing has been rolled out yet and no rollout exists",
      Paused: "spec.paused is set",
      EngineSuspended: "spec.suspendEngine is set",
      EngineSuspensionRefused: "spec.suspendEngine is set but an Application could not be suspended",
      ...engineReasons,
      PlanUnreadable: "the active or target plan, or a pinned plan's chart, cannot be read (malformed, untrusted, missing); no rollout is open",
      Deleting: "the runtime is being deleted",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Stalled (kstatus): progress needs a human; the reason selects the runbook. */
export const Stalled = ConditionDef.make({
  type: "Stalled",
  owner: "planner",
  polarity: "abnormal-true",
  doc: "True when progress needs a human; carries the reason and message of the condition that stalled; oscillates",
  reasons: {
    True: {
      ...discoveryReasons,
      ...renderReasons,
      ...aicrJobReasons,
      ...versionReasons,
      ...credentialReasons,
      ...engineReasons,
      ...engineDownReason,
      Unauthorized: "the registry, Argo CD or the API server refused the operator",
      RegistryUnsupported: "registry.auth.provider aws with a registry that is not a private ECR registry (public.ecr.aws is unsupported)",
      Throttled: "AWS keeps throttling the registry token request",
      ...rolloutStallReasons,
    },
    False: { NotStalled: "nothing needs a human" },
    Unknown: StandardUnknownReasons,
  },
})

/** Discovered: the placement selects usable node groups and the snapshot agrees with spec.criteria. */
export const Discovered = ConditionDef.make({
  type: "Discovered",
  owner: "resolver",
  polarity: "normal-true",
  doc: "True when the placement selects usable node groups and the latest snapshot agrees with spec.criteria; oscillates as nodes change",
  reasons: {
    True: { NodeGroupsDiscovered: "both node groups are selected, disjoint and homogeneous, and the snapshot is complete" },
    False: {
      Discovering: "a snapshot Job runs",
      ...discoveryReasons,
      ...aicrJobReasons,
      ...versionReasons,
      Unauthorized: "the API server refused a read or a Job",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Resolved: the current inputs resolved into a rendered bundle. */
export const Resolved = ConditionDef.make({
  type: "Resolved",
  owner: "resolver",
  polarity: "normal-true",
  doc: "True when the current inputs (spec, discovered facts, pinned AICR) resolved into a recipe and bundle; False/Resolving while that runs",
  reasons: {
    True: { InputsResolved: "recipe and bundle for the current inputDigest are published" },
    False: {
      Resolving: "a resolution runs; transient failures are retried and named in the message, not a stall",
      ...discoveryReasons,
      ...renderReasons,
      ...aicrJobReasons,
      ...versionReasons,
      ...credentialReasons,
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Mirrored: every chart of the resolution is in the runtime registry, digest-pinned. */
export const Mirrored = ConditionDef.make({
  type: "Mirrored",
  owner: "registry-mirror",
  polarity: "normal-true",
  doc: "True when every chart, wrapper and the bundle of the current resolution are in the runtime registry, digest-pinned",
  reasons: {
    True: { ContentMirrored: "charts, wrappers and bundle of status.resolution.inputDigest are pushed" },
    False: {
      Mirroring: "a copy runs; transient registry failures are retried and named in the message, not a stall",
      AwaitingResolution: "Resolved is not True for this generation",
      ChartSourceUnsupported: renderReasons.ChartSourceUnsupported,
      ContentTooLarge: "a chart or content object is too large to mirror",
      Conflict: renderReasons.Conflict,
      ...credentialReasons,
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Planned: the target plan is composed, assessed, and its rollout exists (or no change is needed). */
export const Planned = ConditionDef.make({
  type: "Planned",
  owner: "planner",
  polarity: "normal-true",
  doc: "True when the target plan is written and assessed and its rollout exists, or the target equals the active plan",
  reasons: {
    True: { PlanComputed: "the target plan ConfigMap exists and a rollout targets it, or nothing changes" },
    False: {
      AwaitingResolution: "Resolved or Mirrored is not True for this generation",
      Stabilizing: "inputs changed within the stabilization window; the message names when it ends",
      Deleting: "the runtime is being deleted: no rollout towards a target is planned, only the removal of what runs",
      Assessing: "aicr upgrade-check runs before the rollout exists; not a stall",
      Paused: "spec.paused is set: the target plan starts no assessment and no rollout until it is cleared; not a stall",
      TransitionBlocked: rolloutStallReasons.TransitionBlocked,
      OrphanedObjectsPresent: rolloutStallReasons.OrphanedObjectsPresent,
      AdoptionBlocked: rolloutStallReasons.AdoptionBlocked,
      PlanUnreadable: rolloutStallReasons.PlanUnreadable,
      ContentTooLarge: renderReasons.ContentTooLarge,
      Conflict: renderReasons.Conflict,
      ...aicrJobReasons,
      ...versionReasons,
    },
    Unknown: StandardUnknownReasons,
  },
})

/** EngineAvailable: Argo CD's CRDs are present, the AppProject readable and the operator authorised. */
export const EngineAvailable = ConditionDef.make({
  type: "EngineAvailable",
  owner: "step-executor",
  polarity: "normal-true",
  doc: "True when Argo CD's CRDs are present, the AppProject is readable and the operator is authorised",
  reasons: {
    True: { EngineReady: "Application CRD present, AppProject readable, writes authorised" },
    False: { ...engineReasons, ...engineDownReason },
    Unknown: StandardUnknownReasons,
  },
})

/** RegistryCredentialsReady: Argo CD and pushing Jobs have unexpired registry credentials. */
export const RegistryCredentialsReady = ConditionDef.make({
  type: "RegistryCredentialsReady",
  owner: "ecr-credential-refresher",
  polarity: "normal-true",
  doc: "True when the registry credentials are present and unexpired: for aws the minted token in the repo-creds and docker-config Secrets, for static the admin's docker-config Secret",
  reasons: {
    True: {
      TokenRefreshed: "an ECR token was minted and written, and is not near expiry",
      CredentialsPresent: "admin-supplied (static) or in-cluster credentials are present",
    },
    False: {
      ...credentialReasons,
      RegistryUnsupported: "registry.auth.provider aws with a registry that is not a private ECR registry (public.ecr.aws is unsupported)",
      Throttled: "AWS throttled the token request; retried with backoff, not a stall",
    },
    Unknown: StandardUnknownReasons,
  },
})

/** Every condition type on ClusterRuntime, in the order printed by catalogs. */
export const ClusterRuntimeConditions = [Ready, Stalled, Discovered, Resolved, Mirrored, Planned, EngineAvailable, RegistryCredentialsReady] as const
