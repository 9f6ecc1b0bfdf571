// The process kubelet: for pods bound to kwok nodes whose containers use an image it claims (images in the local
// registry, AICR's), it does what the node's kubelet would: pulls the image and runs each container from its root
// filesystem (image-runner.ts; AICR's images without a local copy run as the local binaries, runner.ts), with a pod
// IP of its own (a loopback address), probes deciding readiness and liveness, restarts by the pod's restartPolicy,
// and writes the pod's status — Running (Ready when every container is), then Succeeded/Failed with each container's
// exit code, termination message and times. It honours graceful deletion (SIGTERM, the grace period, SIGKILL) and
// then removes the pod. kwok's pod stages leave these pods alone (see stages.ts), so none of them "completes" or
// turns Ready without running. Every other pod keeps kwok's fake lifecycle.
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { request } from "undici"
import { agentFor, kubeRequest } from "../kube"
import type { KubeTarget } from "../types"
import { hostProfileOf } from "./hosts"
import { type ImageRule, type ImageRuntime, KUBELET_IMAGES, lookupImage } from "./images"
import { OciClient } from "@aicr/oras"
import { startImageContainer } from "./image-runner"
import {
  type Container,
  finishedStatus,
  type LiveContainer,
  type Pod,
  PodConfigError,
  type PodSources,
  runningStatus,
  type Terminated,
  waitingStatus,
} from "./pod"
import { serveContainerLogs } from "./logs"
import { runProber } from "./probes"
import { pullImage, type PulledImage } from "./pull"
import { preparePod, type RunningContainer, startContainer } from "./runner"

export const KUBELET_FIELD_MANAGER = "aicr-harness-kubelet"
/** Prefix of the containerID the process kubelet reports; a pod that carries one was started by a process kubelet. */
export const CONTAINER_ID_PREFIX = "harness://"

export interface KubeletOptions {
  readonly target: KubeTarget
  /** Key of target.users the kubelet authenticates as. */
  readonly user: string
  /** Pod directories and logs. */
  readonly dir: string
  /** How containers reach the API server (KUBERNETES_SERVICE_HOST/PORT). */
  readonly api: { readonly host: string; readonly port: number }
  readonly images?: readonly ImageRule[]
  /** Serve containerLogs (the kubelet API the API server proxies pods/log to) on 127.0.0.1:port with this cert. */
  readonly logs?: { readonly port: number; readonly certFile: string; readonly keyFile: string }
  readonly log?: (msg: string) => void
}

interface PodRun {
  readonly uid: string
  readonly namespace: string
  readonly name: string
  /** The current process of each container (replaced on restart). */
  readonly containers: Map<string, RunningContainer>
  /** Aborted when the pod stops: wakes pull and restart back-offs. */
  readonly abort: AbortController
  stopping: boolean
  finished: boolean
  done: Promise<void>
}

type Runtimes =
  | { readonly kind: "run"; readonly runtimes: Record<string, ImageRuntime> }
  | { readonly kind: "unavailable"; readonly message: string }
  | { readonly kind: "ignore" }

/** Whether the kubelet runs the pod: every container's image must be runnable here once one is claimed. */
export const podRuntimes = (pod: Pod, rules: readonly ImageRule[] = KUBELET_IMAGES): Runtimes => {
  const looks = (pod.spec.containers as { name: string; image: string }[]).map((c) => [c.name, lookupImage(c.image, rules)] as const)
  if (looks.every(([, l]) => l.kind === "unclaimed")) return { kind: "ignore" }
  const bad = looks.find(([, l]) => l.kind !== "runnable")
  if (bad) {
    const l = bad[1]
    return { kind: "unavailable", message: l.kind === "unavailable" ? l.message : `container ${bad[0]}: image is not one the process kubelet runs` }
  }
  if (pod.spec.initContainers?.length) return { kind: "unavailable", message: "init containers are not supported by the process kubelet" }
  return { kind: "run", runtimes: Object.fromEntries(looks.map(([n, l]) => [n, (l as { runtime: ImageRuntime }).runtime])) }
}

const ours = (pod: Pod): boolean => (pod.status?.containerStatuses ?? []).some((s: { containerID?: string }) => s.containerID?.startsWith(CONTAINER_ID_PREFIX))

export const startKubelet = async (opts: KubeletOptions) => {
  const log = opts.log ?? ((m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`))
  const rules = opts.images ?? KUBELET_IMAGES
  const runs = new Map<string, PodRun>()
  const reported = new Set<string>()
  const finalizing = new Set<string>()
  let stopped = false
  const abort = new AbortController()
  mkdirSync(opts.dir, { recursive: true })

  const api = (method: string, path: string, body?: unknown, contentType?: string) =>
    kubeRequest(opts.target, { method, path, body, contentType, user: opts.user })

  const podPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/pods/${name}`

  const patchStatus = async (pod: Pod, patch: unknown): Promise<void> => {
    const res = await api(
      "PATCH",
      `${podPath(pod.metadata.namespace, pod.metadata.name)}/status?fieldManager=${KUBELET_FIELD_MANAGER}`,
      patch,
      "application/strategic-merge-patch+json",
    )
    if (res.status >= 300 && res.status !== 404)
      log(`status of ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${res.status} ${JSON.stringify(res.body?.message ?? res.body)}`)
  }

  const src: PodSources = {
    configMap: async (ns, name) => {
      const r = await api("GET", `/api/v1/namespaces/${ns}/configmaps/${name}`)
      return r.status === 200 ? r.body : undefined
    },
    secret: async (ns, name) => {
      const r = await api("GET", `/api/v1/namespaces/${ns}/secrets/${name}`)
      return r.status === 200 ? r.body : undefined
    },
    token: async (ns, sa, pod, audience, seconds) => {
      const r = await api("POST", `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds: Math.max(seconds, 600),
          boundObjectRef: { kind: "Pod", apiVersion: "v1", name: pod.name, uid: pod.uid },
        },
      })
      if (r.status !== 201 && r.status !== 200)
        throw new PodConfigError("CreateContainerConfigError", `token for ServiceAccount ${ns}/${sa}: HTTP ${r.status} ${r.body?.message ?? ""}`)
      return r.body.status.token
    },
  }

  const client = new OciClient({ userAgent: "aicr-harness-kubelet" })
  const imagesDir = join(opts.dir, "images")
  const podIPs = new Map<string, string>()

  /** A loopback address of the pod's own (127.16.0.0–127.250.255.255, random: several kubelets share the machine). */
  const allocateIP = (uid: string): string => {
    const used = new Set(podIPs.values())
    for (;;) {
      const ip = `127.${16 + Math.floor(Math.random() * 235)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`
      if (!used.has(ip)) {
        podIPs.set(uid, ip)
        return ip
      }
    }
  }

  const run = async (original: Pod, runtimes: Record<string, ImageRuntime>): Promise<void> => {
    const key = `${original.metadata.namespace}/${original.metadata.name}`
    const nodeRes = await api("GET", `/api/v1/nodes/${original.spec.nodeName}`)
    if (nodeRes.status !== 200) throw new Error(`node ${original.spec.nodeName}: HTTP ${nodeRes.status}`)
    const node = nodeRes.body
    const host = hostProfileOf(node)
    const hostIP = (node.status?.addresses ?? []).find((a: { type: string }) => a.type === "InternalIP")?.address ?? "127.0.0.1"
    const entry = runs.get(original.metadata.uid)!
    const podIP = original.spec.hostNetwork ? hostIP : allocateIP(original.metadata.uid)
    // The pod as its containers see it (the downward API's status.podIP and status.hostIP).
    const pod: Pod = { ...original, status: { ...original.status, podIP, hostIP } }

    const pulled: Record<string, PulledImage> = {}
    for (const c of pod.spec.containers as Container[]) {
      const ref = runtimes[c.name]!.pull
      for (let attempt = 0; ref && !pulled[c.name]; attempt++) {
        if (entry.stopping) return
        try {
          pulled[c.name] = await pullImage(client, ref, imagesDir)
        } catch (e) {
          const message = `Failed to pull image "${ref}": ${e instanceof Error ? e.message : String(e)}`
          log(`${key}: ${message}`)
          await patchStatus(pod, waitingStatus(pod, attempt === 0 ? "ErrImagePull" : "ImagePullBackOff", message))
          await sleep(Math.min(10_000 * 2 ** attempt, 60_000), undefined, { signal: entry.abort.signal }).catch(() => undefined)
        }
      }
    }

    let prepared: Awaited<ReturnType<typeof preparePod>>
    try {
      prepared = await preparePod(pod, opts.dir, host, src)
    } catch (e) {
      if (!(e instanceof PodConfigError)) throw e
      log(`${key}: cannot start: ${e.message}`)
      await patchStatus(pod, waitingStatus(pod, e.reason, e.message))
      return
    }
    const { podDir, hostRoot, volumes } = prepared
    const live: Record<string, LiveContainer> = {}
    const final: Record<string, Terminated> = {}
    let reporting = Promise.resolve()
    const report = () => {
      reporting = reporting.then(() =>
        Object.keys(final).length === pod.spec.containers.length
          ? undefined
          : patchStatus(pod, runningStatus(pod, { hostIP, podIP, now: new Date().toISOString(), containers: live })),
      )
      return reporting
    }
    const restartPolicy: string = pod.spec.restartPolicy ?? "Always"

    const supervise = async (c: Container): Promise<void> => {
      let restarts = 0
      let last: Terminated | undefined
      for (;;) {
        if (entry.stopping) return
        let rc: RunningContainer
        try {
          const image = pulled[c.name]
          rc = image
            ? await startImageContainer({ pod, container: c, image, podDir, hostRoot, volumes, host, src, api: opts.api, attempt: restarts })
            : await startContainer({ pod, container: c, runtime: runtimes[c.name]!, podDir, hostRoot, volumes, host, src, api: opts.api })
        } catch (e) {
          if (!(e instanceof PodConfigError)) throw e
          log(`${key}: container ${c.name} cannot start: ${e.message}`)
          live[c.name] = {
            containerID: "",
            ready: false,
            restartCount: restarts,
            ...(last ? { lastTerminated: last } : {}),
            waiting: { reason: e.reason, message: e.message },
          }
          await report()
          return
        }
        entry.containers.set(c.name, rc)
        log(
          `${key}: running ${c.name} (pid ${rc.proc.pid}) on ${pod.spec.nodeName}${pulled[c.name] ? ` from image ${pulled[c.name]!.imageID}` : ""}${restarts ? ` (restart ${restarts})` : ""}`,
        )
        const probing = new AbortController()
        const state = (patch: Partial<LiveContainer>) => {
          live[c.name] = { ...live[c.name]!, ...patch }
          void report()
        }
        live[c.name] = {
          containerID: rc.containerID,
          imageID: pulled[c.name]?.imageID ?? "",
          startedAt: rc.startedAt,
          ready: !c.readinessProbe,
          restartCount: restarts,
          ...(last ? { lastTerminated: last } : {}),
        }
        await report()
        const target = () => ({ podIP, container: c, pid: rc.proc.pid, uid: rc.user?.uid ?? 0, gid: rc.user?.gid ?? 0 })
        const kill = (why: string) => {
          log(`${key}: container ${c.name} ${why}; killing it to restart`)
          rc.proc.kill("SIGTERM")
          setTimeout(() => rc.proc.kill("SIGKILL"), (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000).unref()
        }
        void (async () => {
          if (c.startupProbe) {
            let started = false
            const startup = new AbortController()
            probing.signal.addEventListener("abort", () => startup.abort())
            await runProber(
              c.startupProbe,
              target,
              (ok, message) => {
                started = ok
                startup.abort()
                if (!ok) kill(`failed startup probe: ${message ?? ""}`)
              },
              startup.signal,
              false,
            )
            if (!started) return
          }
          await Promise.all([
            c.readinessProbe ? runProber(c.readinessProbe, target, (ok) => state({ ready: ok }), probing.signal, false) : undefined,
            c.livenessProbe
              ? runProber(c.livenessProbe, target, (ok, message) => void (ok || kill(`failed liveness probe: ${message ?? ""}`)), probing.signal, true)
              : undefined,
          ])
        })().catch((e) => log(`${key}: probes of ${c.name}: ${e instanceof Error ? e.message : String(e)}`))
        const t = await rc.ended
        probing.abort()
        if (entry.stopping || restartPolicy === "Never" || (restartPolicy === "OnFailure" && t.exitCode === 0)) {
          final[c.name] = t
          return
        }
        last = t
        restarts++
        // The first restart is immediate, then 10 s doubling to 5 min (the kubelet's crash-loop back-off).
        const backoff = restarts === 1 ? 0 : Math.min(10 * 2 ** (restarts - 2), 300)
        log(`${key}: container ${c.name} exited ${t.exitCode}; restarting in ${backoff} s`)
        live[c.name] = {
          containerID: t.containerID,
          ready: false,
          restartCount: restarts,
          lastTerminated: t,
          ...(backoff
            ? { waiting: { reason: "CrashLoopBackOff", message: `back-off ${backoff}s restarting failed container=${c.name} pod=${pod.metadata.name}` } }
            : {}),
        }
        await report()
        await sleep(backoff * 1000, undefined, { signal: entry.abort.signal }).catch(() => undefined)
      }
    }

    try {
      await Promise.all((pod.spec.containers as Container[]).map(supervise))
    } finally {
      podIPs.delete(pod.metadata.uid)
    }
    if (Object.keys(final).length === pod.spec.containers.length) {
      log(
        `${key}: ended ${Object.entries(final)
          .map(([n, t]) => `${n}=${t.exitCode}`)
          .join(", ")}`,
      )
      await reporting
      await patchStatus(pod, finishedStatus(pod, new Date().toISOString(), final))
    }
  }

  /** Graceful stop: SIGTERM, then SIGKILL after the grace period (what deletion asks of a kubelet). */
  const terminate = async (uid: string, graceSeconds: number): Promise<void> => {
    const entry = runs.get(uid)
    if (!entry || entry.stopping) return entry?.done
    entry.stopping = true
    entry.abort.abort()
    const current = [...entry.containers.values()]
    for (const c of current) c.proc.kill("SIGTERM")
    const all = Promise.all(current.map((c) => c.ended))
    const timer = new AbortController()
    const inTime = await Promise.race([all.then(() => true), sleep(graceSeconds * 1000, false, { signal: timer.signal }).catch(() => false)])
    timer.abort()
    if (!inTime) for (const c of current) c.proc.kill("SIGKILL")
    await entry.done
  }

  const finalize = async (pod: Pod) => {
    await terminate(pod.metadata.uid, pod.metadata.deletionGracePeriodSeconds ?? 30)
    const res = await api("DELETE", `${podPath(pod.metadata.namespace, pod.metadata.name)}`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid },
    })
    if (res.status >= 300 && res.status !== 404 && res.status !== 409) log(`delete ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${res.status}`)
  }

  const onPod = async (type: string, pod: Pod): Promise<void> => {
    if (!pod.spec?.nodeName) return
    const uid = pod.metadata.uid
    if (type === "DELETED") {
      reported.delete(uid)
      void terminate(uid, 0).then(() => runs.delete(uid))
      return
    }
    const decision = podRuntimes(pod, rules)
    if (decision.kind === "ignore") return
    if (pod.metadata.deletionTimestamp) {
      if (finalizing.has(uid)) return
      finalizing.add(uid)
      void finalize(pod)
        .catch((e) => log(`finalize ${pod.metadata.name}: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => finalizing.delete(uid))
      return
    }
    if (runs.has(uid) || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") return
    if (ours(pod)) {
      // Started by an earlier kubelet process whose containers are gone: what a kubelet reports for a lost container.
      const now = new Date().toISOString()
      const lost = Object.fromEntries(
        pod.spec.containers.map((c: { name: string }) => [
          c.name,
          {
            exitCode: 137,
            reason: "ContainerStatusUnknown",
            message: "The container could not be located when the pod was terminated",
            startedAt: now,
            finishedAt: now,
            containerID: "",
          },
        ]),
      )
      await patchStatus(pod, finishedStatus(pod, now, lost))
      return
    }
    if (decision.kind === "unavailable") {
      if (reported.has(uid)) return
      reported.add(uid)
      log(`${pod.metadata.namespace}/${pod.metadata.name}: ${decision.message}`)
      await patchStatus(pod, waitingStatus(pod, "ErrImagePull", decision.message))
      return
    }
    const entry: PodRun = {
      uid,
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      containers: new Map(),
      abort: new AbortController(),
      stopping: false,
      finished: false,
      done: Promise.resolve(),
    }
    runs.set(uid, entry)
    entry.done = run(pod, decision.runtimes)
      .catch((e) => log(`${pod.metadata.namespace}/${pod.metadata.name}: ${e instanceof Error ? e.stack : String(e)}`))
      .finally(() => void (entry.finished = true))
  }

  // List, then watch from the list's resourceVersion; on any break, list again (a kubelet's informer, by hand).
  const loop = async () => {
    while (!stopped) {
      try {
        const list = await api("GET", "/api/v1/pods?fieldSelector=spec.nodeName!%3D")
        if (list.status !== 200) throw new Error(`list pods: HTTP ${list.status}`)
        for (const p of list.body.items) await onPod("ADDED", { ...p, apiVersion: "v1", kind: "Pod" })
        await watch(list.body.metadata.resourceVersion)
      } catch (e) {
        if (stopped) return
        log(`pod watch: ${e instanceof Error ? e.message : String(e)}; relisting`)
        await sleep(500)
      }
    }
  }

  const watch = async (rv: string) => {
    const user = opts.target.users[opts.user]!
    const res = await request(`${opts.target.server}/api/v1/pods?watch=1&allowWatchBookmarks=true&fieldSelector=spec.nodeName!%3D&resourceVersion=${rv}`, {
      headers: { authorization: `Bearer ${user.token}`, accept: "application/json" },
      dispatcher: agentFor(opts.target.caFile),
      signal: abort.signal,
      bodyTimeout: 0,
      headersTimeout: 30_000,
    })
    if (res.statusCode !== 200) throw new Error(`watch pods: HTTP ${res.statusCode}`)
    let buf = ""
    for await (const chunk of res.body) {
      buf += chunk.toString()
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        if (!line.trim()) continue
        const ev = JSON.parse(line) as { type: string; object: Pod }
        if (ev.type === "ERROR") throw new Error(`watch error: ${ev.object?.message ?? "unknown"}`)
        if (ev.type === "BOOKMARK") continue
        await onPod(ev.type, ev.object).catch((e) => log(`pod ${ev.object?.metadata?.name}: ${e instanceof Error ? e.message : String(e)}`))
      }
    }
  }

  const logServer = opts.logs
    ? await serveContainerLogs({
        ...opts.logs,
        podsDir: join(opts.dir, "pods"),
        isRunning: (ns, name) => [...runs.values()].some((r) => r.namespace === ns && r.name === name && !r.finished),
      })
    : undefined
  const done = loop()
  log(`process kubelet started; runs ${rules.map((r) => r.repository).join(", ")}${opts.logs ? `; containerLogs on 127.0.0.1:${opts.logs.port}` : ""}`)
  return {
    /** Pods currently running here (namespace/name). */
    running: () => [...runs.values()].filter((r) => !r.finished).map((r) => `${r.namespace}/${r.name}`),
    stop: async () => {
      stopped = true
      abort.abort()
      await Promise.all([...runs.keys()].map((uid) => terminate(uid, 2)))
      await done.catch(() => undefined)
      await client.close()
      logServer?.closeAllConnections()
      await new Promise((resolve) => (logServer ? logServer.close(resolve) : resolve(undefined)))
    },
  }
}
