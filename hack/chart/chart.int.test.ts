/**
 * The umbrella chart, checked the way a platform engineer would, with the real tools on the local control plane:
 * `helm lint --strict`, `helm template` against golden files, the schema and the cross-field rules refusing bad
 * values with the value's name, every rendered object through a server-side dry run (`kubectl apply --server-side
 * --dry-run=server`) and `kubeconform -strict` against schemas taken from this API server, each controller's RBAC in
 * both directions (SubjectAccessReviews as its ServiceAccount, and `kubectl auth can-i`), an install into a namespace
 * that enforces Pod Security `restricted`, and an uninstall that keeps what must outlive the operator.
 *
 * Golden files: hack/chart/golden/<values>.yaml; `UPDATE_GOLDEN=1` rewrites them.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { CONTRACTS } from "@aicr/contracts"
import {
  applyManifests,
  eventually,
  type IsolatedHelm,
  isolatedHelm,
  kubeRequest,
  objectPath,
  parseManifests,
  removeApprovalPolicies,
  toolPath,
} from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { stringify } from "yaml"
import { CHART_DIR } from "../generate-chart"
import { memoryEnvOf } from "../local-operator"
import { extractSchemasOf, schemaLocation } from "./openapi-schemas"
import { type Grant, grantsOf, type NamespaceRef, serviceAccountOf } from "./rbac"

const run = promisify(execFile)
const info = inject("harness")
const CI = join(CHART_DIR, "ci")
const GOLDEN = join(import.meta.dirname, "golden")
const VALUE_FILES = ["overview-values", "eks-values", "signing-values", "static-values"] as const
const RELEASE = "aicr-operator"
const NAMESPACE = "aicr-system"

type Obj = {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  [k: string]: unknown
}

let h: IsolatedHelm
let work: string
let schemas: string

const kubectl = (...args: string[]) => run(toolPath("kubectl"), ["--kubeconfig", info.kubeconfig, ...args], { maxBuffer: 32 * 1024 * 1024 })

/** helm's outcome: stdout, or the failure with stderr (helm's message). */
const helmResult = async (...args: string[]): Promise<{ ok: true; out: string } | { ok: false; err: string }> => {
  try {
    return { ok: true, out: await h.helm(...args) }
  } catch (e) {
    return { ok: false, err: String((e as { stderr?: string }).stderr ?? e) }
  }
}

const template = (values: string, ...extra: string[]) => h.helm("template", RELEASE, CHART_DIR, "--namespace", NAMESPACE, "-f", values, ...extra)

interface PodSpec {
  readonly securityContext: Record<string, unknown>
  readonly serviceAccountName?: string
  readonly containers: ReadonlyArray<{
    readonly name: string
    readonly image: string
    readonly args: string[]
    readonly securityContext: Record<string, unknown>
  }>
}
const deploymentOf = (o: Obj) => o as unknown as { metadata: Obj["metadata"]; spec: { replicas: number; template: { spec: PodSpec } } }

/** helm template's output without the documents of templates/generated/. */
const withoutGenerated = (out: string): string =>
  `\n${out}`
    .split("\n---\n")
    .filter((d) => d !== "" && !d.startsWith("# Source: aicr-operator/templates/generated/"))
    .map((d) => `---\n${d}`)
    .join("\n")

const objectsOf = (yaml: string): Obj[] => (parseManifests(yaml) as Obj[]).filter((o) => o !== null && o.kind !== undefined)

/** The argoproj and monitoring.coreos.com CRDs the chart's AppProject (and the step-executor's Applications), ServiceMonitor and PrometheusRule need: Argo CD's own, and the Prometheus Operator's from the real kube-prometheus-stack chart. */
const installForeignCrds = async () => {
  for (const crd of ["application-crd.yaml", "appproject-crd.yaml"]) await applyManifests(info, join(dirname(toolPath("argocd")), "crds", crd))
  // The third-party directory as hack/build-tools.sh finds it: $AICR_THIRD_PARTY_DIR, or ../shared beside the checkout.
  const root = join(CHART_DIR, "..", "..")
  const dirs = [process.env.AICR_THIRD_PARTY_DIR, join(root, "..", "shared", "third-party"), join(root, "..", "..", "shared", "third-party")]
  const archive = dirs.flatMap((d) => (d ? [join(d, "charts", "kube-prometheus-stack-82.8.0.tgz")] : [])).find((f) => existsSync(f))
  if (archive === undefined) throw new Error(`kube-prometheus-stack-82.8.0.tgz not found in ${dirs.filter(Boolean).join(", ")}: set AICR_THIRD_PARTY_DIR`)
  for (const crd of ["crd-servicemonitors.yaml", "crd-prometheusrules.yaml"]) {
    const { stdout } = await run("tar", ["-xzOf", archive, `kube-prometheus-stack/charts/crds/crds/${crd}`], { maxBuffer: 32 * 1024 * 1024 })
    await applyManifests(info, parseManifests(stdout))
  }
}

beforeAll(async () => {
  h = await isolatedHelm("aicr-chart-")
  work = mkdtempSync(join(tmpdir(), "aicr-chart-test-"))
  await installForeignCrds()
  schemas = join(work, "schemas")
  await extractSchemasOf(info, schemas, [
    { group: "argoproj.io", version: "v1alpha1", kind: "AppProject" },
    { group: "monitoring.coreos.com", version: "v1", kind: "ServiceMonitor" },
    { group: "monitoring.coreos.com", version: "v1", kind: "PrometheusRule" },
    { group: "operator.aicr.run", version: "v1alpha1", kind: "ClusterRuntime" },
  ])
})

afterAll(async () => {
  await h?.cleanup()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("helm lint and template", () => {
  it.each(VALUE_FILES)("helm lint --strict passes with ci/%s.yaml", async (name) => {
    const out = await h.helm("lint", "--strict", CHART_DIR, "--namespace", NAMESPACE, "-f", join(CI, `${name}.yaml`))
    expect(out).toContain("1 chart(s) linted, 0 chart(s) failed")
  })

  it.each(VALUE_FILES)("helm template with ci/%s.yaml renders the golden manifest", async (name) => {
    // Without templates/generated/: generate.test.ts holds those to the code they come from, so a change of a CRD,
    // policy or contract does not rewrite every golden file.
    const out = withoutGenerated(await template(join(CI, `${name}.yaml`)))
    const file = join(GOLDEN, `${name}.yaml`)
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(file, out)
    expect(out).toBe(readFileSync(file, "utf8"))
  })

  it("renders every pod Pod-Security-restricted with a read-only root filesystem, and each controller's image pinned as configured", async () => {
    const objs = objectsOf(await template(join(CI, "signing-values.yaml")))
    const deployments = objs.filter((o) => o.kind === "Deployment").map(deploymentOf)
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      "aicr-approval-guard",
      "aicr-operator",
      "aicr-planner",
      "aicr-registry-mirror",
      "aicr-resolver",
      "aicr-step-executor",
      "aicr-validation-gate",
    ])
    for (const d of deployments) {
      const pod = d.spec.template.spec
      expect(pod.securityContext, d.metadata.name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } })
      for (const c of pod.containers) {
        expect(c.securityContext, d.metadata.name).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        })
      }
    }
    const resolver = deployments.find((d) => d.metadata.name === "aicr-resolver")!
    expect(resolver.spec.replicas).toBe(2)
    expect(resolver.spec.template.spec.containers[0]!.image).toBe(
      "ghcr.io/nvidia/aicr-operator-resolver@sha256:1111111111111111111111111111111111111111111111111111111111111111",
    )
    expect(resolver.spec.template.spec.containers[0]!.args).toContain("--leader-elect=true")
    const planner = deployments.find((d) => d.metadata.name === "aicr-planner")!
    expect(planner.spec.template.spec.containers[0]!.args).toContain("--leader-elect=false")
    // The validation-gate pushes evidence under the runtime registry and signs it with the KMS key itself.
    const gate = deployments.find((d) => d.metadata.name === "aicr-validation-gate")!
    expect(gate.spec.template.spec.containers[0]!.args).toEqual(
      expect.arrayContaining([
        "--registry=oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr/gpu-cluster",
        "--validation-namespace=aicr-validation",
        "--launcher-service-account=aicr-validation",
        "--signing-key=awskms:///alias/aicr-evidence",
        "--docker-config=/var/run/aicr/registry/config.json",
      ]),
    )
    const gateSa = objs.find((o) => o.kind === "ServiceAccount" && o.metadata.name === "aicr-validation-gate")!
    expect(gateSa.metadata.annotations).toEqual({ "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/aicr-operator-gpu-cluster" })
  })

  it("renders the validation-gate without validation.enabled, without a signing key or AWS identity", async () => {
    const objs = objectsOf(await template(join(CI, "signing-values.yaml"), "--set", "validation.enabled=false", "--set", "validation.signingKey="))
    const gate = objs
      .filter((o) => o.kind === "Deployment")
      .map(deploymentOf)
      .find((d) => d.metadata.name === "aicr-validation-gate")
    expect(gate).toBeDefined()
    expect(gate!.spec.template.spec.containers[0]!.args.filter((a) => a.startsWith("--signing-key"))).toEqual([])
    const gateSa = objs.find((o) => o.kind === "ServiceAccount" && o.metadata.name === "aicr-validation-gate")!
    expect(gateSa.metadata.annotations).toBeUndefined()
    // Nothing in the validation namespace, which does not exist without validation.
    expect(objs.filter((o) => o.metadata.namespace === "aicr-validation").map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([])
  })

  it("binds every controller's ports on its pod IP, and passes registryMirror.upstreamRewrites to the registry-mirror", async () => {
    const objs = objectsOf(
      await template(
        join(CI, "static-values.yaml"),
        "--set",
        "registryMirror.upstreamRewrites[0]=https://helm.ngc.nvidia.com/nvidia=http://charts.internal/nvidia",
      ),
    )
    const deployments = objs.filter((o) => o.kind === "Deployment").map(deploymentOf)
    for (const d of deployments) {
      const c = d.spec.template.spec.containers[0]! as unknown as {
        args: string[]
        env: Array<{ name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>
      }
      expect(c.args, d.metadata.name).toEqual(expect.arrayContaining(["--metrics-bind-address=$(POD_IP):8080", "--health-probe-bind-address=$(POD_IP):8081"]))
      expect(c.env.find((e) => e.name === "POD_IP")?.valueFrom?.fieldRef?.fieldPath, d.metadata.name).toBe("status.podIP")
    }
    const rewrites = deployments
      .map((d) => [d.metadata.name, d.spec.template.spec.containers[0]!.args.filter((a) => a.startsWith("--upstream-rewrite"))] as const)
      .filter(([, a]) => a.length > 0)
    expect(rewrites).toEqual([["aicr-registry-mirror", ["--upstream-rewrite=https://helm.ngc.nvidia.com/nvidia=http://charts.internal/nvidia"]]])
  })

  it("gives the resolver, the registry-mirror, the step-executor, the validation-gate and the ecr-credential-refresher alone their memory settings (NODE_OPTIONS, MALLOC_ARENA_MAX); emptied values drop them", async () => {
    const memoryEnv = async (...extra: string[]) =>
      new Map(
        objectsOf(await template(join(CI, "static-values.yaml"), ...extra))
          .filter((o) => o.kind === "Deployment")
          .map(deploymentOf)
          .map((d) => {
            const env = (d.spec.template.spec.containers[0]! as unknown as { env: Array<{ name: string; value?: string }> }).env
            return [d.metadata.name, env.filter((e) => e.name === "NODE_OPTIONS" || e.name === "MALLOC_ARENA_MAX")] as const
          }),
      )
    const shipped = await memoryEnv()
    // The refresher's Deployment is aicr-operator.
    const tuned = new Map(
      ["resolver", "registry-mirror", "step-executor", "validation-gate", "ecr-credential-refresher"].map((app) => [
        app === "ecr-credential-refresher" ? "aicr-operator" : `aicr-${app}`,
        app,
      ]),
    )
    for (const [deployment, app] of tuned) {
      expect(shipped.get(deployment), app).toEqual([
        { name: "NODE_OPTIONS", value: "--max-semi-space-size=1" },
        { name: "MALLOC_ARENA_MAX", value: "2" },
      ])
      // The same as `aicr-dev`'s local processes run it with (hack/local-operator.ts).
      expect(Object.fromEntries(shipped.get(deployment)!.map((e) => [e.name, e.value]))).toEqual(memoryEnvOf(app))
    }
    expect(shipped.size).toBe(7)
    for (const [name, env] of shipped) if (!tuned.has(name)) expect(env, name).toEqual([])
    for (const app of ["approval-guard", "planner"]) expect(memoryEnvOf(app), app).toEqual({})
    const off = await memoryEnv(
      "--set",
      "stepExecutor.nodeOptions=",
      "--set",
      "stepExecutor.mallocArenaMax=0",
      "--set",
      "validationGate.nodeOptions=",
      "--set",
      "ecrCredentialRefresher.nodeOptions=",
      "--set",
      "ecrCredentialRefresher.mallocArenaMax=0",
    )
    expect(off.get("aicr-step-executor")).toEqual([])
    expect(off.get("aicr-operator")).toEqual([])
    expect(off.get("aicr-validation-gate")).toEqual([{ name: "MALLOC_ARENA_MAX", value: "2" }])
  })

  it("with operator.image runs every controller from that one image (the seed's ECR copy)", async () => {
    const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr-operator@sha256:2222222222222222222222222222222222222222222222222222222222222222"
    const objs = objectsOf(await template(join(CI, "overview-values.yaml"), "--set", `operator.image=${image}`))
    const images = objs.filter((o) => o.kind === "Deployment").map((d) => deploymentOf(d).spec.template.spec.containers[0]!.image)
    expect(images).toHaveLength(7)
    expect(new Set(images)).toEqual(new Set([image]))
  })

  it("a controller's own digest wins over operator.image: one controller upgraded on its own", async () => {
    const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/aicr-operator@sha256:2222222222222222222222222222222222222222222222222222222222222222"
    const own = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
    const objs = objectsOf(
      await template(join(CI, "overview-values.yaml"), "--set", `operator.image=${image}`, "--set", `controllers.stepExecutor.image.digest=${own}`),
    )
    const images = new Map(objs.filter((o) => o.kind === "Deployment").map((d) => [d.metadata.name, deploymentOf(d).spec.template.spec.containers[0]!.image]))
    expect(images.get("aicr-step-executor")).toBe(`ghcr.io/nvidia/aicr-operator-step-executor@${own}`)
    expect([...images.entries()].filter(([name]) => name !== "aicr-step-executor").map(([, i]) => i)).toEqual(Array(6).fill(image))
  })

  it("pins the AICR image by the digest aicr.digests lists for aicr.version; changing aicr.version alone picks that version's; aicr.image wins", async () => {
    const d1 = `sha256:${"4".repeat(64)}`
    const d0 = `sha256:${"5".repeat(64)}`
    const aicrImageOf = async (...extra: string[]) => {
      const objs = objectsOf(
        await template(join(CI, "overview-values.yaml"), "--set", `aicr.digests.v0\\.11\\.1=${d1}`, "--set", `aicr.digests.v0\\.10\\.16=${d0}`, ...extra),
      )
      const resolver = objs
        .filter((o) => o.kind === "Deployment")
        .map(deploymentOf)
        .find((d) => d.metadata.name === "aicr-resolver")!
      return resolver.spec.template.spec.containers[0]!.args.find((a) => a.startsWith("--aicr-image="))
    }
    expect(await aicrImageOf("--set", "aicr.version=v0.11.1")).toBe(`--aicr-image=ghcr.io/nvidia/aicr:v0.11.1@${d1}`)
    expect(await aicrImageOf("--set", "aicr.version=v0.10.16")).toBe(`--aicr-image=ghcr.io/nvidia/aicr:v0.10.16@${d0}`)
    expect(await aicrImageOf("--set", "aicr.version=v0.12.0")).toBe("--aicr-image=ghcr.io/nvidia/aicr:v0.12.0")
    expect(await aicrImageOf("--set", "aicr.image=registry.example.com/aicr@sha256:" + "6".repeat(64))).toBe(
      `--aicr-image=registry.example.com/aicr@sha256:${"6".repeat(64)}`,
    )
  })

  it("names the refresher's Deployment aicr-operator, the one the guide's step 6 waits for (its ServiceAccount is the AWS identity)", async () => {
    const objs = objectsOf(await template(join(CI, "eks-values.yaml")))
    const refresher = objs
      .filter((o) => o.kind === "Deployment")
      .map(deploymentOf)
      .find((d) => d.metadata.name === "aicr-operator")
    expect(refresher?.spec.template.spec.serviceAccountName).toBe("aicr-operator")
    expect(refresher?.spec.template.spec.containers[0]!.name).toBe("ecr-credential-refresher")
  })
})

describe("values the chart refuses", () => {
  /** `helm install --dry-run=client` of the seed's EKS values plus `extra` (a values file, as a user would add one). */
  const install = (extra?: Record<string, unknown>) => {
    const files = ["-f", join(CI, "eks-values.yaml")]
    if (extra) {
      const file = join(work, `extra-${Math.random().toString(36).slice(2)}.yaml`)
      writeFileSync(file, stringify(extra))
      files.push("-f", file)
    }
    return helmResult("install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE, ...files)
  }
  const components = (edit: (c: Array<Record<string, unknown>>) => void) => {
    const list = (parseManifests(readFileSync(join(CI, "eks-values.yaml"), "utf8"))[0] as { namespaces: { components: Array<Record<string, unknown>> } })
      .namespaces.components
    edit(list)
    return { namespaces: { components: list } }
  }

  it.each([
    { name: "a registry that is not oci://", extra: { registry: { repository: "https://ecr.example.com/aicr" } }, says: "at '/registry/repository'" },
    {
      name: "an unknown auth provider",
      extra: { registry: { auth: { provider: "gcp" } } },
      says: "at '/registry/auth/provider': value must be one of 'aws', 'static'",
    },
    { name: "an unknown Pod Security level", extra: components((c) => (c[1]!["podSecurity"] = "open")), says: "at '/namespaces/components/1/podSecurity'" },
    {
      name: "a component namespace without a name",
      extra: components((c) => delete c[2]!["name"]),
      says: "at '/namespaces/components/2': missing property 'name'",
    },
    {
      name: "a digest that is not sha256",
      extra: { controllers: { planner: { image: { digest: "sha256:abc" } } } },
      says: "at '/controllers/planner/image/digest'",
    },
    { name: "an AICR digest that is not sha256", extra: { aicr: { digests: { "v0.11.1": "sha256:abc" } } }, says: "at '/aicr/digests/v0.11.1'" },
    { name: "negative replicas", extra: { controllers: { resolver: { replicas: -1 } } }, says: "at '/controllers/resolver/replicas'" },
    { name: "an unknown log level", extra: { operator: { logLevel: "loud" } }, says: "at '/operator/logLevel'" },
    {
      name: "a value the chart does not have (there is no image pull Secret value)",
      extra: { operator: { imagePullSecrets: ["ecr"] } },
      says: "at '/operator': additional properties 'imagePullSecrets' not allowed",
    },
    { name: "a duration that is not one", extra: { planner: { stabilizationWindow: "soon" } }, says: "at '/planner/stabilizationWindow'" },
    {
      name: "an upstream rewrite that is not FROM=TO",
      extra: { registryMirror: { upstreamRewrites: ["https://charts.example.com"] } },
      says: "at '/registryMirror/upstreamRewrites/0'",
    },
  ])("refuses $name, naming the value", async ({ extra, says }) => {
    const res = await install(extra)
    expect(res.ok).toBe(false)
    if (!res.ok) expect(res.err).toContain(says)
  })

  it("refuses an install without registry.repository and namespaces.components", async () => {
    const res = await helmResult("install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE)
    expect(res.ok).toBe(false)
    if (!res.ok) {
      expect(res.err).toContain("at '/registry/repository'")
      expect(res.err).toContain("at '/namespaces/components': minItems: got 0, want 1")
    }
  })

  it.each([
    {
      name: "a signing key without validation",
      extra: { validation: { enabled: false, signingKey: "awskms:///alias/aicr-evidence" } },
      says: "validation.signingKey is set but validation.enabled is false",
    },
    {
      name: "a signing key with an AICR that cannot sign",
      extra: { aicr: { version: "v1.0.3" }, validation: { signingKey: "awskms:///alias/aicr-evidence" } },
      says: "validation.signingKey needs AICR v1.1.0 or later, but aicr.version is v1.0.3",
    },
    {
      name: "a signing key with the transparency log on (not supported: nothing is sent to Rekor)",
      extra: { aicr: { version: "v1.1.0" }, validation: { signingKey: "awskms:///alias/aicr-evidence", transparencyLog: true } },
      says: "validation.transparencyLog: true is not supported yet",
    },
    {
      name: "a prerelease AICR without allowPrerelease",
      extra: { aicr: { version: "v1.2.0-rc0" } },
      says: "aicr.version v1.2.0-rc0 is a prerelease: set aicr.allowPrerelease: true",
    },
    {
      name: "a component namespace listed twice",
      extra: components((c) => (c[1]!["name"] = "gpu-operator")),
      says: "namespaces.components lists gpu-operator twice",
    },
    {
      name: "the release namespace as a component namespace",
      extra: components((c) => (c[1]!["name"] = NAMESPACE)),
      says: `namespaces.components may not list ${NAMESPACE}`,
    },
  ])("helm install fails on $name with a clear message", async ({ extra, says }) => {
    const res = await install(extra)
    expect(res.ok).toBe(false)
    if (!res.ok) expect(res.err).toContain(says)
  })

  it("accepts the seed's values verbatim, and the EKS guide's signing values once the AICR can sign", async () => {
    for (const file of ["overview-values", "eks-values", "signing-values"]) {
      const res = await helmResult("install", RELEASE, CHART_DIR, "--dry-run=client", "--namespace", NAMESPACE, "-f", join(CI, `${file}.yaml`))
      expect(res.ok ? "ok" : res.err, file).toBe("ok")
    }
  })
})

describe("every rendered object against this API server", () => {
  it.each(VALUE_FILES)("kubeconform -strict accepts every object of ci/%s.yaml, with schemas from the API server's OpenAPI", async (name) => {
    const file = join(work, `${name}.rendered.yaml`)
    writeFileSync(file, await template(join(CI, `${name}.yaml`)))
    const { stdout } = await run(toolPath("kubeconform"), ["-strict", "-summary", "-output", "json", "-schema-location", schemaLocation(schemas), file], {
      maxBuffer: 8 * 1024 * 1024,
    })
    const summary = JSON.parse(stdout) as { summary: { valid: number; invalid: number; errors: number; skipped: number } }
    expect(summary.summary).toMatchObject({ invalid: 0, errors: 0, skipped: 0 })
    expect(summary.summary.valid).toBe(objectsOf(readFileSync(file, "utf8")).length)
  })

  it("kubeconform -strict refuses a field the API server does not know (the check is not vacuous)", async () => {
    const file = join(work, "bad.yaml")
    const objs = objectsOf(await template(join(CI, "static-values.yaml")))
    const deployment = objs.find((o) => o.kind === "Deployment")!
    writeFileSync(file, stringify({ ...deployment, spec: { ...(deployment["spec"] as object), replica: 2 } }))
    const res = await run(toolPath("kubeconform"), ["-strict", "-schema-location", schemaLocation(schemas), file]).then(
      () => "valid",
      (e: { stdout?: string }) => String(e.stdout),
    )
    expect(res).toContain("replica")
  })

  it.each(VALUE_FILES)("kubectl apply --server-side --dry-run=server accepts every object of ci/%s.yaml", async (name) => {
    const rendered = await template(join(CI, `${name}.yaml`))
    // Namespaced objects need their namespaces to exist; a dry run of the Namespace objects does not create them.
    const objs = objectsOf(rendered)
    const namespaces = new Set(objs.flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : [])))
    await applyManifests(
      info,
      [...namespaces].map((n) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: n } })),
    )
    const file = join(work, `${name}.dry-run.yaml`)
    writeFileSync(file, rendered)
    const { stdout } = await kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=helm", "--force-conflicts", "-f", file)
    const lines = stdout.trim().split("\n")
    expect(lines).toHaveLength(objs.length)
    for (const l of lines) expect(l).toMatch(/(serverside-applied|unchanged|configured|created) \(server dry run\)$/u)
  })
})

/** A grant's namespaces on this install. */
const namespacesOf = (ref: NamespaceRef, v: InstallValues): string[] =>
  ({ operator: [NAMESPACE], discovery: [v.discovery], validation: [v.validation], engine: ["argocd"], components: v.components, default: ["default"] })[ref]

interface InstallValues {
  readonly discovery: string
  readonly validation: string
  readonly components: string[]
}

const NAME_VALUES: Record<string, string> = {
  "{{ $.Values.engine.project }}": "aicr",
  "{{ $.Values.registry.auth.repoCredsSecret }}": "aicr-registry",
  "{{ $.Values.registry.auth.dockerConfigSecret }}": "aicr-registry-docker-config",
}

const sar = async (
  sa: string,
  attrs: { verb: string; group: string; resource: string; namespace?: string | undefined; name?: string | undefined },
): Promise<boolean> => {
  const [resource, subresource] = attrs.resource.split("/")
  const res = await kubeRequest(info, {
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${NAMESPACE}:${sa}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${NAMESPACE}`, "system:authenticated"],
        resourceAttributes: {
          verb: attrs.verb,
          group: attrs.group,
          resource,
          ...(subresource ? { subresource } : {}),
          ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
          ...(attrs.name ? { name: attrs.name } : {}),
        },
      },
    },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.status.allowed === true
}

describe("helm install into a namespace that enforces Pod Security restricted", () => {
  const values: InstallValues = { discovery: "aicr-discovery", validation: "aicr-validation", components: ["chart-gpu-operator", "chart-cert-manager"] }
  let installValues: string

  // The control plane is shared with the int files that run after this one: what the uninstall keeps on purpose, and
  // the restricted label on the release namespace (AICR's snapshot agent runs there in other tests), go afterwards.
  let enforceBefore: string | undefined
  afterAll(async () => {
    await kubectl(
      "label",
      "namespace",
      NAMESPACE,
      enforceBefore === undefined ? "pod-security.kubernetes.io/enforce-" : `pod-security.kubernetes.io/enforce=${enforceBefore}`,
      "--overwrite",
    )
    await kubectl("-n", "argocd", "delete", "appproject", "aicr", "--ignore-not-found")
    await kubectl("-n", "argocd", "delete", "secret", "aicr-registry", "--ignore-not-found")
    await kubectl("delete", "namespace", "--ignore-not-found", "--wait=false", ...values.components, values.discovery, values.validation)
  })

  beforeAll(async () => {
    // The release namespace, as the guide creates it.
    await kubectl("create", "namespace", NAMESPACE).catch(() => undefined)
    const ns = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${NAMESPACE}` })
    enforceBefore = ns.body?.metadata?.labels?.["pod-security.kubernetes.io/enforce"]
    await kubectl("label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=restricted", "--overwrite")
    await applyManifests(info, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } }])
    installValues = join(work, "install-values.yaml")
    writeFileSync(
      installValues,
      stringify({
        registry: { repository: `oci://${info.registry}/aicr/cluster`, plainHttp: [info.registry], auth: { provider: "aws" } },
        namespaces: {
          components: values.components.map((name) => ({ name, podSecurity: "privileged" })),
          discovery: values.discovery,
          validation: values.validation,
        },
        approvers: { groups: ["aicr-approvers"] },
        validation: { enabled: true },
        controllers: { planner: { replicas: 2 } },
      }),
    )
    // Objects earlier tests left on this shared control plane (policies, AICR Job roles, ServiceAccounts) are adopted
    // the documented way: Helm's ownership label and annotations.
    await removeApprovalPolicies(info)
    // An AppProject an earlier file applied server-side as the harness (installEngineProject) has fields another
    // manager owns, which Helm's server-side apply refuses to take over: the chart creates its own.
    await kubectl("-n", "argocd", "delete", "appproject", "aicr", "--ignore-not-found")
    for (const o of objectsOf(await h.helm("template", RELEASE, CHART_DIR, "--namespace", NAMESPACE, "-f", installValues))) {
      const path = await objectPath(info, o)
      if ((await kubeRequest(info, { method: "GET", path })).status !== 200) continue
      await kubeRequest(info, {
        method: "PATCH",
        path,
        body: {
          metadata: {
            labels: { "app.kubernetes.io/managed-by": "Helm" },
            annotations: { "meta.helm.sh/release-name": RELEASE, "meta.helm.sh/release-namespace": NAMESPACE },
          },
        },
      })
    }
  })

  // helm waits up to 3 minutes and each rollout status up to 2: on a loaded machine more than the tier's default.
  it("installs, and every controller's pods are admitted and roll out", { timeout: 600_000 }, async () => {
    await h.helm("install", RELEASE, CHART_DIR, "--namespace", NAMESPACE, "-f", installValues, "--wait", "--timeout", "3m", "--kubeconfig", info.kubeconfig)
    // deployment/aicr-operator is the ecr-credential-refresher (ServiceAccount aicr-operator), as the guide's step 6 names it.
    for (const d of [
      "aicr-resolver",
      "aicr-registry-mirror",
      "aicr-planner",
      "aicr-approval-guard",
      "aicr-step-executor",
      "aicr-operator",
      "aicr-validation-gate",
    ]) {
      const { stdout } = await kubectl("-n", NAMESPACE, "rollout", "status", `deployment/${d}`, "--timeout=120s")
      expect(stdout, d).toContain("successfully rolled out")
    }
    const pods = JSON.parse((await kubectl("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=aicr-operator", "-o", "json")).stdout) as {
      items: Array<{ status: { phase: string } }>
    }
    expect(pods.items).toHaveLength(8)
    expect(pods.items.every((p) => p.status.phase === "Running")).toBe(true)
  })

  it(
    "helm upgrade scales a controller to two replicas and back to one (helm's server-side apply leaves no defaulted rollingUpdate behind)",
    { timeout: 300_000 },
    async () => {
      const strategyOf = async () =>
        (
          JSON.parse((await kubectl("-n", NAMESPACE, "get", "deployment", "aicr-planner", "-o", "json")).stdout) as {
            spec: { replicas: number; strategy: Record<string, unknown> }
          }
        ).spec
      for (const [replicas, strategy] of [
        [2, { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }],
        [1, { type: "Recreate" }],
      ] as const) {
        await h.helm(
          "upgrade",
          RELEASE,
          CHART_DIR,
          "--namespace",
          NAMESPACE,
          "--reuse-values",
          "--set",
          `controllers.planner.replicas=${replicas}`,
          "--kubeconfig",
          info.kubeconfig,
        )
        expect(await strategyOf()).toMatchObject({ replicas, strategy })
        if (replicas === 1) expect((await strategyOf()).strategy).not.toHaveProperty("rollingUpdate")
      }
    },
  )

  it("the namespace really enforces restricted: a pod that is not is refused", async () => {
    const res = await kubeRequest(info, {
      method: "POST",
      path: `/api/v1/namespaces/${NAMESPACE}/pods?dryRun=All`,
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "not-restricted" },
        spec: { containers: [{ name: "c", image: "busybox", securityContext: { privileged: true } }] },
      },
    })
    expect(res.status).toBe(403)
    expect(String(res.body.message)).toContain('violates PodSecurity "restricted')
  })

  it.each(CONTRACTS.map((c) => [c.controller, c] as const))("%s's ServiceAccount may do everything its contract needs", async (_, c) => {
    const sa = serviceAccountOf(c.controller)
    const denied: string[] = []
    for (const g of grantsOf(c) as Grant[]) {
      const namespaces = g.namespaces ? g.namespaces.flatMap((n) => namespacesOf(n, values)) : [undefined]
      const name = g.resourceNames?.[0] === undefined ? undefined : (NAME_VALUES[g.resourceNames[0]] ?? g.resourceNames[0])
      for (const namespace of namespaces) {
        for (const verb of g.verbs) {
          if (!(await sar(sa, { verb, group: g.group, resource: g.resource, namespace, name })))
            denied.push(`${verb} ${g.group}/${g.resource} ${namespace ?? "(cluster)"} ${name ?? ""}`)
        }
      }
    }
    expect(denied).toEqual([])
  })

  it.each(CONTRACTS.map((c) => [c.controller, serviceAccountOf(c.controller)] as const))(
    "%s's ServiceAccount is refused what it must not do",
    async (controller, sa) => {
      const mustNot = [
        { verb: "list", group: "", resource: "secrets", namespace: NAMESPACE },
        { verb: "get", group: "", resource: "secrets", namespace: NAMESPACE, name: "some-other-secret" },
        { verb: "watch", group: "", resource: "secrets", namespace: "argocd" },
        { verb: "get", group: "", resource: "configmaps", namespace: "argocd", name: "argocd-cm" },
        { verb: "create", group: "", resource: "namespaces" },
        { verb: "create", group: "", resource: "pods", namespace: NAMESPACE },
        { verb: "create", group: "", resource: "pods/exec", namespace: NAMESPACE },
        { verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
        { verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles" },
        { verb: "impersonate", group: "", resource: "users" },
        { verb: "approve", group: "operator.aicr.run", resource: "runtimerollouts" },
        { verb: "delete", group: "operator.aicr.run", resource: "clusterruntimes" },
        // A removed release's CRDs stay (docs/adr/20261203-removed-release-crds.md): no controller may delete a CRD,
        // whatever custom resources of other owners it still serves.
        { verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions" },
        { verb: "deletecollection", group: "apiextensions.k8s.io", resource: "customresourcedefinitions" },
        ...(controller === "planner" ? [] : [{ verb: "update", group: "operator.aicr.run", resource: "clusterruntimes" }]),
        ...(controller === "planner" ? [] : [{ verb: "patch", group: "operator.aicr.run", resource: "runtimerollouts" }]),
      ]
      const allowed: string[] = []
      for (const a of mustNot) if (await sar(sa, a)) allowed.push(`${a.verb} ${a.group}/${a.resource} ${a.namespace ?? "(cluster)"}`)
      expect(allowed).toEqual([])
    },
  )

  it("kubectl auth can-i agrees, as a user would check it", async () => {
    const as = (sa: string) => `--as=system:serviceaccount:${NAMESPACE}:${sa}`
    // can-i answers on stdout, exit 1 for "no".
    const canI = (...args: string[]) =>
      kubectl("auth", "can-i", ...args).then(
        (r) => `${args.join(" ")}: ${r.stdout.trim()}`,
        (e: { stdout?: string }) => `${args.join(" ")}: ${String(e.stdout).trim()}`,
      )
    const cases: Array<[string[], "yes" | "no"]> = [
      [["patch", "clusterruntimes.operator.aicr.run", "--subresource=status", as("aicr-resolver")], "yes"],
      [["patch", "clusterruntimes.operator.aicr.run", as("aicr-resolver")], "no"],
      [["create", "applications.argoproj.io", "-n", "argocd", as("aicr-step-executor")], "yes"],
      [["patch", "secret/aicr-registry", "-n", "argocd", as("aicr-operator")], "yes"],
      [["list", "secrets", "-n", NAMESPACE, as("aicr-operator")], "no"],
      [["approve", "runtimerollouts.operator.aicr.run", as("aicr-approval-guard")], "no"],
    ]
    const got: string[] = []
    for (const [args] of cases) got.push(await canI(...args))
    expect(got).toEqual(cases.map(([args, want]) => `${args.join(" ")}: ${want}`))
  })

  it("binds approvers.groups to the approver role", async () => {
    const res = await kubeRequest(info, {
      method: "POST",
      path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: "someone",
          groups: ["aicr-approvers", "system:authenticated"],
          resourceAttributes: { verb: "approve", group: "operator.aicr.run", resource: "runtimerollouts" },
        },
      },
    })
    expect(res.body.status.allowed).toBe(true)
  })

  it("helm uninstall keeps the CRDs, the namespaces, the AppProject and the repo-creds Secret, and removes the controllers", async () => {
    await h.helm("uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--kubeconfig", info.kubeconfig)
    const exists = async (path: string) => (await kubeRequest(info, { method: "GET", path })).status === 200
    for (const crd of ["clusterruntimes.operator.aicr.run", "runtimerollouts.operator.aicr.run"]) {
      expect(await exists(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`), crd).toBe(true)
    }
    for (const ns of [...values.components, values.discovery, values.validation]) {
      const res = await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${ns}` })
      expect(res.status, ns).toBe(200)
      expect(res.body.metadata.deletionTimestamp, ns).toBeUndefined()
      expect(res.body.metadata.labels["pod-security.kubernetes.io/enforce"], ns).toBe("privileged")
    }
    expect(await exists("/apis/argoproj.io/v1alpha1/namespaces/argocd/appprojects/aicr")).toBe(true)
    expect(await exists("/api/v1/namespaces/argocd/secrets/aicr-registry")).toBe(true)
    await eventually(async () => !(await exists(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments/aicr-planner`)), { what: "the planner Deployment to go" })
    expect(await exists("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/aicr-rollout-decisions")).toBe(false)
  })
})
