// Where the harness finds its binaries: hack/tools/versions.env names the versions, hack/build-tools.sh builds them
// into ${AICR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-operator/bin}/<tool>-<version>/ (complete once that
// directory holds `.complete`), and the OCI registry, htpasswd and redis-server come from Debian packages.
import { existsSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, dirname, join } from "node:path"

export interface ToolVersions {
  readonly k8s: string
  readonly etcd: string
  readonly kwok: string
  readonly helm: string
  /** The AICR version the operator pins, and the one before it (both built, for the upgrade scenario). */
  readonly aicr: string
  readonly aicrPrevious: string
  /** Helm v3 for Argo CD's repo-server only (the version Argo CD pins). */
  readonly helm3: string
  readonly argocd: string
  /** moto (PyPI), the local AWS emulator; a venv, see aws.ts. */
  readonly moto?: string | undefined
  /** kubeconform, for the chart's tests. */
  readonly kubeconform?: string | undefined
  /** The oras CLI: the install guide's `oras pull`, and checks of pushed images the way a user would. */
  readonly oras: string
  /** promtool, for the chart's alerts (`promtool check rules`, `promtool test rules`). */
  readonly promtool?: string | undefined
  /** yq, as the install guide reads the chart's values (`helm show values … | yq -r .operator.image`). */
  readonly yq?: string | undefined
}

/** The monorepo root: the first ancestor of this file that holds hack/tools/versions.env. */
export const repoRoot = (): string => {
  let dir = import.meta.dirname
  for (;;) {
    if (existsSync(join(dir, "hack", "tools", "versions.env"))) return dir
    const up = dirname(dir)
    if (up === dir) throw new Error(`harness: no hack/tools/versions.env above ${import.meta.dirname}`)
    dir = up
  }
}

/** Parses hack/tools/versions.env (KEY=value lines, # comments). */
export const readVersions = (root: string = repoRoot()): ToolVersions => {
  const env: Record<string, string> = {}
  for (const line of readFileSync(join(root, "hack", "tools", "versions.env"), "utf8").split("\n")) {
    const m = /^\s*([A-Z0-9_]+)=["']?([^"'#\s]*)["']?/.exec(line)
    if (m) env[m[1]!] = m[2]!
  }
  const need = (key: string): string => {
    const v = env[key]
    if (!v) throw new Error(`harness: ${key} missing from hack/tools/versions.env`)
    return v
  }
  return {
    k8s: need("K8S_VERSION"),
    etcd: need("ETCD_VERSION"),
    kwok: need("KWOK_VERSION"),
    helm: need("HELM_VERSION"),
    aicr: need("AICR_VERSION"),
    aicrPrevious: need("AICR_PREVIOUS_VERSION"),
    helm3: need("HELM3_VERSION"),
    argocd: need("ARGOCD_VERSION"),
    moto: env["MOTO_VERSION"],
    kubeconform: env["KUBECONFORM_VERSION"],
    oras: need("ORAS_VERSION"),
    promtool: env["PROMTOOL_VERSION"],
    yq: env["YQ_VERSION"],
  }
}

export const toolsCache = (): string => process.env.AICR_TOOLS_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "aicr-operator", "bin")

export type ToolName =
  | "etcd"
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kubectl"
  | "kwok"
  | "helm"
  | "helm3"
  | "argocd"
  | "kubeconform"
  | "oras"
  | "promtool"
  | "yq"
  | "docker-registry"
  | "htpasswd"
  | "redis-server"

// dir: the ToolVersions key whose version names the cache directory; cache: that directory's tool prefix (default
// the key); file: the binary's name in it (default the tool name); arg: the build-tools.sh argument that builds it.
const built: Record<string, { readonly dir: keyof ToolVersions; readonly cache?: string; readonly file?: string; readonly arg: string }> = {
  etcd: { dir: "etcd", arg: "etcd" },
  "kube-apiserver": { dir: "k8s", arg: "k8s" },
  "kube-controller-manager": { dir: "k8s", arg: "k8s" },
  "kube-scheduler": { dir: "k8s", arg: "k8s" },
  kubectl: { dir: "k8s", cache: "kubectl", arg: "kubectl" },
  kwok: { dir: "kwok", arg: "kwok" },
  helm: { dir: "helm", arg: "helm" },
  helm3: { dir: "helm3", cache: "helm", file: "helm", arg: "helm3" },
  argocd: { dir: "argocd", arg: "argocd" },
  kubeconform: { dir: "kubeconform", arg: "kubeconform" },
  oras: { dir: "oras", arg: "oras" },
  promtool: { dir: "promtool", arg: "promtool" },
  yq: { dir: "yq", arg: "yq" },
}

const onPath = (name: string): string | undefined => {
  for (const d of [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/sbin"]) {
    if (d && existsSync(join(d, name))) return join(d, name)
  }
  return undefined
}

/** Absolute path of one tool; throws a message that says how to get it when it is missing. */
export const toolPath = (name: ToolName, versions: ToolVersions = readVersions()): string => {
  const b = built[name]
  if (b) {
    const version = versions[b.dir]
    const dir = join(toolsCache(), `${b.cache ?? b.dir}-${version}`)
    const path = join(dir, b.file ?? name)
    if (!existsSync(join(dir, ".complete")) || !existsSync(path)) {
      throw new Error(`harness: ${name} ${version} is not built (no ${dir}/.complete): run 'bash hack/build-tools.sh ${b.arg}'`)
    }
    return path
  }
  const found = onPath(name)
  if (!found) throw new Error(`harness: ${name} not found on PATH: run 'bash hack/build-tools.sh ${name === "redis-server" ? "redis" : "registry"}'`)
  return found
}

/** The kwok "fast" stage set (a kustomize directory copied beside the kwok binary by hack/build-tools.sh). */
export const kwokStagesDir = (versions: ToolVersions = readVersions()): string => {
  const dir = join(dirname(toolPath("kwok", versions)), "stage", "fast")
  if (!existsSync(join(dir, "kustomization.yaml"))) throw new Error(`harness: kwok stages missing at ${dir}`)
  return dir
}

export const resolveTools = (names: readonly ToolName[], versions: ToolVersions = readVersions()): Record<string, string> =>
  Object.fromEntries(names.map((n) => [n, toolPath(n, versions)]))

/** The `aicr` CLI built for a version (hack/build-tools.sh aicr); throws how to build it when missing. */
export const aicrBinary = (version: string): string => {
  const dir = join(toolsCache(), `aicr-${version}`)
  if (!existsSync(join(dir, ".complete"))) throw new Error(`harness: aicr ${version} is not built (no ${dir}/.complete): run 'bash hack/build-tools.sh aicr'`)
  return join(dir, "aicr")
}

/** The Argo CD CRDs (manifests/crds/ of its module, copied beside the binary by hack/build-tools.sh). */
export const argoCdCrdsDir = (versions: ToolVersions = readVersions()): string => {
  const dir = join(dirname(toolPath("argocd", versions)), "crds")
  if (!existsSync(join(dir, "application-crd.yaml"))) throw new Error(`harness: Argo CD CRDs missing at ${dir}: run 'bash hack/build-tools.sh argocd'`)
  return dir
}
