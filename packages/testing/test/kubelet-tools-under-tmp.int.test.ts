// With the tools cache under /tmp (a HOME under /tmp), AICR's agent Job, which mounts an emptyDir over /tmp, used
// to fail with `exec: aicr: not found`: the process kubelet ran the cached binary, and the volume hid it. The
// kubelet now runs AICR's Jobs from AICR's image (pushed to the plane's registry from that cache), whose files live
// in the container's own root filesystem. This file starts its own control plane with the tools cache under /tmp and
// takes a real snapshot through AICR's agent there.
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { type ControlPlane, createNamespace, readVersions, startControlPlane } from "../src/harness/index"
import { toolsCache } from "../src/harness/tools"

const run = promisify(execFile)
const { aicr: version } = readVersions()
const work = mkdtempSync(join(tmpdir(), "aicr-tmp-tools-"))
const cache = join(work, "home", ".cache", "aicr-operator", "bin")
const previous = process.env.AICR_TOOLS_CACHE
let plane: ControlPlane

beforeAll(async () => {
  // The cache under /tmp: AICR's builds copied (real files under /tmp), every other tool linked.
  const real = toolsCache()
  mkdirSync(cache, { recursive: true })
  for (const d of readdirSync(real)) {
    if (d.startsWith(".")) continue
    if (d.startsWith("aicr-")) cpSync(join(real, d), join(cache, d), { recursive: true })
    else symlinkSync(join(real, d), join(cache, d))
  }
  process.env.AICR_TOOLS_CACHE = cache
  plane = await startControlPlane({ dir: join(work, "plane"), fresh: true, aicrImages: true })
}, 600_000)

afterAll(async () => {
  await plane?.stop()
  if (previous === undefined) delete process.env.AICR_TOOLS_CACHE
  else process.env.AICR_TOOLS_CACHE = previous
  rmSync(work, { recursive: true, force: true })
})

describe("process kubelet: a tools cache under /tmp", () => {
  it("AICR's agent Job (an emptyDir over /tmp) runs from AICR's image and snapshots the node", { timeout: 600_000 }, async () => {
    expect(cache.startsWith("/tmp/")).toBe(true)
    const info = plane.info
    const ns = await createNamespace(info, "snap")
    const out = join(work, "snapshot.yaml")
    await run(
      join(cache, `aicr-${version}`, "aicr"),
      [
        "snapshot",
        "--namespace",
        ns,
        "--node-selector",
        "kubernetes.io/hostname=kwok-gpu-0",
        "--image",
        `ghcr.io/nvidia/aicr:${version}`,
        "--timeout",
        "3m",
        "--output",
        out,
      ],
      {
        env: { PATH: process.env.PATH, HOME: work, KUBECONFIG: info.kubeconfig },
        maxBuffer: 64 << 20,
        timeout: 300_000,
      },
    )
    const snap = parse(readFileSync(out, "utf8")) as { measurements: { type: string; subtypes: { subtype: string; data: Record<string, unknown> }[] }[] }
    const gpu = snap.measurements.find((m) => m.type === "GPU")?.subtypes.find((s) => s.subtype === "smi")?.data
    expect(gpu?.["gpu.model"]).toBe("NVIDIA H100 80GB HBM3")
    // The agent's container had a volume at /tmp (its mount table) and ran from the image the plane pushed.
    const pods = join(info.dir, "kubelet", "pods")
    const podDir = readdirSync(pods).find((d) => d.startsWith(`${ns}_`))!
    const container = readdirSync(join(pods, podDir, "containers"))[0]!
    expect(readFileSync(join(pods, podDir, "containers", container, "mounts.tsv"), "utf8")).toMatch(/\t\/tmp\trw$/m)
    const log = readFileSync(join(info.dir, "logs", "process-kubelet.log"), "utf8")
    expect(log).toMatch(
      new RegExp(
        `${ns}/\\S+: running \\S+ \\(pid \\d+\\) on kwok-gpu-0 from image ${info.registry.replace(/\./g, "\\.")}/aicr-images/nvidia/aicr@sha256:[a-f0-9]{64}`,
      ),
    )
    expect(log).not.toMatch(/aicr: not found/)
  })
})
