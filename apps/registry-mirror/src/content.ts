/**
 * Reading a resolution from its content ConfigMap (docs/adr/20261202-registry-mirror-content.md). Pure.
 *
 * The resolver publishes, in the operator namespace, the ConfigMap `status.resolution.contentConfigMap`
 * (label `operator.aicr.run/role=content`) with:
 * - `recipe.json`: AICR's RecipeResult as `aicr recipe -t json` writes it. Read: `componentRefs[]` (`name`,
 *   `namespace`, `type`, `source`, `chart`, `version`) and `deploymentOrder`.
 * - `values.json`: the `aicr bundle --deployer helm` output directory as a file tree,
 *   `{"apiVersion":"operator.aicr.run/v1alpha1","kind":"Bundle","deployer":"helm","files":{path: text},"modes":{path: mode}}`:
 *   per release `<release>/values.yaml`, `<release>/manifests/*.yaml`, optionally a local chart `<release>/chart/**`;
 *   at the root README.md, deploy.sh, undeploy.sh, checksums.txt, recipe.yaml.
 *
 * A release is a `deploymentOrder` entry whose folder the bundle holds (the bundle drops disabled components).
 */

/** One release as the mirror needs it. */
export interface Release {
  readonly name: string
  readonly namespace: string
  readonly type: string
  /** The upstream chart reference from the recipe (`source` "" for a manifest-only component). */
  readonly source: string
  readonly chart?: string
  readonly version?: string
  /** `<release>/manifests/<file>` → text, sorted by file name. */
  readonly manifests: ReadonlyArray<readonly [file: string, text: string]>
  /** A local chart in the bundle (`<release>/chart/<path>` → text), sorted by path; empty when there is none. */
  readonly localChart: ReadonlyArray<readonly [path: string, text: string]>
}

/** The bundle as pushed to `<prefix>/bundles/cluster`: relative path → text, with file modes. */
export interface Bundle {
  readonly files: Readonly<Record<string, string>>
  readonly modes: Readonly<Record<string, number>>
}

export interface Resolution {
  readonly releases: ReadonlyArray<Release>
  readonly bundle: Bundle
}

export const RECIPE_KEY = "recipe.json"
export const BUNDLE_KEY = "values.json"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const parseJson = (key: string, text: string | undefined): { ok: true; value: unknown } | { ok: false; why: string } => {
  if (text === undefined) return { ok: false, why: `it has no ${key}` }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false, why: `its ${key} is not JSON` }
  }
}

const byKey = <T>(entries: Array<readonly [string, T]>) => entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Reads the resolution from a content ConfigMap's `data`; `{ ok: false, why }` names what is malformed. */
export const readResolution = (
  data: Readonly<Record<string, string>> | undefined,
): { readonly ok: true; readonly resolution: Resolution } | { readonly ok: false; readonly why: string } => {
  const recipe = parseJson(RECIPE_KEY, data?.[RECIPE_KEY])
  if (!recipe.ok) return recipe
  const bundle = parseJson(BUNDLE_KEY, data?.[BUNDLE_KEY])
  if (!bundle.ok) return bundle
  const r = recipe.value
  if (!isRecord(r) || !Array.isArray(r["componentRefs"]) || !Array.isArray(r["deploymentOrder"]))
    return { ok: false, why: `its ${RECIPE_KEY} is not a RecipeResult (componentRefs, deploymentOrder)` }
  const b = bundle.value
  if (!isRecord(b) || b["kind"] !== "Bundle" || !isRecord(b["files"]))
    return { ok: false, why: `its ${BUNDLE_KEY} is not a Bundle file tree (kind Bundle, files)` }
  if (b["deployer"] !== undefined && b["deployer"] !== "helm")
    return { ok: false, why: `its bundle was rendered for deployer ${String(b["deployer"])}, not helm` }
  const files: Record<string, string> = {}
  for (const [p, t] of Object.entries(b["files"])) {
    if (typeof t !== "string" || p.startsWith("/") || p.split("/").some((seg) => seg === ".." || seg === "." || seg === ""))
      return { ok: false, why: `its bundle file ${JSON.stringify(p)} is not a relative path to text` }
    files[p] = t
  }
  const modes: Record<string, number> = {}
  for (const [p, m] of Object.entries(isRecord(b["modes"]) ? b["modes"] : {})) {
    if (typeof m !== "number" || !Number.isInteger(m) || m < 0 || m > 0o777)
      return { ok: false, why: `its bundle mode of ${JSON.stringify(p)} is not a file mode` }
    modes[p] = m
  }
  const refs = new Map<string, Record<string, unknown>>()
  for (const c of r["componentRefs"] as unknown[]) {
    const name = isRecord(c) ? str(c["name"]) : undefined
    if (name === undefined || !isRecord(c)) return { ok: false, why: `its ${RECIPE_KEY} has a componentRef without a name` }
    refs.set(name, c)
  }
  const releases: Release[] = []
  for (const name of r["deploymentOrder"] as unknown[]) {
    if (typeof name !== "string") return { ok: false, why: `its ${RECIPE_KEY} deploymentOrder holds a non-string` }
    const c = refs.get(name)
    if (c === undefined) return { ok: false, why: `its ${RECIPE_KEY} deploymentOrder names ${name}, which has no componentRef` }
    const folder = `${name}/`
    const inBundle = Object.keys(files).filter((p) => p.startsWith(folder))
    if (inBundle.length === 0) continue // disabled: the bundle dropped it
    const namespace = str(c["namespace"])
    if (namespace === undefined || namespace === "") return { ok: false, why: `component ${name} has no namespace` }
    const chart = str(c["chart"])
    const version = str(c["version"])
    releases.push({
      name,
      namespace,
      type: str(c["type"]) ?? "Helm",
      source: str(c["source"]) ?? "",
      ...(chart !== undefined && chart !== "" ? { chart } : {}),
      ...(version !== undefined && version !== "" ? { version } : {}),
      manifests: byKey(inBundle.filter((p) => /^[^/]+\/manifests\/[^/]+$/u.test(p)).map((p) => [p.slice(`${folder}manifests/`.length), files[p]!] as const)),
      localChart: byKey(inBundle.filter((p) => p.startsWith(`${folder}chart/`)).map((p) => [p.slice(`${folder}chart/`.length), files[p]!] as const)),
    })
  }
  return { ok: true, resolution: { releases, bundle: { files, modes } } }
}
