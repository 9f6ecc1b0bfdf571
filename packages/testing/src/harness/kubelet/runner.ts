// Runs one pod's containers as local processes, the way a kubelet would: volumes laid out under the pod's directory,
// a private mount (and UTS) namespace per container that binds the fake host's files and the volumes at their mount
// paths, the in-cluster API through the pod's own ServiceAccount token, the termination-message file, and a log
// file per container. A container ends with its exit code (128+N when killed by signal N).
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { type Proc, spawnProc, tailFile } from "../proc"
import { HOST_OVERLAYS, type HostProfile, writeHostRoot } from "./hosts"
import type { ImageRuntime } from "./images"
import {
  type ApiServerEndpoint,
  commandLine,
  type Container,
  containerEnv,
  exitCodeOf,
  type Pod,
  PodConfigError,
  type PodSources,
  terminationMessage,
  type Terminated,
  volumeContent,
} from "./pod"

// $1 hostname, $2 working dir, $3 the mount table (lines "source<TAB>target<TAB>ro|rw|host"), then the command.
// Bind mounts are private to this process's namespace. Every source is first bound into a private tmpfs, so a
// mount over a directory that holds later sources (an emptyDir over /tmp, say) cannot hide them. Mount points that
// do not exist yet are created (empty), except for "host" overlays, which cover only what the build machine has (a
// kernel without modules has no /proc/modules).
export const STAGE_DIR = "/run/aicr-harness-mounts"
const CONTAINER_INIT = `set -e
hn=$1; cwd=$2; table=$3; shift 3
hostname "$hn" 2>/dev/null || true
stage=${STAGE_DIR}
mkdir -p "$stage"; mount -t tmpfs -o mode=0700 tmpfs "$stage"
tab=$(printf '\\t')
i=0
while IFS="$tab" read -r src dst mode; do
  i=$((i+1))
  if [ -d "$src" ]; then mkdir "$stage/$i"; else : > "$stage/$i"; fi
  mount --bind "$src" "$stage/$i"
done < "$table"
i=0
while IFS="$tab" read -r src dst mode; do
  i=$((i+1))
  if [ "$mode" = host ]; then [ -e "$dst" ] || continue; mode=ro; fi
  if [ -d "$stage/$i" ]; then mkdir -p "$dst"; else mkdir -p "$(dirname "$dst")"; [ -e "$dst" ] || : > "$dst"; fi
  mount --bind "$stage/$i" "$dst"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$dst"; fi
done < "$table"
cd "$cwd"
exec "$@"`

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find(existsSync) ?? "unshare"

export interface Mount {
  readonly source: string
  readonly target: string
  readonly readOnly: boolean
  /** A fake-host overlay: bound only where the build machine has the target. */
  readonly overlay?: boolean
}

export interface RunningContainer {
  readonly name: string
  readonly proc: Proc
  readonly startedAt: string
  readonly containerID: string
  /** Resolves once the process ended, with what the kubelet reports. */
  readonly ended: Promise<Terminated>
  /** The user it runs as (image containers; a local-binary container runs as the kubelet's user). */
  readonly user?: { readonly uid: number; readonly gid: number }
}

const safe = (p: string) => p.replace(/^\/+/, "")

/** Lays out every volume of the pod under podDir/volumes/<name>; hostPath volumes point into the fake host root. */
export const prepareVolumes = async (pod: Pod, podDir: string, hostRoot: string, src: PodSources): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const v of pod.spec.volumes ?? []) {
    const content = await volumeContent(pod, v, src)
    if (content.kind === "hostPath") {
      const path = join(hostRoot, safe(content.path))
      if (!existsSync(path)) {
        mkdirSync(dirname(path), { recursive: true })
        if (content.type === "File" || content.type === "FileOrCreate" || content.type === "Socket") writeFileSync(path, "")
        else mkdirSync(path, { recursive: true })
      }
      out[v.name] = path
      continue
    }
    const dir = join(podDir, "volumes", v.name)
    mkdirSync(dir, { recursive: true })
    if (content.kind === "files") {
      for (const [rel, data] of Object.entries(content.files)) {
        const file = join(dir, safe(rel))
        mkdirSync(dirname(file), { recursive: true })
        writeFileSync(file, data)
        chmodSync(file, content.mode ?? 0o644)
      }
    }
    out[v.name] = dir
  }
  return out
}

/** The bind mounts of one container: the fake host's files first, then its volume mounts, then the termination log. */
export const containerMounts = (c: Container, hostRoot: string, volumes: Record<string, string>, terminationLog: string): Mount[] => {
  const mounts: Mount[] = HOST_OVERLAYS.map((rel) => ({ source: join(hostRoot, rel), target: `/${rel}`, readOnly: true, overlay: true }))
  mounts.push({ source: join(hostRoot, "etc/os-release"), target: "/usr/lib/os-release", readOnly: true, overlay: true })
  for (const m of c.volumeMounts ?? []) {
    const base = volumes[m.name]
    if (!base) throw new PodConfigError("CreateContainerConfigError", `volumeMount ${m.mountPath}: no volume named ${m.name}`)
    const source = m.subPath ? join(base, safe(m.subPath)) : base
    if (m.subPath && !existsSync(source)) mkdirSync(source, { recursive: true })
    mounts.push({ source, target: m.mountPath, readOnly: !!m.readOnly })
  }
  mounts.push({ source: terminationLog, target: c.terminationMessagePath ?? "/dev/termination-log", readOnly: false })
  return mounts
}

export interface StartContainer {
  readonly pod: Pod
  readonly container: Container
  readonly runtime: ImageRuntime
  readonly podDir: string
  readonly hostRoot: string
  readonly volumes: Record<string, string>
  readonly host: HostProfile
  readonly src: PodSources
  readonly api: ApiServerEndpoint
}

/** Starts one container; fails with PodConfigError when its config cannot be built (the pod then stays Waiting). */
export const startContainer = async (s: StartContainer): Promise<RunningContainer> => {
  const { pod, container: c } = s
  const env = await containerEnv(pod, c, s.src, s.api)
  // The fake host's tools (nvidia-smi on GPU nodes) are bound inside the private staging tmpfs, where no volume
  // mount can hide them and nothing is left on the build machine.
  const hostBin = s.host.gpu ? [`${STAGE_DIR}/host/usr/bin`] : []
  env.PATH = [...s.runtime.path, ...hostBin, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(":")
  const home = join(s.podDir, "home", c.name)
  mkdirSync(home, { recursive: true })
  env.HOME ??= home
  const terminationLog = join(s.podDir, "termination", c.name)
  mkdirSync(dirname(terminationLog), { recursive: true })
  writeFileSync(terminationLog, "")
  const mounts = [
    ...containerMounts(c, s.hostRoot, s.volumes, terminationLog),
    ...(s.host.gpu ? [{ source: join(s.hostRoot, "usr"), target: `${STAGE_DIR}/host/usr`, readOnly: true }] : []),
  ]
  const shadowing = mounts.find(
    (m) => STAGE_DIR === m.target || STAGE_DIR.startsWith(`${m.target.replace(/\/+$/, "")}/`) || m.target.replace(/^\/var\/run(\/|$)/, "/run$1") === "/run",
  )
  if (shadowing)
    throw new PodConfigError(
      "CreateContainerConfigError",
      `container ${c.name}: mount path ${shadowing.target} is not supported by the process kubelet (it would hide ${STAGE_DIR})`,
    )
  const table = join(s.podDir, "mounts", `${c.name}.tsv`)
  mkdirSync(dirname(table), { recursive: true })
  writeFileSync(table, mounts.map((m) => [m.source, m.target, m.overlay ? "host" : m.readOnly ? "ro" : "rw"].join("\t")).join("\n") + "\n")
  const argv = commandLine(c, s.runtime.entrypoint, env)
  if (argv.length === 0) throw new PodConfigError("ContainerCannotRun", `container ${c.name}: no command and the image has no entrypoint`)
  const cwd = c.workingDir ?? s.runtime.workdir ?? "/"
  const hostname = pod.spec.hostNetwork ? pod.spec.nodeName : (pod.spec.hostname ?? pod.metadata.name).slice(0, 63)
  const startedAt = new Date().toISOString()
  const proc = await spawnProc({
    name: c.name,
    bin: UNSHARE,
    args: ["--mount", "--uts", "--propagation", "private", "/bin/sh", "-c", CONTAINER_INIT, "aicr-harness-container", hostname, cwd, table, ...argv],
    logDir: join(s.podDir, "logs"),
    env,
    inheritEnv: false,
  })
  const containerID = `harness://${pod.metadata.uid}/${c.name}/${proc.pid}`
  const ended = proc.exitStatus.then(({ code, signal }): Terminated => {
    const exitCode = exitCodeOf(code, signal)
    const file = existsSync(terminationLog) ? readFileSync(terminationLog, "utf8") : undefined
    const message = terminationMessage(file, c.terminationMessagePolicy, exitCode, () => tailFile(proc.log, 80))
    return {
      exitCode,
      ...(signal ? { signal } : {}),
      reason: exitCode === 0 ? "Completed" : "Error",
      ...(message ? { message } : {}),
      startedAt,
      finishedAt: new Date().toISOString(),
      containerID,
    }
  })
  return { name: c.name, proc, startedAt, containerID, ended }
}

/** Lays out the pod directory (host root from the node's profile, volumes); returns what containers need. */
export const preparePod = async (pod: Pod, kubeletDir: string, host: HostProfile, src: PodSources) => {
  const podDir = join(kubeletDir, "pods", `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`)
  rmSync(join(podDir, "volumes"), { recursive: true, force: true })
  const hostRoot = writeHostRoot(podDir, "host", host)
  const volumes = await prepareVolumes(pod, podDir, hostRoot, src)
  return { podDir, hostRoot, volumes }
}
