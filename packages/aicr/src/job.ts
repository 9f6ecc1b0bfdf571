/**
 * AICR runs as Jobs from the pinned AICR image (operator.md §4.3; docs/adr/20261202-aicr-jobs.md): one Job per
 * snapshot, recipe, bundle and upgrade-check (upgrade-check.ts), under a dedicated ServiceAccount, `backoffLimit: 0`, a deadline and a TTL. Every Job is
 * created suspended; the objects it owns (its output ConfigMap, the per-run registry credential) are then created
 * with an ownerReference to it and the Job is resumed, so garbage collection removes them with the Job.
 *
 * Outputs come back through the Job-owned ConfigMap that AICR's own `-o cm://ns/name` writer fills (server-side
 * apply, field manager `aicr`, key `snapshot.<format>` whatever the document), and for the bundle through the
 * registry: `aicr bundle -o oci://… --image-refs /dev/termination-log` pushes it and leaves the digest in the
 * termination message.
 *
 * Pure: these functions build objects; the resolver creates them.
 */
import { createHash } from "node:crypto"
import { type KubeObject, LABEL_ROLE } from "@aicr/api"

/** A Kubernetes object this package builds: metadata plus whatever the kind holds. */
export interface AicrObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: KubeObject["metadata"] & { readonly ownerReferences?: ReadonlyArray<Readonly<Record<string, unknown>>> }
  readonly [field: string]: unknown
}

export type AicrJobKind = "snapshot" | "recipe" | "bundle" | "upgrade-check" | "validate"

export const LABEL_JOB_KIND = "operator.aicr.run/aicr-job"
export const LABEL_INPUT = "operator.aicr.run/input"
export const ROLE_LABEL = LABEL_ROLE
export const ROLE_AICR_JOB = "aicr-job"

export interface AicrJobSettings {
  /** `ghcr.io/nvidia/aicr:v0.11.1`, digest-pinned in production. */
  readonly image: string
  /** Where recipe and bundle Jobs run (chart `JobsNamespace`). */
  readonly namespace: string
  /** Where the snapshot agent runs (chart `DiscoveryNamespace`). */
  readonly discoveryNamespace: string
  /** Runs recipe and bundle Jobs (`aicr-jobs`). */
  readonly serviceAccount: string
  /** Runs the snapshot agent (the agent's RBAC: node-reader ClusterRole plus ConfigMap writes). */
  readonly agentServiceAccount: string
  readonly activeDeadlineSeconds: number
  readonly ttlSecondsAfterFinished: number
}

export const DEFAULT_JOB_SETTINGS: Omit<AicrJobSettings, "image"> = {
  namespace: "aicr-system",
  discoveryNamespace: "aicr-system",
  serviceAccount: "aicr-jobs",
  agentServiceAccount: "aicr-agent",
  activeDeadlineSeconds: 600,
  ttlSecondsAfterFinished: 3600,
}

/** `aicr-<kind>-<12 hex of the input digest>`: one Job per input, so a repeated create is AlreadyExists, never a second run. */
export const jobName = (kind: AicrJobKind, inputDigest: string): string => `aicr-${kind}-${hex(inputDigest).slice(0, 12)}`

const hex = (digest: string): string => digest.replace(/^sha256:/u, "")

export const digestOf = (value: unknown): string => `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`

/** JSON with sorted object keys (arrays keep their order), the basis of every digest here. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  )

export interface JobSpecInput {
  readonly kind: AicrJobKind
  readonly name: string
  readonly namespace: string
  readonly inputDigest: string
  readonly args: ReadonlyArray<string>
  readonly serviceAccount: string
  readonly env?: ReadonlyArray<Record<string, unknown>>
  readonly volumes?: ReadonlyArray<{ readonly name: string; readonly mountPath: string; readonly source: Record<string, unknown>; readonly readOnly?: boolean }>
  readonly nodeName?: string
  readonly tolerations?: ReadonlyArray<Record<string, unknown>>
  readonly workingDir?: string
  readonly agent?: boolean
}

/** The labels of an AICR Job, its pod and the objects it owns. */
export const labelsOf = (kind: AicrJobKind, inputDigest: string) => ({
  [ROLE_LABEL]: ROLE_AICR_JOB,
  [LABEL_JOB_KIND]: kind,
  [LABEL_INPUT]: hex(inputDigest).slice(0, 32),
  "app.kubernetes.io/name": "aicr",
  "app.kubernetes.io/managed-by": "aicr-operator",
})

/** The Job: suspended, no retries (the resolver decides about retries), a deadline and a TTL. */
export const jobObject = (s: AicrJobSettings, j: JobSpecInput): AicrObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: j.name, namespace: j.namespace, labels: labelsOf(j.kind, j.inputDigest) },
  spec: {
    suspend: true,
    backoffLimit: 0,
    activeDeadlineSeconds: s.activeDeadlineSeconds,
    ttlSecondsAfterFinished: s.ttlSecondsAfterFinished,
    template: {
      metadata: { labels: labelsOf(j.kind, j.inputDigest) },
      spec: {
        restartPolicy: "Never",
        serviceAccountName: j.serviceAccount,
        automountServiceAccountToken: true,
        // By node name (as the DaemonSet controller pins pods), not by a hostname label that may differ from it.
        ...(j.nodeName !== undefined
          ? {
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [j.nodeName] }] }],
                  },
                },
              },
            }
          : {}),
        ...(j.tolerations !== undefined ? { tolerations: j.tolerations } : {}),
        ...(j.agent === true
          ? {}
          : { securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" } } }),
        containers: [
          {
            name: "aicr",
            image: s.image,
            command: ["aicr"],
            args: [...j.args],
            ...(j.workingDir !== undefined ? { workingDir: j.workingDir } : {}),
            env: [{ name: "AICR_LOG_JSON", value: "true" }, ...(j.env ?? [])],
            terminationMessagePolicy: "FallbackToLogsOnError",
            resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "1Gi" } },
            ...(j.agent === true
              ? {}
              : { securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } } }),
            volumeMounts: (j.volumes ?? []).map((v) => ({ name: v.name, mountPath: v.mountPath, readOnly: v.readOnly ?? true })),
          },
        ],
        volumes: (j.volumes ?? []).map((v) => ({ name: v.name, ...v.source })),
      },
    },
  },
})

/** An object the Job owns: garbage-collected with it. */
export const ownedBy = (job: { readonly metadata: { readonly name?: string; readonly uid?: string } }) => [
  { apiVersion: "batch/v1", kind: "Job", name: job.metadata.name ?? "", uid: job.metadata.uid ?? "", controller: true, blockOwnerDeletion: false },
]

/** The Job's output ConfigMap (the same name), labelled, owned by the Job; AICR's writer fills `data`. */
export const outputConfigMap = (job: KubeObject & { readonly metadata: { readonly uid?: string } }, kind: AicrJobKind, inputDigest: string): AicrObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: job.metadata.name, namespace: job.metadata.namespace, labels: labelsOf(kind, inputDigest), ownerReferences: ownedBy(job) },
})

/** The per-run registry credential (a docker config), owned by the Job. */
export const credentialSecret = (
  job: KubeObject & { readonly metadata: { readonly uid?: string } },
  inputDigest: string,
  dockerConfigJson: string,
): AicrObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: `${job.metadata.name}-registry`,
    namespace: job.metadata.namespace,
    labels: labelsOf("bundle", inputDigest),
    ownerReferences: ownedBy(job),
  },
  type: "Opaque",
  stringData: { "config.json": dockerConfigJson },
})

/** Recipe criteria passed as flags (each value one AICR accepts; checked before). */
export interface RecipeRequest {
  readonly service?: string | undefined
  readonly accelerator?: string | undefined
  readonly os?: string | undefined
  readonly intent?: string | undefined
  readonly platform?: string | undefined
}

export const recipeArgs = (r: RecipeRequest, out: string): string[] => [
  "recipe",
  ...(["service", "accelerator", "os", "intent", "platform"] as const).flatMap((k) => (r[k] === undefined ? [] : [`--${k}`, r[k]])),
  "--format",
  "json",
  "--output",
  out,
]

export const recipeJob = (s: AicrJobSettings, inputDigest: string, r: RecipeRequest): AicrObject => {
  const name = jobName("recipe", inputDigest)
  return jobObject(s, {
    kind: "recipe",
    name,
    namespace: s.namespace,
    inputDigest,
    serviceAccount: s.serviceAccount,
    args: recipeArgs(r, `cm://${s.namespace}/${name}`),
  })
}

export interface Toleration {
  readonly key?: string | undefined
  readonly operator?: string | undefined
  readonly value?: string | undefined
  readonly effect?: string | undefined
}

/** AICR's toleration flag syntax: `key=value:effect` or `key:effect` (Exists); effect required by AICR. */
export const tolerationFlag = (t: Toleration): string | undefined => {
  if (t.key === undefined || t.key === "" || t.effect === undefined || t.effect === "") return undefined
  return t.operator === "Exists" || t.value === undefined || t.value === "" ? `${t.key}:${t.effect}` : `${t.key}=${t.value}:${t.effect}`
}

export interface BundleRequest {
  readonly systemNodeSelector?: Readonly<Record<string, string>> | undefined
  readonly systemTolerations?: ReadonlyArray<Toleration> | undefined
  readonly acceleratedNodeSelector?: Readonly<Record<string, string>> | undefined
  readonly acceleratedTolerations?: ReadonlyArray<Toleration> | undefined
  /** `component:dot.path` → value, in spec order. */
  readonly set?: ReadonlyArray<{ readonly path: string; readonly value: string }> | undefined
}

const selectorFlags = (flag: string, sel: Readonly<Record<string, string>> | undefined) =>
  Object.entries(sel ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([k, v]) => [flag, `${k}=${v}`])

/** The bundle flags of a request (the part `kubectl aicr reproduce` replays), sorted where AICR does not care. */
export const bundleFlags = (b: BundleRequest): string[] => [
  "--deployer",
  "helm",
  ...selectorFlags("--system-node-selector", b.systemNodeSelector),
  ...(b.systemTolerations ?? []).flatMap((t) => {
    const f = tolerationFlag(t)
    return f === undefined ? [] : ["--system-node-toleration", f]
  }),
  ...selectorFlags("--accelerated-node-selector", b.acceleratedNodeSelector),
  ...(b.acceleratedTolerations ?? []).flatMap((t) => {
    const f = tolerationFlag(t)
    return f === undefined ? [] : ["--accelerated-node-toleration", f]
  }),
  ...(b.set ?? []).flatMap((o) => ["--set", `${o.path}=${o.value}`]),
]

/** The bundle Job's working directory: with `-o oci://…` AICR writes the bundle to `./bundle` there first. */
export const BUNDLE_WORK_DIR = "/work"

export interface BundleTarget {
  /** `host[:port]/repository:tag`, without a scheme. */
  readonly reference: string
  readonly plainHttp: boolean
}

/**
 * The bundle Job's argv: the recipe from the recipe Job's output ConfigMap, the request's {@link bundleFlags}, the
 * bundle pushed to `target`, its digest written to the termination message. The plan records it (`plan.flags`).
 */
export const bundleArgs = (s: Pick<AicrJobSettings, "namespace">, recipeConfigMap: string, b: BundleRequest, target: BundleTarget): string[] => [
  "bundle",
  "--recipe",
  `cm://${s.namespace}/${recipeConfigMap}`,
  ...bundleFlags(b),
  "--output",
  `oci://${target.reference}`,
  ...(target.plainHttp ? ["--plain-http"] : []),
  "--image-refs",
  "/dev/termination-log",
]

/** The bundle Job: recipe from the recipe Job's output ConfigMap, the bundle pushed to the registry, its digest in the termination message. */
export const bundleJob = (s: AicrJobSettings, inputDigest: string, recipeConfigMap: string, b: BundleRequest, target: BundleTarget): AicrObject => {
  const name = jobName("bundle", inputDigest)
  return jobObject(s, {
    kind: "bundle",
    name,
    namespace: s.namespace,
    inputDigest,
    serviceAccount: s.serviceAccount,
    args: bundleArgs(s, recipeConfigMap, b, target),
    env: [
      { name: "DOCKER_CONFIG", value: "/var/run/aicr/registry" },
      { name: "HOME", value: BUNDLE_WORK_DIR },
    ],
    workingDir: BUNDLE_WORK_DIR,
    volumes: [
      { name: "registry", mountPath: "/var/run/aicr/registry", source: { secret: { secretName: `${name}-registry` } } },
      { name: "work", mountPath: BUNDLE_WORK_DIR, source: { emptyDir: { sizeLimit: "64Mi" } }, readOnly: false },
    ],
  })
}

/**
 * The snapshot agent on one accelerated node: AICR's own agent Job shape (pkg/k8s/agent) with `AICR_AGENT_MODE=true`
 * and `NODE_NAME` from the downward API, writing `cm://<ns>/<job>`. It needs the host's view (hostPID/Network,
 * privileged, /run/systemd and /etc/os-release) to read the GPU, OS and systemd facts.
 */
/** Node names kept per taint/label entry of the snapshot's topology (AICR appends "(+N more)"). */
export const MAX_NODES_PER_ENTRY = 16

export const snapshotJob = (s: AicrJobSettings, inputDigest: string, node: string): AicrObject => {
  const name = jobName("snapshot", inputDigest)
  const job = jobObject(s, {
    kind: "snapshot",
    name,
    namespace: s.discoveryNamespace,
    inputDigest,
    serviceAccount: s.agentServiceAccount,
    agent: true,
    nodeName: node,
    tolerations: [{ operator: "Exists" }],
    args: ["snapshot", "--output", `cm://${s.discoveryNamespace}/${name}`],
    env: [
      { name: "AICR_AGENT_MODE", value: "true" },
      { name: "AICR_LOG_PREFIX", value: "agent" },
      { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      // Node lists in the topology entries, bounded: unbounded, a 5,000-node cluster's snapshot passes the 1 MiB a
      // ConfigMap holds and AICR fails writing it (INTERNAL, "Too long").
      { name: "AICR_MAX_NODES_PER_ENTRY", value: String(MAX_NODES_PER_ENTRY) },
    ],
    volumes: [
      { name: "run-systemd", mountPath: "/run/systemd", source: { hostPath: { path: "/run/systemd", type: "Directory" } } },
      { name: "os-release", mountPath: "/etc/os-release", source: { hostPath: { path: "/etc/os-release", type: "File" } } },
    ],
  }) as AicrObject & { spec: { template: { spec: Record<string, unknown> & { containers: Array<Record<string, unknown>> } } } }
  const pod = job.spec.template.spec
  pod["hostPID"] = true
  pod["hostNetwork"] = true
  pod["hostIPC"] = true
  pod.containers[0]!["securityContext"] = { privileged: true, runAsUser: 0, capabilities: { add: ["SYS_ADMIN", "SYS_CHROOT"] } }
  return job
}
