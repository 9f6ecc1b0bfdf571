/**
 * The operator on the local control plane, installed the way the install guide installs it (`aicr-dev up`):
 *
 * 1. each controller's image built without a daemon (hack/build-images.ts; unchanged layers from the cache) and
 *    pushed to the plane's registry under `<registry>/nvidia/aicr-operator-<controller>`, the path the chart's
 *    defaults name on ghcr.io;
 * 2. `kubectl create namespace aicr-system` with the Pod Security label `enforce=restricted`;
 * 3. the chart (charts/aicr-operator) packaged and pushed to the plane's registry as `oci://<registry>/charts/aicr-operator`,
 *    and installed from there (`helm upgrade --install`, so a second `up` upgrades in place) with a `values.yaml`
 *    shaped like the guide's, the images pinned by digest;
 * 4. `kubectl -n aicr-system rollout status deployment/<each>`.
 *
 * The process kubelet runs the controllers' pods from their images, each under its own ServiceAccount and the RBAC the
 * chart renders from the contracts. The registry needs no login: an admin's docker-config Secret (`static`) stands in.
 */
import { spawnSync } from "node:child_process"
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { aicrImage, type Arch, buildImage, controllerImage, pushImage } from "@aicr/image"
import { OciClient } from "@aicr/oras"
import { applyManifests, type HarnessInfo, readVersions } from "@aicr/testing/harness"
import { parse, parseDocument, stringify } from "yaml"
import { buildProjectImages, builtAicrVersions, projectImages } from "./build-images"
import {
  COMPONENT_NAMESPACES,
  COMPONENT_POD_SECURITY,
  DOCKER_CONFIG_SECRET,
  LOCAL_STABILIZATION_WINDOW,
  OPERATOR_NAMESPACE,
  registryPrefix,
} from "./local-operator"

const root = join(import.meta.dirname, "..")
export const CHART_DIR = join(root, "charts", "aicr-operator")
export const RELEASE = "aicr-operator"

/** The controllers the chart installs, by their `controllers.<key>` in values.yaml. */
export const CONTROLLERS = {
  resolver: "resolver",
  registryMirror: "registry-mirror",
  planner: "planner",
  approvalGuard: "approval-guard",
  stepExecutor: "step-executor",
  ecrCredentialRefresher: "ecr-credential-refresher",
  validationGate: "validation-gate",
} as const
export type ControllerKey = keyof typeof CONTROLLERS
/**
 * A controller's Deployment in the chart: `aicr-<controller>`, except the ecr-credential-refresher, which holds the
 * operator's AWS identity (ServiceAccount `aicr-operator`) and is `deployment/aicr-operator`, the one the install
 * guide's step 6 waits for before it reads the token that controller writes.
 */
export const deploymentOf = (c: (typeof CONTROLLERS)[ControllerKey]): string => (c === "ecr-credential-refresher" ? "aicr-operator" : `aicr-${c}`)
/** The chart's Deployments, one per controller. */
export const DEPLOYMENTS = Object.values(CONTROLLERS).map(deploymentOf)

/** Where `up` pushes the operator's images: `<registry>/nvidia/aicr-operator-<controller>`, as on ghcr.io/nvidia. */
export const imagePrefix = (info: Pick<HarnessInfo, "registry">) => `${info.registry}/nvidia`
/** Where `up` pushes the chart: `oci://<registry>/charts/aicr-operator`, as on oci://ghcr.io/nvidia/charts. */
export const chartRepository = (info: Pick<HarnessInfo, "registry">) => `oci://${info.registry}/charts`

export interface LocalImage {
  readonly repository: string
  readonly digest: string
  /** Seconds the build took (0.0–0.5 s from the layer cache). */
  readonly seconds: number
}

const hostArch = (): Arch => (process.arch === "arm64" ? "arm64" : "amd64")

/**
 * Builds each controller's image for this machine's architecture (the bundles in dist/apps must be built) and pushes
 * it; the content decides the digest, so an unchanged controller keeps its digest and its Deployment does not roll.
 */
export const buildLocalImages = async (info: Pick<HarnessInfo, "registry">, opts: { outDir?: string } = {}): Promise<Record<ControllerKey, LocalImage>> => {
  const controllers = Object.values(CONTROLLERS)
  const images = projectImages({ platforms: [hostArch()], controllers, aicr: false }).filter((p) => p.path !== "aicr-operator")
  const built = await buildProjectImages(images, { push: imagePrefix(info), useCache: true, ...(opts.outDir ? { outDir: opts.outDir } : {}) })
  const byPath = new Map(built.map((b) => [b.path, b]))
  return Object.fromEntries(
    Object.entries(CONTROLLERS).map(([key, c]) => {
      const b = byPath.get(`aicr-operator-${c}`)
      if (!b?.ref) throw new Error(`the image of ${c} was not built and pushed`)
      return [key, { repository: `${imagePrefix(info)}/aicr-operator-${c}`, digest: b.image.digest, seconds: b.seconds }]
    }),
  ) as Record<ControllerKey, LocalImage>
}

/**
 * A new image of one controller, as a release of only that controller would ship: the same bundle with another version
 * label (so another digest), pushed beside the others under the tag `v<version>`. For `helm upgrade --set
 * controllers.<key>.image.digest=…`.
 */
export const pushControllerRelease = async (info: Pick<HarnessInfo, "registry">, key: ControllerKey, version: string, outDir: string): Promise<LocalImage> => {
  const started = Date.now()
  const c = CONTROLLERS[key]
  const built = await buildImage(controllerImage(c, join(root, "dist", "apps", c), { version }, [hostArch()]), { outDir })
  const client = new OciClient()
  try {
    await pushImage(client, built, `${imagePrefix(info)}/aicr-operator-${c}`, `v${version}`)
  } finally {
    await client.close()
  }
  return { repository: `${imagePrefix(info)}/aicr-operator-${c}`, digest: built.digest, seconds: (Date.now() - started) / 1000 }
}

/**
 * The operator's release image, every controller in one image (its entrypoint starts the one `AICR_CONTROLLER`
 * names), built for this machine's architecture and pushed to `<registry>/nvidia/aicr-operator`: what a released
 * chart's `operator.image` pins by digest.
 */
export const buildLocalOperatorImage = async (info: Pick<HarnessInfo, "registry">, opts: { outDir?: string } = {}): Promise<LocalImage> => {
  const images = projectImages({ platforms: [hostArch()], controllers: Object.values(CONTROLLERS), aicr: false }).filter((p) => p.path === "aicr-operator")
  const [b] = await buildProjectImages(images, { push: imagePrefix(info), useCache: true, ...(opts.outDir ? { outDir: opts.outDir } : {}) })
  if (!b?.ref) throw new Error("the operator image was not built and pushed")
  return { repository: `${imagePrefix(info)}/aicr-operator`, digest: b.image.digest, seconds: b.seconds }
}

/**
 * The digests of the AICR CLI images this machine builds, by version (the same inputs give the same digest; the layer
 * cache makes it quick): what a release lists in the chart's `aicr.digests`. The process kubelet runs AICR's images by
 * their tag, so the digests name the local builds without having to be pulled by them.
 */
export const localAicrDigests = async (opts: { outDir?: string } = {}): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const { version, dir } of builtAicrVersions()) {
    const image = await buildImage(
      { ...aicrImage(dir, version, [hostArch()]), name: `aicr-${version}` },
      { outDir: opts.outDir ?? join(root, "dist", "images"), useCache: true },
    )
    out[version] = image.digest
  }
  return out
}

/**
 * The values `up` installs the chart with: the guide's shape (registry, namespaces.components, approvers,
 * validation.enabled) for the local control plane, plus what differs here: `static` registry credentials (the local
 * registry needs no login), plain HTTP to it, the short stabilization window, the local chart upstream in place of
 * the public chart repositories, each controller's image by digest, and the development allowance for the local 0.x
 * AICR builds (`aicr.allowUnsupportedVersion`).
 */
export const localValues = (
  info: Pick<HarnessInfo, "registry">,
  opts: {
    images: Record<ControllerKey, Pick<LocalImage, "repository" | "digest">>
    upstreamRewrites: ReadonlyArray<string>
    aicrVersion?: string
    stepTimeout?: string
  },
) => ({
  registry: { repository: registryPrefix(info), plainHttp: [info.registry], auth: { provider: "static" } },
  // The local AICR builds are 0.x, outside the supported range: allowed explicitly, for development (ADR aicr-version-gate).
  aicr: { version: opts.aicrVersion ?? readVersions().aicr, allowUnsupportedVersion: true },
  namespaces: {
    components: COMPONENT_NAMESPACES.map((name) => ({ name, podSecurity: COMPONENT_POD_SECURITY, ...(name === "kube-system" ? { create: false } : {}) })),
  },
  approvers: { groups: ["aicr-approvers"] },
  validation: { enabled: true },
  planner: { stabilizationWindow: LOCAL_STABILIZATION_WINDOW },
  // The chart's default (15m) unless asked otherwise (`AICR_STEP_TIMEOUT` to up, as the real charts' install does).
  ...(opts.stepTimeout !== undefined ? { stepExecutor: { stepTimeout: opts.stepTimeout } } : {}),
  registryMirror: { upstreamRewrites: [...opts.upstreamRewrites] },
  controllers: Object.fromEntries(Object.entries(opts.images).map(([key, i]) => [key, { image: { repository: i.repository, digest: i.digest } }])),
})

export type LocalValues = ReturnType<typeof localValues>

/** helm with its own configuration and cache under `<dir>/helm` (never the user's logins or repositories). */
export const localHelm = (info: Pick<HarnessInfo, "kubeconfig" | "bin">, dir: string) => {
  const home = join(dir, "helm")
  const env = {
    ...process.env,
    KUBECONFIG: info.kubeconfig,
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_DATA_HOME: join(home, "data"),
    HELM_REGISTRY_CONFIG: join(home, "config", "registry.json"),
  }
  return (args: ReadonlyArray<string>, opts: { echo?: boolean } = {}): string => {
    if (opts.echo ?? true) process.stderr.write(`$ helm ${args.join(" ")}\n`)
    const res = spawnSync(info.bin["helm"] ?? "helm", args, { env, encoding: "utf8", maxBuffer: 64 << 20 })
    if (res.status !== 0) throw new Error(`helm ${args.join(" ")} failed (${res.status ?? res.signal}):\n${res.stderr}${res.stdout}`)
    return res.stdout
  }
}

/** kubectl against the plane, echoed as the user would type it; throws on a non-zero exit. */
export const localKubectl =
  (info: Pick<HarnessInfo, "kubeconfig" | "bin">) =>
  (args: ReadonlyArray<string>, opts: { echo?: boolean; inherit?: boolean } = {}): string => {
    if (opts.echo ?? true) process.stderr.write(`$ kubectl ${args.join(" ")}\n`)
    const res = spawnSync(info.bin["kubectl"] ?? "kubectl", args, {
      env: { ...process.env, KUBECONFIG: info.kubeconfig },
      encoding: "utf8",
      stdio: opts.inherit ? ["ignore", "inherit", "inherit"] : "pipe",
    })
    if (res.status !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${res.status ?? res.signal}):\n${res.stderr ?? ""}${res.stdout ?? ""}`)
    return res.stdout ?? ""
  }

/** The chart's version (Chart.yaml), the tag it is pushed under. */
export const chartVersion = (): string => (parse(readFileSync(join(CHART_DIR, "Chart.yaml"), "utf8")) as { version: string }).version

/** What a release pins in the chart's defaults: its operator image, and the AICR images it was qualified against. */
export interface ChartPins {
  /** `<repository>@sha256:…`, every controller in one image. */
  readonly operatorImage: string
  /** AICR CLI image digests by version (`aicr.digests`). */
  readonly aicrDigests?: Readonly<Record<string, string>>
}

/**
 * The release step: a copy of the chart whose defaults pin the release's operator image by digest (`operator.image`)
 * and the AICR images by version (`aicr.digests`), as a released chart does, so `helm show values … | yq -r
 * .operator.image` names it (the install guide's step 3).
 * The source chart keeps `operator.image: ""`: a digest exists only once the image is built. Comments are kept.
 */
export const stampChart = (dir: string, pins: ChartPins): string => {
  const out = join(dir, "chart", "src", "aicr-operator")
  rmSync(out, { recursive: true, force: true })
  cpSync(CHART_DIR, out, { recursive: true })
  const file = join(out, "values.yaml")
  const doc = parseDocument(readFileSync(file, "utf8"))
  doc.setIn(["operator", "image"], pins.operatorImage)
  if (pins.aicrDigests && Object.keys(pins.aicrDigests).length > 0) doc.setIn(["aicr", "digests"], doc.createNode(pins.aicrDigests))
  writeFileSync(file, doc.toString({ lineWidth: 0 }))
  return out
}

/**
 * Packages the chart (stamped with the operator image when given, as a release is) and pushes it to the plane's
 * registry; returns the chart reference and version.
 */
export const pushLocalChart = (info: Pick<HarnessInfo, "registry" | "kubeconfig" | "bin">, dir: string, pins?: ChartPins): { ref: string; version: string } => {
  const helm = localHelm(info, dir)
  const out = join(dir, "chart")
  mkdirSync(out, { recursive: true })
  const version = chartVersion()
  helm(["package", pins ? stampChart(dir, pins) : CHART_DIR, "--destination", out])
  helm(["push", join(out, `aicr-operator-${version}.tgz`), chartRepository(info), "--plain-http"])
  return { ref: `${chartRepository(info)}/aicr-operator`, version }
}

/** The guide's step 6: the release namespace with its Pod Security label (idempotent for a reused plane). */
export const createReleaseNamespace = (info: Pick<HarnessInfo, "kubeconfig" | "bin">): void => {
  const kubectl = localKubectl(info)
  const exists =
    spawnSync(info.bin["kubectl"] ?? "kubectl", ["get", "namespace", OPERATOR_NAMESPACE], { env: { ...process.env, KUBECONFIG: info.kubeconfig } }).status === 0
  if (!exists) kubectl(["create", "namespace", OPERATOR_NAMESPACE])
  kubectl(["label", "namespace", OPERATOR_NAMESPACE, "pod-security.kubernetes.io/enforce=restricted", "--overwrite"])
}

/**
 * `registry.auth.provider: static`: the admin's docker-config Secret the pushing controllers mount and the
 * ecr-credential-refresher checks. The local registry needs no login; any login for its host does.
 */
export const installStaticCredentials = (info: HarnessInfo) => {
  const auth = Buffer.from("local:local").toString("base64")
  return applyManifests(info, [
    {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/dockerconfigjson",
      metadata: { name: DOCKER_CONFIG_SECRET, namespace: OPERATOR_NAMESPACE },
      data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { [info.registry]: { auth } } })).toString("base64") },
    },
  ])
}

/** Writes values.yaml into dir and returns its path and text. */
export const writeValues = (dir: string, values: unknown, name = "values.yaml"): { file: string; text: string } => {
  const text = stringify(values)
  const file = join(dir, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, text)
  return { file, text }
}

/** `helm upgrade --install` of the pushed chart with the values file; then every Deployment's rollout status. */
export const installLocalChart = (
  info: Pick<HarnessInfo, "registry" | "kubeconfig" | "bin">,
  dir: string,
  chart: { ref: string; version: string },
  valuesFile: string,
  opts: { timeout?: string } = {},
): void => {
  localHelm(
    info,
    dir,
  )(["upgrade", "--install", RELEASE, chart.ref, "--version", chart.version, "--plain-http", "--namespace", OPERATOR_NAMESPACE, "-f", valuesFile])
  waitForRollouts(info, opts.timeout)
}

/** `kubectl -n aicr-system rollout status deployment/<each>`, the guide's check, printing what kubectl says. */
export const waitForRollouts = (info: Pick<HarnessInfo, "kubeconfig" | "bin">, timeout = "300s"): void => {
  const kubectl = localKubectl(info)
  for (const d of DEPLOYMENTS) process.stderr.write(kubectl(["-n", OPERATOR_NAMESPACE, "rollout", "status", `deployment/${d}`, `--timeout=${timeout}`]))
}
