/**
 * Stand-in Helm charts: each fixture component becomes a tiny `apiVersion: v2` chart whose templates render its
 * workloads (pause containers with the GPU toleration, so kwok marks them Ready on any fake node) and, where the
 * recipe's manifests need one, a trivial CRD. Packaged deterministically, like `helm package` lays a chart out.
 */
import { type TarEntry, writeTgz } from "@aicr/oras"
import { createCipheriv, createHash } from "node:crypto"
import { stringify } from "yaml"
import { type FixtureComponent, type FixtureCrd, type FixtureServiceAccount, type FixtureWorkload, GPU_TOLERATION } from "./fixtures"

/** The mtime of every file in a fixture chart (fixed, so fixture charts have stable digests from run to run). */
export const FIXED_MTIME = new Date("2026-01-01T00:00:00Z")

/** A packaged chart and what identifies it. */
export interface PackagedChart {
  readonly name: string
  readonly version: string
  /** `<name>-<version>.tgz`, as `helm package` names it. */
  readonly file: string
  readonly tgz: Buffer
  /** `sha256:<hex>` of the archive. */
  readonly digest: string
}

export const PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`

/**
 * The program a held workload runs (`hold.image`, an image with Node.js at /nodejs/bin/node): an HTTP server on the
 * pod's IP, port `HOLD_PORT`, that answers 503 until someone requests `/release`, and 200 from then on. Its readiness
 * probe asks it, so the workload (and the Application that installs it) becomes ready only when a test lets it.
 */
export const HOLD_PORT = 8080
export const HOLD_SCRIPT = [
  'const http = require("node:http")',
  "let released = false",
  "http",
  "  .createServer((req, res) => {",
  '    if (req.url === "/release") released = true',
  "    res.statusCode = released ? 200 : 503",
  '    res.end(released ? "released\\n" : "held\\n")',
  "  })",
  `  .listen(${HOLD_PORT}, process.env.POD_IP)`,
].join("\n")

/**
 * The chart's default values: scheduling knobs the bundle's values may override, and `hold.image`: when set, each
 * workload runs the hold program (HOLD_SCRIPT) from that image instead of the pause container, ready once released.
 */
export const defaultValues = () => ({
  image: PAUSE_IMAGE,
  replicas: 1,
  nodeSelector: {},
  tolerations: [GPU_TOLERATION],
  hold: { image: "" },
})

const extraLabels = (w: FixtureWorkload, indent: string): string[] => Object.entries(w.labels ?? {}).map(([k, v]) => `${indent}${k}: ${JSON.stringify(v)}`)

const workloadTemplate = (w: FixtureWorkload): string =>
  [
    "---",
    "apiVersion: apps/v1",
    `kind: ${w.kind}`,
    "metadata:",
    `  name: ${w.name}`,
    "  namespace: {{ .Release.Namespace }}",
    "  labels:",
    `    app.kubernetes.io/name: ${w.name}`,
    "    app.kubernetes.io/instance: {{ .Release.Name }}",
    "    app.kubernetes.io/managed-by: {{ .Release.Service }}",
    '    helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}',
    ...extraLabels(w, "    "),
    "spec:",
    ...(w.kind === "Deployment" ? ["  replicas: {{ .Values.replicas | default 1 }}"] : []),
    "  selector:",
    "    matchLabels:",
    `      app.kubernetes.io/name: ${w.name}`,
    "  template:",
    "    metadata:",
    "      labels:",
    `        app.kubernetes.io/name: ${w.name}`,
    ...extraLabels(w, "        "),
    "    spec:",
    "      {{- with .Values.nodeSelector }}",
    "      nodeSelector:",
    "        {{- toYaml . | nindent 8 }}",
    "      {{- end }}",
    "      {{- with .Values.tolerations }}",
    "      tolerations:",
    "        {{- toYaml . | nindent 8 }}",
    "      {{- end }}",
    "      containers:",
    "        - name: main",
    "          {{- if (.Values.hold).image }}",
    "          image: {{ .Values.hold.image }}",
    `          command: ["/nodejs/bin/node", "-e", ${JSON.stringify(HOLD_SCRIPT)}]`,
    "          env:",
    "            - name: POD_IP",
    "              valueFrom:",
    "                fieldRef:",
    "                  fieldPath: status.podIP",
    "          readinessProbe:",
    "            httpGet:",
    "              path: /ready",
    `              port: ${HOLD_PORT}`,
    "            periodSeconds: 1",
    "          {{- else }}",
    '          image: {{ .Values.image | default "' + PAUSE_IMAGE + '" }}',
    "          {{- end }}",
    "",
  ].join("\n")

/** A ServiceAccount in the release namespace and its ClusterRole and ClusterRoleBinding, named as the real chart names them. */
const serviceAccountTemplate = (sa: FixtureServiceAccount): string =>
  [
    "---",
    "apiVersion: v1",
    "kind: ServiceAccount",
    "metadata:",
    `  name: ${sa.name}`,
    "  namespace: {{ .Release.Namespace }}",
    "  labels:",
    `    app: ${sa.name}`,
    "---",
    "apiVersion: rbac.authorization.k8s.io/v1",
    "kind: ClusterRole",
    "metadata:",
    `  name: ${sa.name}`,
    stringify({ rules: sa.rules }).trimEnd(),
    "---",
    "apiVersion: rbac.authorization.k8s.io/v1",
    "kind: ClusterRoleBinding",
    "metadata:",
    `  name: ${sa.name}`,
    "subjects:",
    "  - kind: ServiceAccount",
    `    name: ${sa.name}`,
    "    namespace: {{ .Release.Namespace }}",
    "roleRef:",
    "  kind: ClusterRole",
    `  name: ${sa.name}`,
    "  apiGroup: rbac.authorization.k8s.io",
    "",
  ].join("\n")

const crdYaml = (c: FixtureCrd): string =>
  stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${c.plural}.${c.group}` },
    spec: {
      group: c.group,
      scope: c.scope,
      names: { kind: c.kind, plural: c.plural, singular: c.kind.toLowerCase(), listKind: `${c.kind}List` },
      versions: [
        { name: "v1alpha1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
      ],
    },
  })

/** Deterministic incompressible bytes (AES-128-CTR keyed by the seed over zeros), for the large-chart filler. */
export const fillerBytes = (size: number, seed: string): Buffer => {
  const key = createHash("sha256").update(seed).digest()
  const cipher = createCipheriv("aes-128-ctr", key.subarray(0, 16), key.subarray(16, 32))
  return Buffer.concat([cipher.update(Buffer.alloc(size)), cipher.final()])
}

const MAX_FILLER_FILE = 4 * 1024 * 1024 // under Helm's default 5 MiB per-file limit

/** The files of a component's stand-in chart, in the order `helm package` writes them (Chart.yaml first). */
export const chartFiles = (
  c: FixtureComponent & { readonly chart: string; readonly version: string },
  options: { readonly fillerBytes?: number } = {},
): TarEntry[] => {
  const root = c.chart
  const file = (path: string, text: string | Buffer): TarEntry => ({
    path: `${root}/${path}`,
    data: typeof text === "string" ? Buffer.from(text, "utf8") : text,
  })
  const chartYaml = stringify({
    apiVersion: "v2",
    name: c.chart,
    description: `Stand-in for the ${c.chart} chart of ${c.source} (aicr-operator-ts local upstream)`,
    type: "application",
    version: c.version,
    appVersion: c.version.replace(/^v/u, ""),
    annotations: { "aicr-operator-ts/fixture": "true" },
  })
  const files: TarEntry[] = [
    file("Chart.yaml", chartYaml),
    file("values.yaml", stringify(defaultValues())),
    ...(c.crds ?? []).map((crd) => file(`crds/${crd.plural}.${crd.group}.yaml`, crdYaml(crd))),
  ]
  if (c.workloads.length > 0) files.push(file("templates/workloads.yaml", c.workloads.map(workloadTemplate).join("")))
  if ((c.serviceAccounts ?? []).length > 0) files.push(file("templates/serviceaccounts.yaml", c.serviceAccounts!.map(serviceAccountTemplate).join("")))
  const filler = options.fillerBytes ?? c.fillerBytes ?? 0
  for (let i = 0, off = 0; off < filler; i++, off += MAX_FILLER_FILE) {
    files.push(file(`files/filler-${i}.bin`, fillerBytes(Math.min(MAX_FILLER_FILE, filler - off), `${c.chart}-${c.version}-${i}`)))
  }
  return files
}

/** Packages a component's stand-in chart. */
export const packageChart = (
  c: FixtureComponent & { readonly chart: string; readonly version: string },
  options: { readonly fillerBytes?: number } = {},
): PackagedChart => {
  const tgz = writeTgz(chartFiles(c, options), { mtime: FIXED_MTIME })
  return { name: c.chart, version: c.version, file: `${c.chart}-${c.version}.tgz`, tgz, digest: sha256(tgz) }
}
