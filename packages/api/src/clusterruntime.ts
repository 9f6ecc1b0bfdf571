/**
 * `ClusterRuntime` (operator.aicr.run/v1alpha1, cluster-scoped, singleton `cluster`): the user's intent and the
 * cluster-level observations, one status room per controller (architecture.md §2; ADRs 20261202-clusterruntime-spec,
 * 20261202-status-rooms).
 */
import { Condition } from "@aicr/conditions"
import { Schema } from "effect"
import {
  AicrToken,
  cel,
  Digest,
  Dns1123Label,
  listMap,
  NamespacedName,
  NodeSelector,
  NonNegativeInt,
  ObjectName,
  OciReference,
  text,
  Time,
  Tolerations,
  Uid,
} from "./common"
import { KubeObjectMeta } from "./meta"

/** One encoded override value is at most 4 KiB (`MaxOverrideValueBytes` [C]). */
export const MAX_OVERRIDE_VALUE_BYTES = 4096
export const MAX_OVERRIDES = 64
/** An override path, `component:dot.path`, is at most this long. */
export const MAX_OVERRIDE_PATH_LENGTH = 256

// ---- spec -----------------------------------------------------------------------------------------------------

export const Criteria = Schema.Struct({
  service: Schema.optionalKey(AicrToken.annotate({ description: "AICR service, e.g. eks, gke, aks, oke, kind (aicr recipe --service)." })),
  accelerator: Schema.optionalKey(AicrToken.annotate({ description: "AICR accelerator, e.g. h100, gb200, b200, a100, l40 (aicr recipe --accelerator)." })),
  os: Schema.optionalKey(AicrToken.annotate({ description: "AICR OS, e.g. ubuntu, rhel, cos, amazonlinux (aicr recipe --os)." })),
}).annotate({
  description: "What the cluster is, declared for when GPU nodes cannot be snapshot yet; a later snapshot must confirm it.",
})

export const NodeGroupPlacement = Schema.Struct({
  nodeSelector: NodeSelector,
  tolerations: Schema.optionalKey(Tolerations.annotate({ description: "Tolerations the group's components need." })),
}).annotate({ description: "Selects one node group and the tolerations to schedule onto it." })

export const Placement = Schema.Struct({
  system: Schema.optionalKey(NodeGroupPlacement.annotate({ description: "The system (non-GPU) node group." })),
  accelerated: Schema.optionalKey(NodeGroupPlacement.annotate({ description: "The GPU node group." })),
}).annotate({
  description: "Where system and GPU components run.",
  ...cel(
    { rule: "has(self.system) || has(self.accelerated)", message: "spec.placement must name at least one node group (system or accelerated)" },
    {
      rule: "!has(self.system) || !has(self.accelerated) || self.system.nodeSelector != self.accelerated.nodeSelector",
      message: "spec.placement.system and spec.placement.accelerated must not use the same nodeSelector",
    },
  ),
})

export const DeploymentValidation = Schema.Literals(["Required", "Disabled"])
export const ValidationSpec = Schema.Struct({
  deployment: Schema.optionalKey(
    DeploymentValidation.annotate({ default: "Required", description: "Whether AICR deployment validation gates every rollout." }),
  ),
}).annotate({ default: {}, description: "Deployment validation policy." })

export const Pin = Schema.Struct({
  desiredStateDigest: Digest.annotate({ description: "The desiredStateDigest of an earlier plan to roll back to and hold." }),
}).annotate({ description: "Pins the runtime to an earlier plan; assessed and approved like any change." })

/** `component:dot.path`, as `aicr bundle --set` takes it (aicr-cli.md §3.5). */
export const OVERRIDE_PATH_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?:[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/u
export const Override = Schema.Struct({
  path: Schema.String.check(Schema.isPattern(OVERRIDE_PATH_PATTERN), Schema.isMaxLength(MAX_OVERRIDE_PATH_LENGTH)).annotate({
    description: "component:dot.path of the value to set, as aicr bundle --set takes it.",
  }),
  value: text(MAX_OVERRIDE_VALUE_BYTES).annotate({
    description: "The value, as aicr bundle --set takes it (true/false and numbers are coerced); at most 4 KiB encoded.",
  }),
}).annotate(
  cel({
    rule: `size(bytes(self.value)) <= ${MAX_OVERRIDE_VALUE_BYTES}`,
    message: `an override value must be at most ${MAX_OVERRIDE_VALUE_BYTES} bytes when UTF-8 encoded (MaxOverrideValueBytes)`,
    fieldPath: ".value",
  }),
)
export type Override = typeof Override.Type
export const Overrides = Schema.Array(Override)
  .check(Schema.isMaxLength(MAX_OVERRIDES))
  .annotate({ description: "User value overrides passed to AICR; one entry per path.", ...listMap("path") })

export const Adoption = Schema.Struct({
  fromRuntimeUID: Uid.annotate({ description: "UID of the earlier runtime whose engine objects this runtime may adopt." }),
}).annotate({ description: "Lets this runtime adopt engine objects left by an earlier runtime with another UID." })

export const ClusterRuntimeSpec = Schema.Struct({
  intent: Schema.optionalKey(AicrToken.annotate({ description: "AICR intent, e.g. training or inference (aicr recipe --intent)." })),
  platform: Schema.optionalKey(AicrToken.annotate({ description: "AICR platform, e.g. kubeflow or dynamo (aicr recipe --platform)." })),
  criteria: Schema.optionalKey(Criteria),
  placement: Schema.optionalKey(Placement),
  validation: Schema.optionalKey(ValidationSpec),
  suspendEngine: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Freezes Argo CD: no syncs or self-heal of the operator's Applications; nothing is removed." }),
  ),
  paused: Schema.optionalKey(Schema.Boolean.annotate({ description: "Stops the operator starting new resolutions or steps; Argo CD keeps syncing." })),
  pin: Schema.optionalKey(Pin),
  overrides: Schema.optionalKey(Overrides),
  adoption: Schema.optionalKey(Adoption),
}).annotate({ description: "The desired AICR runtime of this cluster." })
export type ClusterRuntimeSpec = typeof ClusterRuntimeSpec.Type

/** `spec.validation.deployment` with its default applied, for objects not (yet) defaulted by the API server. */
export const deploymentValidationOf = (spec: ClusterRuntimeSpec): typeof DeploymentValidation.Type => spec.validation?.deployment ?? "Required"

// ---- status rooms ---------------------------------------------------------------------------------------------

export const MAX_CONDITIONS = 32
export const Conditions = Schema.Array(Condition)
  .check(Schema.isMaxLength(MAX_CONDITIONS))
  .annotate({ description: "Conditions, one writer per type.", ...listMap("type") })

const NodeGroupStatus = Schema.Struct({
  nodeCount: NonNegativeInt(100_000),
  nodes: Schema.optionalKey(Schema.Array(ObjectName).check(Schema.isMaxLength(16)).annotate({ description: "The first nodes, sorted by name." })),
})
const ObservedCriteria = Schema.Struct({
  service: Schema.optionalKey(AicrToken),
  accelerator: Schema.optionalKey(AicrToken),
  os: Schema.optionalKey(AicrToken),
})

/** resolver: what the placement selects and what the snapshot found. */
export const DiscoveryStatus = Schema.Struct({
  system: Schema.optionalKey(NodeGroupStatus),
  accelerated: Schema.optionalKey(NodeGroupStatus),
  criteria: Schema.optionalKey(ObservedCriteria.annotate({ description: "Criteria the latest snapshot derived." })),
  snapshot: Schema.optionalKey(Schema.Struct({ digest: Digest, takenAt: Time })),
}).annotate({ description: "Owned by resolver." })

export const AicrRef = Schema.Struct({
  version: text(64, 1).annotate({ description: "AICR version, e.g. v1.1.2." }),
  image: OciReference.annotate({ description: "Digest-pinned AICR image." }),
})

/** resolver: the resolution of the current inputs. */
export const ResolutionStatus = Schema.Struct({
  inputDigest: Schema.optionalKey(Digest),
  aicr: Schema.optionalKey(AicrRef),
  contentConfigMap: Schema.optionalKey(ObjectName.annotate({ description: "Content ConfigMap with recipe.json, values.json, snapshot.json." })),
  releases: Schema.optionalKey(NonNegativeInt(256)),
  resolvedAt: Schema.optionalKey(Time),
}).annotate({ description: "Owned by resolver." })

/** registry-mirror: where the resolution's content lives in the runtime registry. */
export const MirrorStatus = Schema.Struct({
  inputDigest: Schema.optionalKey(Digest.annotate({ description: "The resolution this mirror state belongs to." })),
  bundle: Schema.optionalKey(OciReference.annotate({ description: "<registry>/bundles/cluster@sha256:…" })),
  charts: Schema.optionalKey(
    Schema.Array(Schema.Struct({ release: Dns1123Label, ref: OciReference }))
      .check(Schema.isMaxLength(256))
      .annotate(listMap("release")),
  ),
}).annotate({ description: "Owned by registry-mirror." })

/** planner: active and target plans, and the rollout in flight. */
export const PlansStatus = Schema.Struct({
  active: Schema.optionalKey(Digest.annotate({ description: "desiredStateDigest of the plan currently rolled out." })),
  target: Schema.optionalKey(Digest.annotate({ description: "desiredStateDigest of the plan the current inputs produce (or the pin)." })),
  targetSince: Schema.optionalKey(Time.annotate({ description: "When the target last changed; the stabilization window starts here." })),
  rollout: Schema.optionalKey(
    Schema.Struct({
      name: ObjectName,
      step: Schema.optionalKey(text(256).annotate({ description: "e.g. 9/18 gpu-operator (Upgrade)" })),
    }).annotate({ description: "The RuntimeRollout in flight." }),
  ),
}).annotate({ description: "Owned by planner." })

/** step-executor: the Argo CD engine as the operator sees it. */
export const EngineStatus = Schema.Struct({
  namespace: Schema.optionalKey(Dns1123Label),
  project: Schema.optionalKey(ObjectName),
  applications: Schema.optionalKey(NonNegativeInt(1000).annotate({ description: "Applications of this runtime." })),
  suspended: Schema.optionalKey(NonNegativeInt(1000).annotate({ description: "Applications with automated sync off for suspendEngine." })),
  suspensionRefused: Schema.optionalKey(
    text(1024).annotate({
      description:
        "While spec.suspendEngine is set: the Applications it does not hold on yet and why (a sync operation in flight, a refused patch); absent when it holds.",
    }),
  ),
}).annotate({ description: "Owned by step-executor." })

/** ecr-credential-refresher: the registry credentials Argo CD and pushing Jobs use. */
export const CredentialsStatus = Schema.Struct({
  provider: Schema.optionalKey(Schema.Literals(["aws", "static", "in-cluster"])),
  secret: Schema.optionalKey(NamespacedName.annotate({ description: "The Argo CD repo-creds Secret (written for aws)." })),
  dockerConfigSecret: Schema.optionalKey(
    NamespacedName.annotate({ description: "The docker-config Secret the operator's pushing components mount (written for aws, checked for static)." }),
  ),
  expiresAt: Schema.optionalKey(Time),
  refreshedAt: Schema.optionalKey(Time),
}).annotate({ description: "Owned by ecr-credential-refresher." })

export const ClusterRuntimeStatus = Schema.Struct({
  conditions: Schema.optionalKey(Conditions),
  discovery: Schema.optionalKey(DiscoveryStatus),
  resolution: Schema.optionalKey(ResolutionStatus),
  mirror: Schema.optionalKey(MirrorStatus),
  plans: Schema.optionalKey(PlansStatus),
  engine: Schema.optionalKey(EngineStatus),
  credentials: Schema.optionalKey(CredentialsStatus),
}).annotate({ description: "Observations only; each top-level key has one writer." })
export type ClusterRuntimeStatus = typeof ClusterRuntimeStatus.Type

export const ClusterRuntime = Schema.Struct({
  apiVersion: Schema.Literal("operator.aicr.run/v1alpha1"),
  kind: Schema.Literal("ClusterRuntime"),
  metadata: KubeObjectMeta,
  spec: ClusterRuntimeSpec,
  status: Schema.optionalKey(ClusterRuntimeStatus),
})
export type ClusterRuntime = typeof ClusterRuntime.Type
export const decodeClusterRuntime = Schema.decodeUnknownResult(ClusterRuntime)
