// What the process kubelet makes of a pod spec, as pure functions over the pod and the objects it references: the
// container's environment (values, downward API fields, ConfigMap/Secret keys, the in-cluster service variables),
// the files of each volume, and the status the kubelet reports. runner.ts does the side effects.
/* eslint-disable @typescript-eslint/no-explicit-any -- raw core/v1 objects from the API server */

export type Pod = any
export type Container = any

/** What a pod's volumes and env may reference, fetched from the API server by the caller. */
export interface PodSources {
  configMap(namespace: string, name: string): Promise<{ data?: Record<string, string>; binaryData?: Record<string, string> } | undefined>
  secret(namespace: string, name: string): Promise<{ data?: Record<string, string> } | undefined>
  /** A ServiceAccount token bound to the pod (TokenRequest), as a kubelet asks for projected tokens. */
  token(namespace: string, serviceAccount: string, pod: { name: string; uid: string }, audience: string | undefined, seconds: number): Promise<string>
}

export class PodConfigError extends Error {
  override readonly name = "PodConfigError"
  constructor(
    readonly reason: "CreateContainerConfigError" | "ContainerCannotRun",
    message: string,
  ) {
    super(message)
  }
}

/** The value of a downward-API field path (metadata.name, metadata.labels['x'], spec.nodeName, status.podIP, …). */
export const fieldValue = (pod: Pod, path: string): string => {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path)
  if (m) return pod.metadata?.[m[1]!]?.[m[2]!] ?? ""
  switch (path) {
    case "metadata.name":
      return pod.metadata.name
    case "metadata.namespace":
      return pod.metadata.namespace
    case "metadata.uid":
      return pod.metadata.uid
    case "spec.nodeName":
      return pod.spec.nodeName ?? ""
    case "spec.serviceAccountName":
      return pod.spec.serviceAccountName ?? "default"
    case "status.hostIP":
    case "status.podIP":
      return pod.status?.[path.slice(7)] ?? ""
    default:
      throw new PodConfigError("CreateContainerConfigError", `unsupported fieldRef ${path}`)
  }
}

const decodeB64 = (s: string) => Buffer.from(s, "base64")

/** Every key of a ConfigMap (data and binaryData) as bytes. */
const configMapFiles = (cm: { data?: Record<string, string>; binaryData?: Record<string, string> }): Record<string, Buffer> => ({
  ...Object.fromEntries(Object.entries(cm.data ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
  ...Object.fromEntries(Object.entries(cm.binaryData ?? {}).map(([k, v]) => [k, decodeB64(v)])),
})

const secretFiles = (s: { data?: Record<string, string> }): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, decodeB64(v)]))

/** `items` (key → path) of a ConfigMap/Secret source, or every key under its own name. */
const project = (
  files: Record<string, Buffer>,
  items: { key: string; path: string }[] | undefined,
  what: string,
  optional: boolean,
): Record<string, Buffer> => {
  if (!items?.length) return files
  const out: Record<string, Buffer> = {}
  for (const it of items) {
    const f = files[it.key]
    if (f === undefined) {
      if (optional) continue
      throw new PodConfigError("CreateContainerConfigError", `${what} has no key ${it.key}`)
    }
    out[it.path] = f
  }
  return out
}

export interface ApiServerEndpoint {
  readonly host: string
  readonly port: number
}

/** The container's environment as a kubelet builds it (service variables first, then envFrom, then env). */
export const containerEnv = async (pod: Pod, c: Container, src: PodSources, api: ApiServerEndpoint): Promise<Record<string, string>> => {
  const ns = pod.metadata.namespace
  const env: Record<string, string> = {
    KUBERNETES_SERVICE_HOST: api.host,
    KUBERNETES_SERVICE_PORT: String(api.port),
    KUBERNETES_SERVICE_PORT_HTTPS: String(api.port),
    KUBERNETES_PORT: `tcp://${api.host}:${api.port}`,
    HOSTNAME: pod.spec.hostNetwork ? pod.spec.nodeName : (pod.spec.hostname ?? pod.metadata.name),
  }
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? ""
    if (from.configMapRef) {
      const cm = await src.configMap(ns, from.configMapRef.name)
      if (!cm && !from.configMapRef.optional) throw new PodConfigError("CreateContainerConfigError", `configmap "${from.configMapRef.name}" not found`)
      for (const [k, v] of Object.entries(cm?.data ?? {})) env[prefix + k] = v
    }
    if (from.secretRef) {
      const s = await src.secret(ns, from.secretRef.name)
      if (!s && !from.secretRef.optional) throw new PodConfigError("CreateContainerConfigError", `secret "${from.secretRef.name}" not found`)
      for (const [k, v] of Object.entries(secretFiles(s ?? {}))) env[prefix + k] = v.toString()
    }
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = expand(e.value, env)
    else if (e.valueFrom?.fieldRef) env[e.name] = fieldValue(pod, e.valueFrom.fieldRef.fieldPath)
    else if (e.valueFrom?.configMapKeyRef) {
      const r = e.valueFrom.configMapKeyRef
      const v = (await src.configMap(ns, r.name))?.data?.[r.key]
      if (v === undefined && !r.optional) throw new PodConfigError("CreateContainerConfigError", `couldn't find key ${r.key} in ConfigMap ${ns}/${r.name}`)
      if (v !== undefined) env[e.name] = v
    } else if (e.valueFrom?.secretKeyRef) {
      const r = e.valueFrom.secretKeyRef
      const v = (await src.secret(ns, r.name))?.data?.[r.key]
      if (v === undefined && !r.optional) throw new PodConfigError("CreateContainerConfigError", `couldn't find key ${r.key} in Secret ${ns}/${r.name}`)
      if (v !== undefined) env[e.name] = decodeB64(v).toString()
    } else if (e.valueFrom?.resourceFieldRef) {
      const r = e.valueFrom.resourceFieldRef
      const [kind, res] = String(r.resource).split(".")
      env[e.name] = String(c.resources?.[kind === "requests" ? "requests" : "limits"]?.[res!] ?? "0")
    } else env[e.name] = ""
  }
  return env
}

/** $(VAR) references to earlier variables, as the kubelet expands them; $$ escapes. */
export const expand = (s: string, env: Readonly<Record<string, string>>): string =>
  s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name?: string) => (name === undefined ? "$" : (env[name] ?? whole)))

/** One volume as the kubelet lays it out: a directory of files, an empty directory, or a path on the fake host. */
export type VolumeContent =
  | { readonly kind: "files"; readonly files: Record<string, Buffer>; readonly mode?: number }
  | { readonly kind: "emptyDir" }
  | { readonly kind: "hostPath"; readonly path: string; readonly type?: string }

const EXPIRY = 3607

export const volumeContent = async (pod: Pod, v: any, src: PodSources): Promise<VolumeContent> => {
  const ns = pod.metadata.namespace
  if (v.emptyDir) return { kind: "emptyDir" }
  if (v.hostPath) return { kind: "hostPath", path: v.hostPath.path, type: v.hostPath.type }
  if (v.configMap) {
    const cm = await src.configMap(ns, v.configMap.name)
    if (!cm && !v.configMap.optional) throw new PodConfigError("CreateContainerConfigError", `configmap "${v.configMap.name}" not found`)
    return { kind: "files", files: project(configMapFiles(cm ?? {}), v.configMap.items, `ConfigMap ${ns}/${v.configMap.name}`, !!v.configMap.optional) }
  }
  if (v.secret) {
    const s = await src.secret(ns, v.secret.secretName)
    if (!s && !v.secret.optional) throw new PodConfigError("CreateContainerConfigError", `secret "${v.secret.secretName}" not found`)
    return { kind: "files", mode: 0o600, files: project(secretFiles(s ?? {}), v.secret.items, `Secret ${ns}/${v.secret.secretName}`, !!v.secret.optional) }
  }
  if (v.downwardAPI) return { kind: "files", files: downwardFiles(pod, v.downwardAPI.items) }
  if (v.projected) {
    const files: Record<string, Buffer> = {}
    for (const s of v.projected.sources ?? []) {
      if (s.serviceAccountToken) {
        const sa = pod.spec.serviceAccountName ?? "default"
        const token = await src.token(
          ns,
          sa,
          { name: pod.metadata.name, uid: pod.metadata.uid },
          s.serviceAccountToken.audience,
          s.serviceAccountToken.expirationSeconds ?? EXPIRY,
        )
        files[s.serviceAccountToken.path] = Buffer.from(token)
      } else if (s.configMap) {
        const cm = await src.configMap(ns, s.configMap.name)
        if (!cm && !s.configMap.optional) throw new PodConfigError("CreateContainerConfigError", `configmap "${s.configMap.name}" not found`)
        Object.assign(files, project(configMapFiles(cm ?? {}), s.configMap.items, `ConfigMap ${ns}/${s.configMap.name}`, !!s.configMap.optional))
      } else if (s.secret) {
        const sec = await src.secret(ns, s.secret.name)
        if (!sec && !s.secret.optional) throw new PodConfigError("CreateContainerConfigError", `secret "${s.secret.name}" not found`)
        Object.assign(files, project(secretFiles(sec ?? {}), s.secret.items, `Secret ${ns}/${s.secret.name}`, !!s.secret.optional))
      } else if (s.downwardAPI) Object.assign(files, downwardFiles(pod, s.downwardAPI.items))
    }
    return { kind: "files", files }
  }
  throw new PodConfigError(
    "CreateContainerConfigError",
    `volume ${v.name}: unsupported volume type (${Object.keys(v)
      .filter((k) => k !== "name")
      .join(", ")})`,
  )
}

const downwardFiles = (pod: Pod, items: any[] | undefined): Record<string, Buffer> =>
  Object.fromEntries(
    (items ?? []).map((it) => {
      if (!it.fieldRef) throw new PodConfigError("CreateContainerConfigError", `downwardAPI item ${it.path}: only fieldRef is supported`)
      const p = it.fieldRef.fieldPath
      const value =
        p === "metadata.labels" || p === "metadata.annotations"
          ? Object.entries(pod.metadata?.[p.slice(9)] ?? {})
              .map(([k, v]) => `${k}="${String(v)}"`)
              .join("\n")
          : fieldValue(pod, p)
      return [it.path, Buffer.from(value)]
    }),
  )

/** The command line of a container: command (or the image entrypoint) then args, $(VAR) expanded. */
export const commandLine = (c: Container, entrypoint: readonly string[], env: Readonly<Record<string, string>>): string[] => {
  const cmd: string[] = c.command?.length ? c.command : [...entrypoint]
  return [...cmd, ...(c.args ?? [])].map((a: string) => expand(a, env))
}

export interface Terminated {
  readonly exitCode: number
  readonly signal?: string
  readonly reason: string
  readonly message?: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly containerID: string
}

/** The termination message: the file's content (≤ 4096 bytes), or with FallbackToLogsOnError the log tail on failure. */
export const terminationMessage = (file: string | undefined, policy: string | undefined, exitCode: number, logTail: () => string): string | undefined => {
  const fromFile = file?.slice(0, 4096)
  if (fromFile) return fromFile
  if (policy === "FallbackToLogsOnError" && exitCode !== 0) {
    const tail = logTail().split("\n").slice(-80).join("\n")
    return tail.slice(-2048) || undefined
  }
  return undefined
}

/** A Linux process's exit as a container exit code: 128+N when killed by signal N. */
export const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number => {
  if (code !== null) return code
  const n: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 }
  return 128 + (signal ? (n[signal] ?? 0) : 0)
}

const condition = (type: string, status: boolean, now: string, reason?: string) => ({
  type,
  status: status ? "True" : "False",
  lastProbeTime: null,
  lastTransitionTime: now,
  ...(reason ? { reason } : {}),
})

/** What the kubelet knows of one running (or restarting) container. */
export interface LiveContainer {
  readonly containerID: string
  /** The image the container runs, `<repository>@<digest>` (empty for images mapped to local binaries). */
  readonly imageID?: string
  /** Running since; absent while it waits to be restarted (`waiting`). */
  readonly startedAt?: string
  readonly ready: boolean
  readonly restartCount: number
  readonly lastTerminated?: Terminated
  readonly waiting?: { readonly reason: string; readonly message?: string }
}

const terminatedState = (t: Terminated) => ({
  exitCode: t.exitCode,
  ...(t.signal ? { signal: signalNumber(t.signal) } : {}),
  reason: t.reason,
  ...(t.message ? { message: t.message } : {}),
  startedAt: t.startedAt,
  finishedAt: t.finishedAt,
  containerID: t.containerID,
})

/** The status patch (strategic merge) while the pod runs: Ready when every container is ready. */
export const runningStatus = (pod: Pod, s: { hostIP: string; podIP: string; now: string; containers: Record<string, LiveContainer> }) => {
  const ready = pod.spec.containers.every((c: Container) => s.containers[c.name]?.ready === true)
  return {
    status: {
      phase: "Running",
      hostIP: s.hostIP,
      hostIPs: [{ ip: s.hostIP }],
      podIP: s.podIP,
      podIPs: [{ ip: s.podIP }],
      startTime: pod.status?.startTime ?? s.now,
      conditions: [
        condition("PodReadyToStartContainers", true, s.now),
        condition("Initialized", true, s.now),
        condition("Ready", ready, s.now, ready ? undefined : "ContainersNotReady"),
        condition("ContainersReady", ready, s.now, ready ? undefined : "ContainersNotReady"),
      ],
      containerStatuses: pod.spec.containers.map((c: Container) => {
        const l = s.containers[c.name]
        return {
          name: c.name,
          image: c.image,
          imageID: l?.imageID ?? "",
          containerID: l?.containerID ?? "",
          ready: l?.ready ?? false,
          started: l?.startedAt !== undefined,
          restartCount: l?.restartCount ?? 0,
          state:
            l?.startedAt !== undefined
              ? { running: { startedAt: l.startedAt } }
              : { waiting: { reason: l?.waiting?.reason ?? "ContainerCreating", ...(l?.waiting?.message ? { message: l.waiting.message } : {}) } },
          ...(l?.lastTerminated ? { lastState: { terminated: terminatedState(l.lastTerminated) } } : {}),
        }
      }),
    },
  }
}

/** The status patch once every container ended (restartPolicy Never): Succeeded when all exited 0. */
export const finishedStatus = (pod: Pod, now: string, ended: Record<string, Terminated>) => {
  const allOk = Object.values(ended).every((t) => t.exitCode === 0)
  return {
    status: {
      phase: allOk ? "Succeeded" : "Failed",
      conditions: [condition("Ready", false, now, "PodCompleted"), condition("ContainersReady", false, now, "PodCompleted")],
      containerStatuses: pod.spec.containers.map((c: Container) => {
        const t = ended[c.name]!
        return {
          name: c.name,
          image: c.image,
          imageID: "",
          containerID: t.containerID,
          ready: false,
          started: false,
          restartCount: 0,
          state: {
            terminated: {
              exitCode: t.exitCode,
              ...(t.signal ? { signal: signalNumber(t.signal) } : {}),
              reason: t.reason,
              ...(t.message ? { message: t.message } : {}),
              startedAt: t.startedAt,
              finishedAt: t.finishedAt,
              containerID: t.containerID,
            },
          },
        }
      }),
    },
  }
}

const signalNumber = (s: string): number => exitCodeOf(null, s as NodeJS.Signals) - 128

/** The status patch when a container cannot start (image not runnable here, missing ConfigMap, …). */
export const waitingStatus = (pod: Pod, reason: string, message: string) => ({
  status: {
    conditions: [
      {
        type: "Ready",
        status: "False",
        lastProbeTime: null,
        lastTransitionTime: pod.status?.startTime ?? new Date().toISOString(),
        reason: "ContainersNotReady",
      },
    ],
    containerStatuses: pod.spec.containers.map((c: Container) => ({
      name: c.name,
      image: c.image,
      imageID: "",
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: { reason, message } },
    })),
  },
})
