// What a container runtime derives from an image config and a container spec, as pure functions: the command line
// (Kubernetes' command/args over the image's Entrypoint/Cmd), the environment (the image's, then the pod's), and
// the user (securityContext over the image's USER, names looked up in the image's /etc/passwd and /etc/group).
/* eslint-disable @typescript-eslint/no-explicit-any -- raw core/v1 objects from the API server */
import { expand, PodConfigError } from "./pod"
import type { ImageConfig } from "./pull"

/**
 * The process a container runs (Kubernetes' rules): `command` replaces the image's Entrypoint and drops its Cmd;
 * `args` replace Cmd; $(VAR) references expand from the container's environment.
 */
export const imageCommandLine = (c: any, config: ImageConfig, env: Readonly<Record<string, string>>): string[] => {
  const fromSpec = (xs: string[]) => xs.map((a) => expand(a, env))
  const command: string[] = c.command?.length ? fromSpec(c.command) : [...(config.Entrypoint ?? [])]
  const args: string[] = c.args?.length ? fromSpec(c.args) : c.command?.length ? [] : [...(config.Cmd ?? [])]
  return [...command, ...args]
}

/** The image's Env (KEY=value lines) under the kubelet's variables: the pod's values win. */
export const imageEnv = (config: ImageConfig, podEnv: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const line of config.Env ?? []) {
    const eq = line.indexOf("=")
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1)
  }
  return { ...out, ...podEnv }
}

const lookup = (file: string, name: string): string[] | undefined =>
  file
    .split("\n")
    .map((l) => l.split(":"))
    .find((f) => f[0] === name)

/**
 * The uid and gid the container runs as: securityContext.runAsUser/runAsGroup (container, then pod), else the
 * image's USER (`uid`, `uid:gid`, `name` or `name:group`); a user without a group gets its passwd group, or 0.
 */
export const containerUser = (pod: any, c: any, config: ImageConfig, files: { passwd: string; group: string }): { uid: number; gid: number; home: string } => {
  const sc = { ...(pod.spec.securityContext ?? {}), ...(c.securityContext ?? {}) }
  const [userPart = "", groupPart] = (config.User ?? "").split(":")
  const pw = (u: string) =>
    /^\d+$/.test(u)
      ? files.passwd
          .split("\n")
          .map((l) => l.split(":"))
          .find((f) => f[2] === u)
      : lookup(files.passwd, u)
  let uid: number
  let entry: string[] | undefined
  if (sc.runAsUser !== undefined) {
    uid = Number(sc.runAsUser)
    entry = pw(String(uid))
  } else if (userPart === "") {
    uid = 0
    entry = pw("0")
  } else if (/^\d+$/.test(userPart)) {
    uid = Number(userPart)
    entry = pw(userPart)
  } else {
    entry = lookup(files.passwd, userPart)
    if (!entry) throw new PodConfigError("CreateContainerConfigError", `container ${c.name}: image user ${userPart} is not in the image's /etc/passwd`)
    uid = Number(entry[2])
  }
  if (sc.runAsNonRoot === true && uid === 0) {
    throw new PodConfigError("CreateContainerConfigError", "container has runAsNonRoot and image will run as root")
  }
  let gid: number
  if (sc.runAsGroup !== undefined) gid = Number(sc.runAsGroup)
  else if (groupPart !== undefined && groupPart !== "" && sc.runAsUser === undefined) {
    const g = /^\d+$/.test(groupPart) ? [groupPart, "", groupPart] : lookup(files.group, groupPart)
    if (!g) throw new PodConfigError("CreateContainerConfigError", `container ${c.name}: image group ${groupPart} is not in the image's /etc/group`)
    gid = Number(g[2])
  } else gid = entry ? Number(entry[3]) : 0
  return { uid, gid, home: entry?.[5] || "/" }
}
