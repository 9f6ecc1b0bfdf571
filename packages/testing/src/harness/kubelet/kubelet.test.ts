import { describe, expect, it } from "vitest"
import { defaultHostFor, h100Host, hostFiles, hostProfileOf, HOST_PROFILE_ANNOTATION, nvidiaSmiXml, osRelease, systemHost } from "./hosts"
import { aicrImages, claimedImagePattern, CUDA_BASE_IMAGE, type ImageRule, lookupImage } from "./images"
import { containerUser, imageCommandLine, imageEnv } from "./image-config"
import { podRuntimes } from "./kubelet"
import {
  commandLine,
  containerEnv,
  exitCodeOf,
  expand,
  fieldValue,
  finishedStatus,
  type PodSources,
  runningStatus,
  terminationMessage,
  volumeContent,
} from "./pod"
import { claimedExpression, patchStages } from "./stages"

const rules: ImageRule[] = [
  { repository: "ghcr.io/nvidia/aicr", resolve: (v) => (v === "v0.11.1" ? { entrypoint: ["/b/aicr"], path: ["/b"] } : { error: `no build of ${v}` }) },
  { repository: "ghcr.io/nvidia/aicr-validators/deployment", resolve: () => ({ entrypoint: ["/b/deployment"], path: [], workdir: "/app" }) },
]

const pod = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  metadata: { name: "p", namespace: "ns", uid: "u-1", labels: { app: "x" }, annotations: { a: "1" } },
  spec: { nodeName: "kwok-gpu-0", serviceAccountName: "sa", containers, ...extra },
  status: { podIP: "10.0.0.7", hostIP: "10.0.0.1" },
})

const sources = (
  objects: { cm?: Record<string, Record<string, string>>; secret?: Record<string, Record<string, string>> } = {},
): PodSources & { tokens: unknown[] } => {
  const tokens: unknown[] = []
  return {
    tokens,
    configMap: async (_ns, name) => (objects.cm?.[name] ? { data: objects.cm[name] } : undefined),
    secret: async (_ns, name) =>
      objects.secret?.[name]
        ? { data: Object.fromEntries(Object.entries(objects.secret[name]).map(([k, v]) => [k, Buffer.from(v).toString("base64")])) }
        : undefined,
    token: async (ns, sa, p, audience, seconds) => {
      tokens.push({ ns, sa, p, audience, seconds })
      return `token-of-${sa}`
    },
  }
}

describe("process kubelet: which images run for real", () => {
  it.each([
    ["ghcr.io/nvidia/aicr:v0.11.1", "runnable"],
    [`ghcr.io/nvidia/aicr:v0.11.1@sha256:${"a".repeat(64)}`, "runnable"],
    ["ghcr.io/nvidia/aicr-validators/deployment:v0.10.16", "runnable"],
    ["ghcr.io/nvidia/aicr:v0.9.0", "unavailable"],
    ["ghcr.io/nvidia/aicr:latest", "unavailable"],
    ["ghcr.io/nvidia/aicr-validators/performance:v0.11.1", "unavailable"],
    ["ghcr.io/nvidia/aicrx:v0.11.1", "unclaimed"],
    ["registry.k8s.io/pause:3.10", "unclaimed"],
    ["ghcr.io/nvidia/gpu-operator:v25.3.0", "unclaimed"],
  ])("%s is %s", (image, kind) => {
    expect(lookupImage(image, rules).kind).toBe(kind)
  })

  it("runs NVIDIA's CUDA base image (AICR's GPU check) with its own command, and claims no other CUDA tag", () => {
    const all = [...rules, CUDA_BASE_IMAGE]
    expect(lookupImage("nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04", all)).toMatchObject({
      kind: "runnable",
      version: "13.0.0-base-ubuntu22.04",
      runtime: { entrypoint: [], path: [] },
    })
    expect(lookupImage("nvcr.io/nvidia/cuda:13.0.0-devel-ubuntu22.04", all)).toMatchObject({ kind: "unavailable" })
    expect(lookupImage("nvcr.io/nvidia/cudax:13.0.0-base-ubuntu22.04", all).kind).toBe("unclaimed")
    expect(new RegExp(claimedImagePattern(all)).test("nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04")).toBe(true)
  })

  it("says why a claimed image cannot run here", () => {
    const l = lookupImage("ghcr.io/nvidia/aicr:v0.9.0", rules)
    expect(l).toEqual({ kind: "unavailable", message: "image ghcr.io/nvidia/aicr:v0.9.0: no build of v0.9.0" })
    expect(lookupImage("ghcr.io/nvidia/aicr:latest", rules)).toMatchObject({ message: expect.stringContaining("only release tags") })
  })

  it("the claim pattern matches exactly the claimed repositories", () => {
    const re = new RegExp(claimedImagePattern(rules))
    expect(re.test("ghcr.io/nvidia/aicr:v1.0.0")).toBe(true)
    expect(re.test("ghcr.io/nvidia/aicr-validators/conformance:v0.11.1")).toBe(true)
    expect(re.test("ghcr.io/nvidia/aicr@sha256:abc")).toBe(true)
    expect(re.test("ghcrXio/nvidia/aicr:v1")).toBe(false)
    expect(re.test("ghcr.io/nvidia/aicr-operator:v1")).toBe(false)
  })

  it("runs a pod only when every container is runnable, and ignores pods with no claimed image", () => {
    expect(podRuntimes(pod([{ name: "a", image: "busybox" }]), rules)).toEqual({ kind: "ignore" })
    expect(podRuntimes(pod([{ name: "a", image: "ghcr.io/nvidia/aicr:v0.11.1" }]), rules)).toMatchObject({
      kind: "run",
      runtimes: { a: { entrypoint: ["/b/aicr"] } },
    })
    expect(
      podRuntimes(
        pod([
          { name: "a", image: "ghcr.io/nvidia/aicr:v0.11.1" },
          { name: "b", image: "busybox" },
        ]),
        rules,
      ),
    ).toMatchObject({ kind: "unavailable" })
  })
})

describe("process kubelet: kwok stages", () => {
  const stage = (name: string, kind = "Pod") => ({
    kind: "Stage",
    metadata: { name },
    spec: { resourceRef: { kind }, selector: { matchExpressions: [{ key: ".status.phase", operator: "In", values: ["Pending"] }] } },
  })

  it("adds the claimed-image exclusion to every pod stage and to no node stage, and the hold exclusion to the ready stage only", () => {
    const out = patchStages([stage("pod-ready"), stage("node-initialize", "Node"), stage("pod-delete")], "^(a)[:@]")
    expect(out[0].spec.selector.matchExpressions).toEqual([
      { key: ".status.phase", operator: "In", values: ["Pending"] },
      { key: '[.spec.containers.[].image | test("^(a)[:@]")] | any', operator: "NotIn", values: ["true"] },
      { key: '.metadata.labels.["aicr-e2e-hold"]', operator: "DoesNotExist" },
    ])
    expect(out[1].spec.selector.matchExpressions).toHaveLength(1)
    expect(out[2].spec.selector.matchExpressions).toEqual([
      { key: ".status.phase", operator: "In", values: ["Pending"] },
      { key: '[.spec.containers.[].image | test("^(a)[:@]")] | any', operator: "NotIn", values: ["true"] },
    ])
  })

  it("quotes the pattern as a jq string", () => {
    expect(claimedExpression('^a\\.b"')).toMatchObject({ key: '[.spec.containers.[].image | test("^a\\\\.b\\"")] | any' })
  })
})

describe("process kubelet: fake hosts", () => {
  it("GPU nodes are Ubuntu 24.04 on an AWS 6.8 kernel with 8 × H100 80GB HBM3", () => {
    const h = defaultHostFor({ "nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8" })
    expect(h.gpu?.devices).toMatchObject({ product: "NVIDIA H100 80GB HBM3", count: 8 })
    expect(h.kernel).toMatch(/^6\.8\..*-aws$/)
    expect(osRelease(h)).toContain('VERSION_ID="24.04"')
    expect(osRelease(h)).toContain("ID=ubuntu")
  })

  it("system nodes have no GPU and no nvidia-smi", () => {
    const h = defaultHostFor({})
    expect(h.gpu).toBeUndefined()
    expect(Object.keys(hostFiles(h))).not.toContain("usr/bin/nvidia-smi")
  })

  it("renders nvidia-smi -q -x with one <gpu> per device and the driver version", () => {
    const xml = nvidiaSmiXml(h100Host({ driver: "580.65.06", count: 2 }), new Date("2026-12-02T00:00:00Z"))
    expect(xml.match(/<gpu id=/g)).toHaveLength(2)
    expect(xml).toContain("<driver_version>580.65.06</driver_version>")
    expect(xml).toContain("<attached_gpus>2</attached_gpus>")
  })

  it("reads a profile from the node annotation and names the node when it is malformed", () => {
    const node = (raw: string) => ({ metadata: { name: "n1", labels: {}, annotations: { [HOST_PROFILE_ANNOTATION]: raw } } })
    expect(hostProfileOf(node(JSON.stringify(h100Host({ driver: "1.2.3" })))).gpu?.driver).toBe("1.2.3")
    expect(hostProfileOf({ metadata: { name: "n2", labels: {} } })).toEqual(systemHost())
    expect(() => hostProfileOf(node("{nope"))).toThrow(/node n1: annotation harness.aicr.run\/host-profile/)
  })
})

describe("process kubelet: environment and volumes", () => {
  const api = { host: "127.0.0.1", port: 6443 }

  it("resolves values, downward-API fields, ConfigMap and Secret keys, and $(VAR) references", async () => {
    const c = {
      name: "c",
      envFrom: [{ configMapRef: { name: "cm" }, prefix: "CM_" }],
      env: [
        { name: "A", value: "a" },
        { name: "B", value: "$(A)-b-$$(A)" },
        { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
        { name: "NS", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        { name: "LBL", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: "S", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
        { name: "OPT", valueFrom: { configMapKeyRef: { name: "cm", key: "missing", optional: true } } },
      ],
    }
    const env = await containerEnv(pod([c]), c, sources({ cm: { cm: { x: "1" } }, secret: { s: { k: "secret!" } } }), api)
    expect(env).toMatchObject({
      A: "a",
      B: "a-b-$(A)",
      NODE_NAME: "kwok-gpu-0",
      NS: "ns",
      LBL: "x",
      S: "secret!",
      CM_x: "1",
      KUBERNETES_SERVICE_HOST: "127.0.0.1",
      KUBERNETES_SERVICE_PORT: "6443",
    })
    expect(env).not.toHaveProperty("OPT")
  })

  it("a missing required key is a CreateContainerConfigError naming it", async () => {
    const c = { name: "c", env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } }] }
    await expect(containerEnv(pod([c]), c, sources(), api)).rejects.toMatchObject({
      reason: "CreateContainerConfigError",
      message: "couldn't find key k in ConfigMap ns/cm",
    })
  })

  it("projects the ServiceAccount token bound to the pod, the root CA and the namespace", async () => {
    const src = sources({ cm: { "kube-root-ca.crt": { "ca.crt": "CA" } } })
    const v = {
      name: "kube-api-access",
      projected: {
        sources: [
          { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          { downwardAPI: { items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }] } },
        ],
      },
    }
    const out = await volumeContent(pod([]), v, src)
    expect(out.kind).toBe("files")
    const files = (out as { files: Record<string, Buffer> }).files
    expect(Object.fromEntries(Object.entries(files).map(([k, b]) => [k, b.toString()]))).toEqual({ token: "token-of-sa", "ca.crt": "CA", namespace: "ns" })
    expect(src.tokens).toEqual([{ ns: "ns", sa: "sa", p: { name: "p", uid: "u-1" }, audience: undefined, seconds: 3607 }])
  })

  it("uses the image entrypoint when the container has no command", () => {
    expect(commandLine({ args: ["check-nvidia-smi"] }, ["/b/deployment"], {})).toEqual(["/b/deployment", "check-nvidia-smi"])
    expect(commandLine({ command: ["aicr"], args: ["snapshot", "-o", "$(OUT)"] }, ["/b/aicr"], { OUT: "cm://a/b" })).toEqual([
      "aicr",
      "snapshot",
      "-o",
      "cm://a/b",
    ])
  })

  it("field paths the kubelet does not know are refused", () => {
    expect(() => fieldValue(pod([]), "status.phase")).toThrow(/unsupported fieldRef status.phase/)
    expect(expand("$(MISSING)", {})).toBe("$(MISSING)")
  })
})

describe("process kubelet: status", () => {
  it("exit codes follow the container convention: 128+N for signal N", () => {
    expect(exitCodeOf(0, null)).toBe(0)
    expect(exitCodeOf(2, null)).toBe(2)
    expect(exitCodeOf(null, "SIGKILL")).toBe(137)
    expect(exitCodeOf(null, "SIGTERM")).toBe(143)
  })

  it("the termination message comes from the file, else the log tail with FallbackToLogsOnError on failure", () => {
    expect(terminationMessage("boom", undefined, 1, () => "log")).toBe("boom")
    expect(terminationMessage("x".repeat(5000), undefined, 1, () => "")).toHaveLength(4096)
    expect(terminationMessage("", "File", 1, () => "log")).toBeUndefined()
    expect(terminationMessage("", "FallbackToLogsOnError", 1, () => "last line")).toBe("last line")
    expect(terminationMessage("", "FallbackToLogsOnError", 0, () => "last line")).toBeUndefined()
  })

  it("a pod whose containers all exit 0 Succeeded; any other exit Failed, with each container's terminated state", () => {
    const p = pod([
      { name: "a", image: "i" },
      { name: "b", image: "i" },
    ])
    const t = (exitCode: number, extra: Record<string, unknown> = {}) => ({
      exitCode,
      reason: exitCode ? "Error" : "Completed",
      startedAt: "s",
      finishedAt: "f",
      containerID: "harness://x",
      ...extra,
    })
    expect(finishedStatus(p, "now", { a: t(0), b: t(0) }).status.phase).toBe("Succeeded")
    const failed = finishedStatus(p, "now", { a: t(0), b: t(137, { signal: "SIGKILL", message: "killed" }) })
    expect(failed.status.phase).toBe("Failed")
    expect(failed.status.containerStatuses[1].state.terminated).toEqual({
      exitCode: 137,
      signal: 9,
      reason: "Error",
      message: "killed",
      startedAt: "s",
      finishedAt: "f",
      containerID: "harness://x",
    })
  })
})

describe("process kubelet: containerLogs", () => {
  it("tailLines keeps the last lines, limitBytes cuts after that", async () => {
    const { selectLog } = await import("./logs")
    expect(selectLog("a\nb\nc\n", { tailLines: 2 })).toBe("b\nc\n")
    expect(selectLog("a\nb\nc\n", { tailLines: 0 })).toBe("")
    expect(selectLog("a\nb\nc\n", { tailLines: 2, limitBytes: 3 })).toBe("b\nc")
    expect(selectLog("abc", {})).toBe("abc")
  })
})

describe("process kubelet: images from the local registry", () => {
  it("claims and pulls images on a loopback registry, by tag or digest", () => {
    const digest = `sha256:${"b".repeat(64)}`
    expect(lookupImage(`127.0.0.1:5000/aicr/aicr-operator:v0.1.0@${digest}`, rules)).toMatchObject({
      kind: "runnable",
      runtime: { pull: `127.0.0.1:5000/aicr/aicr-operator:v0.1.0@${digest}` },
    })
    expect(lookupImage("localhost:5000/x@" + digest, rules)).toMatchObject({ kind: "runnable", version: digest })
    expect(lookupImage("registry.example.com:5000/x:v1", rules).kind).toBe("unclaimed")
    const re = new RegExp(claimedImagePattern(rules))
    expect(re.test("127.0.0.1:40123/images-test/aicr-operator:v1")).toBe(true)
    expect(re.test("127.0.0.1.example.com/x:v1")).toBe(false)
  })

  it("AICR's images come from the local copies under the mirror, by tag", () => {
    expect(lookupImage(`ghcr.io/nvidia/aicr:v0.11.1@sha256:${"a".repeat(64)}`, aicrImages("127.0.0.1:5000/aicr-images"))).toMatchObject({
      kind: "runnable",
      runtime: { pull: "127.0.0.1:5000/aicr-images/nvidia/aicr:v0.11.1" },
    })
    expect(lookupImage("ghcr.io/nvidia/aicr-validators/deployment:v0.10.16", aicrImages("r/p"))).toMatchObject({
      runtime: { pull: "r/p/nvidia/aicr-validators/deployment:v0.10.16" },
    })
  })
})

describe("process kubelet: image config", () => {
  const config = {
    User: "65532:65532",
    Env: ["PATH=/usr/bin:/nodejs/bin", "NODE_ENV=production"],
    Entrypoint: ["/nodejs/bin/node", "/app/main.mjs"],
    Cmd: ["--default"],
    WorkingDir: "/app",
  }
  const files = {
    passwd: "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
    group: "root:x:0:\nnonroot:x:65532:\n",
  }

  it("follows Kubernetes' rules for command and args over Entrypoint and Cmd", () => {
    expect(imageCommandLine({}, config, {})).toEqual(["/nodejs/bin/node", "/app/main.mjs", "--default"])
    expect(imageCommandLine({ args: ["planner", "--x=$(A)"] }, config, { A: "1" })).toEqual(["/nodejs/bin/node", "/app/main.mjs", "planner", "--x=1"])
    expect(imageCommandLine({ command: ["/bin/sh", "-c"] }, config, {})).toEqual(["/bin/sh", "-c"])
    expect(imageCommandLine({ command: ["$(A)"], args: ["b"] }, config, { A: "a" })).toEqual(["a", "b"])
  })

  it("the pod's variables win over the image's", () => {
    expect(imageEnv(config, { NODE_ENV: "test", POD_NAME: "p" })).toEqual({ PATH: "/usr/bin:/nodejs/bin", NODE_ENV: "test", POD_NAME: "p" })
  })

  it("runs as the image's user unless the securityContext says otherwise; names come from the image's passwd", () => {
    const p = pod([])
    expect(containerUser(p, {}, config, files)).toEqual({ uid: 65532, gid: 65532, home: "/home/nonroot" })
    expect(containerUser(p, {}, { User: "nonroot" }, files)).toEqual({ uid: 65532, gid: 65532, home: "/home/nonroot" })
    expect(containerUser(p, {}, {}, files)).toEqual({ uid: 0, gid: 0, home: "/root" })
    expect(containerUser(p, { securityContext: { runAsUser: 1000, runAsGroup: 2000 } }, config, files)).toEqual({ uid: 1000, gid: 2000, home: "/" })
    expect(containerUser({ ...p, spec: { ...p.spec, securityContext: { runAsUser: 65532 } } }, {}, {}, files)).toMatchObject({ uid: 65532, gid: 65532 })
    expect(() => containerUser(p, { name: "c", securityContext: { runAsNonRoot: true } }, {}, files)).toThrow(/runAsNonRoot and image will run as root/)
    expect(() => containerUser(p, { name: "c" }, { User: "ghost" }, files)).toThrow(/ghost is not in the image's \/etc\/passwd/)
  })

  it("a pod with restarts reports each container's readiness, restart count and last termination", () => {
    const p = pod([
      { name: "a", image: "i" },
      { name: "b", image: "i" },
    ])
    const t = { exitCode: 137, signal: "SIGKILL", reason: "Error", startedAt: "s", finishedAt: "f", containerID: "harness://old" }
    const st = runningStatus(p, {
      hostIP: "127.0.0.1",
      podIP: "127.20.1.2",
      now: "now",
      containers: {
        a: { containerID: "harness://a", startedAt: "s", ready: true, restartCount: 0 },
        b: { containerID: "harness://b", startedAt: "s2", ready: false, restartCount: 1, lastTerminated: t },
      },
    }).status
    expect(st.podIP).toBe("127.20.1.2")
    expect(st.conditions.find((c: { type: string }) => c.type === "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady" })
    expect(st.containerStatuses[1]).toMatchObject({
      ready: false,
      restartCount: 1,
      state: { running: { startedAt: "s2" } },
      lastState: { terminated: { exitCode: 137, signal: 9 } },
    })
    const ready = runningStatus(p, {
      hostIP: "h",
      podIP: "i",
      now: "now",
      containers: {
        a: { containerID: "x", startedAt: "s", ready: true, restartCount: 0 },
        b: { containerID: "y", startedAt: "s", ready: true, restartCount: 0 },
      },
    }).status
    expect(ready.conditions.find((c: { type: string }) => c.type === "Ready")?.status).toBe("True")
  })
})
