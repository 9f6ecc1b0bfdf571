// Runs one container from its pulled image: in a private mount (and UTS) namespace, an overlay over the image's
// root filesystem (the image read-only below, the container's writes in the pod directory above), /proc, a minimal
// /dev, /sys read-only, the kubelet-managed /etc/hosts, /etc/hostname and /etc/resolv.conf, the pod's volumes at their
// mount paths inside that root, then the entrypoint with that root as `/`, as the container's user. Everything is
// mounted in the container's own namespace, so nothing is left behind when it ends, and no path on the build machine
// (a tools cache under /tmp, say) can be hidden by a volume: the image's files are inside the overlay.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chownSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { spawnProc, tailFile } from "../proc"
import { HOST_OVERLAYS, type HostProfile } from "./hosts"
import { containerUser, imageCommandLine, imageEnv } from "./image-config"
import {
  type ApiServerEndpoint,
  type Container,
  containerEnv,
  exitCodeOf,
  type Pod,
  PodConfigError,
  type PodSources,
  terminationMessage,
  type Terminated,
} from "./pod"
import type { PulledImage } from "./pull"
import { type Mount, type RunningContainer, STAGE_DIR } from "./runner"

// $1 hostname, $2 working dir, $3 mount table, $4 image rootfs (lower), $5 upper, $6 work, $7 merged root, $8 uid,
// $9 gid, ${10} read-only root (true/false), then the command. Table targets are paths inside the container.
// The script's own tools come from this machine's system directories; the container's PATH is restored for the exec.
const IMAGE_INIT = `set -e
cpath=$PATH; PATH=/usr/sbin:/usr/bin:/sbin:/bin; u=$(command -v unshare)
hn=$1; cwd=$2; table=$3; lower=$4; upper=$5; work=$6; root=$7; uid=$8; gid=$9; shift 9; ro=$1; shift
hostname "$hn" 2>/dev/null || true
mkdir -p "$upper" "$work" "$root"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$root"
stage=${STAGE_DIR}
mkdir -p "$stage"; mount -t tmpfs -o mode=0700 tmpfs "$stage"
tab=$(printf '\\t')
i=0
while IFS="$tab" read -r src dst mode; do
  i=$((i+1))
  if [ -d "$src" ]; then mkdir "$stage/$i"; else : > "$stage/$i"; fi
  mount --bind "$src" "$stage/$i"
done < "$table"
mkdir -p "$root/proc" "$root/dev" "$root/sys" "$root/etc" "$root$cwd"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t tmpfs -o nosuid,mode=0755 tmpfs "$root/dev"
for d in null zero full random urandom tty; do : > "$root/dev/$d"; mount --bind "/dev/$d" "$root/dev/$d"; done
mkdir -p "$root/dev/shm" "$root/dev/pts"; mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"; ln -s /proc/self/fd/0 "$root/dev/stdin"; ln -s /proc/self/fd/1 "$root/dev/stdout"; ln -s /proc/self/fd/2 "$root/dev/stderr"
mount --rbind /sys "$root/sys"; mount -o remount,bind,ro "$root/sys" 2>/dev/null || true
i=0
while IFS="$tab" read -r src dst mode; do
  i=$((i+1))
  t="$root$dst"
  if [ "$mode" = host ]; then [ -e "$t" ] || continue; mode=ro; fi
  if [ -d "$stage/$i" ]; then mkdir -p "$t"; else mkdir -p "$(dirname "$t")"; [ -e "$t" ] || : > "$t"; fi
  mount --bind "$stage/$i" "$t"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$t"; fi
done < "$table"
if [ "$ro" = true ]; then mount -o remount,ro "$root"; fi
export PATH="$cpath"
if [ "$uid" = 0 ] && [ "$gid" = 0 ]; then exec "$u" --root="$root" --wd="$cwd" -- "$@"; fi
exec "$u" --root="$root" --wd="$cwd" --setgid "$gid" --setuid "$uid" -- "$@"`

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find(existsSync) ?? "unshare"

export interface StartImageContainer {
  readonly pod: Pod
  readonly container: Container
  readonly image: PulledImage
  readonly podDir: string
  readonly hostRoot: string
  readonly volumes: Record<string, string>
  readonly host: HostProfile
  readonly src: PodSources
  readonly api: ApiServerEndpoint
  /** Restart number (0 for the first start): each start gets a fresh writable layer, as a new container would. */
  readonly attempt: number
}

const readImageFile = (rootfs: string, rel: string) => {
  const f = join(rootfs, rel)
  return existsSync(f) ? readFileSync(f, "utf8") : ""
}

/** Gives a volume directory's files to the container's user when it is not root (what fsGroup-less kubelets do for projected tokens). */
const chownTree = (dir: string, uid: number, gid: number) => {
  chownSync(dir, uid, gid)
  for (const f of readdirSync(dir)) {
    const p = join(dir, f)
    if (statSync(p).isDirectory()) chownTree(p, uid, gid)
    else chownSync(p, uid, gid)
  }
}

/** The files the kubelet manages in every container: /etc/hosts, /etc/hostname, /etc/resolv.conf. */
const kubeletFiles = (dir: string, hostname: string, podIP: string): Mount[] => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, "hosts"),
    `# Kubernetes-managed hosts file (process kubelet).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${podIP}\t${hostname}\n`,
  )
  writeFileSync(join(dir, "hostname"), `${hostname}\n`)
  writeFileSync(join(dir, "resolv.conf"), existsSync("/etc/resolv.conf") ? readFileSync("/etc/resolv.conf") : "")
  return ["hosts", "hostname", "resolv.conf"].map((f) => ({ source: join(dir, f), target: `/etc/${f}`, readOnly: false }))
}

/** Starts one container of a pulled image; PodConfigError when its config cannot be built. */
export const startImageContainer = async (s: StartImageContainer): Promise<RunningContainer> => {
  const { pod, container: c, image } = s
  const user = containerUser(pod, c, image.config, { passwd: readImageFile(image.rootfs, "etc/passwd"), group: readImageFile(image.rootfs, "etc/group") })
  const env = imageEnv(image.config, await containerEnv(pod, c, s.src, s.api))
  env.PATH ??= "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  // The fake host's tools (nvidia-smi on GPU nodes) under the private staging path inside the root, after PATH.
  if (s.host.gpu) env.PATH = `${env.PATH}:${STAGE_DIR}/host/usr/bin`
  env.HOME ??= user.home
  const cdir = join(s.podDir, "containers", c.name)
  const terminationLog = join(cdir, `termination-${s.attempt}`)
  mkdirSync(cdir, { recursive: true })
  writeFileSync(terminationLog, "")
  if (user.uid !== 0) chownSync(terminationLog, user.uid, user.gid)
  const hostname = pod.spec.hostNetwork ? pod.spec.nodeName : (pod.spec.hostname ?? pod.metadata.name).slice(0, 63)
  const podIP = pod.status?.podIP ?? "127.0.0.1"
  const mounts: Mount[] = [
    // Kernel facts of the fake host, over the container's /proc (images carry their own /etc/os-release).
    ...HOST_OVERLAYS.filter((rel) => rel.startsWith("proc/")).map((rel) => ({
      source: join(s.hostRoot, rel),
      target: `/${rel}`,
      readOnly: true,
      overlay: true,
    })),
    ...kubeletFiles(join(cdir, "etc"), hostname, podIP),
  ]
  for (const m of c.volumeMounts ?? []) {
    const base = s.volumes[m.name]
    if (!base) throw new PodConfigError("CreateContainerConfigError", `volumeMount ${m.mountPath}: no volume named ${m.name}`)
    const source = m.subPath ? join(base, m.subPath.replace(/^\/+/, "")) : base
    if (m.subPath && !existsSync(source)) mkdirSync(source, { recursive: true })
    if (user.uid !== 0 && source.startsWith(join(s.podDir, "volumes"))) chownTree(source, user.uid, user.gid)
    mounts.push({ source, target: m.mountPath, readOnly: !!m.readOnly })
  }
  mounts.push({ source: terminationLog, target: c.terminationMessagePath ?? "/dev/termination-log", readOnly: false })
  if (s.host.gpu) mounts.push({ source: join(s.hostRoot, "usr"), target: `${STAGE_DIR}/host/usr`, readOnly: true })
  const table = join(cdir, "mounts.tsv")
  writeFileSync(table, mounts.map((m) => [m.source, m.target, m.overlay ? "host" : m.readOnly ? "ro" : "rw"].join("\t")).join("\n") + "\n")
  const argv = imageCommandLine(c, image.config, env)
  if (argv.length === 0) throw new PodConfigError("ContainerCannotRun", `container ${c.name}: no command and the image has no entrypoint`)
  const cwd = c.workingDir ?? image.config.WorkingDir ?? "/"
  const readOnlyRoot = c.securityContext?.readOnlyRootFilesystem === true
  const layer = join(cdir, `layer-${s.attempt}`)
  const startedAt = new Date().toISOString()
  const proc = await spawnProc({
    name: c.name,
    bin: UNSHARE,
    args: [
      "--mount",
      "--uts",
      "--propagation",
      "private",
      "/bin/sh",
      "-c",
      IMAGE_INIT,
      "aicr-harness-container",
      hostname,
      cwd,
      table,
      image.rootfs,
      join(layer, "upper"),
      join(layer, "work"),
      join(layer, "root"),
      String(user.uid),
      String(user.gid),
      String(readOnlyRoot),
      ...argv,
    ],
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
  return { name: c.name, proc, startedAt, containerID, ended, user: { uid: user.uid, gid: user.gid } }
}
