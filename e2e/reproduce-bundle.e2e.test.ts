/**
 * The install guide's "Verify the bundle yourself", word for word, on the local control plane after a clean install
 * (`aicr-dev up --detach` in a state directory of its own, then the first rollout approved as the guide says):
 * `kubectl aicr reproduce`, then the lines it prints run as they are in bash — the AICR image rendering the plan's
 * recipe with the plan's flags, the real `oras` CLI (v1.3.6, built by hack/build-tools.sh) pulling the operator's
 * bundle, and `diff -r` — expecting "zero diff". Once for the active plan (AICR v0.11.1), once for a runtime with
 * overrides, once for the plan AICR v0.10.16 renders after the resolver is re-pinned.
 *
 * There is no Docker here: `docker` on the script's PATH is a shim that accepts only the printed form
 * (`docker run --rm --user U:G -v HOST:/work -w /work IMAGE ARGS…`) and runs the image's own binary — the `aicr` that
 * hack/build-tools.sh built for the image's release tag, the same one the process kubelet runs for that image — in
 * HOST with ARGS. Everything else (flags, recipe, bundle reference, the pull and the comparison) is the plugin's output.
 */
import { execFile } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { eventually, lookupImage, readVersions, repoRoot, toolPath } from "@aicr/testing/harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const root = repoRoot()
const versions = readVersions()
const dir = mkdtempSync(join(tmpdir(), "aicr-reproduce-"))
const work = join(dir, "work")
const shims = join(dir, "shims")
const devScript = join(root, "hack", "aicr-dev.mjs")
const kubeconfig = join(dir, "kubeconfig")
let env: NodeJS.ProcessEnv = {}

const up = (aicrVersion?: string) => {
  // The stand-in charts (AICR_UPSTREAM_CHARTS=stand-in), not the real ones `up` serves by default: the bundle
  // reproduced here is AICR's, whatever the charts, and the real charts' install takes 15 minutes and more here
  // (the acceptance stories run it: e2e/acceptance*.e2e.test.ts).
  const e: NodeJS.ProcessEnv = { ...process.env, AICR_LOCAL_DIR: dir, AICR_UPSTREAM_CHARTS: "stand-in" }
  delete e.AICR_IMAGE
  if (aicrVersion === undefined) delete e.AICR_VERSION
  else e.AICR_VERSION = aicrVersion
  return run(process.execPath, [devScript, "up", "--detach"], { cwd: root, env: e, maxBuffer: 16 << 20 })
}

/** Runs a bash script in the work dir with the user's PATH and KUBECONFIG; stdout, stderr and the exit code. */
const bash = async (script: string) => {
  try {
    const { stdout, stderr } = await run("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: work, env, maxBuffer: 16 << 20 })
    return { stdout, stderr, code: 0 }
  } catch (e) {
    const x = e as { stdout: string; stderr: string; code: number }
    return { stdout: x.stdout, stderr: x.stderr, code: x.code }
  }
}
const ok = async (script: string) => {
  const r = await bash(script)
  if (r.code !== 0) throw new Error(`${script}\nexited ${r.code}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const runtime = async (): Promise<any> => JSON.parse(await ok("kubectl get clusterruntime cluster -o json"))

/** The printed form of `docker run`, run with the image's own `aicr` binary (see the file comment). */
const writeDockerShim = (image: string) => {
  const found = lookupImage(image)
  if (found.kind !== "runnable") throw new Error(`the AICR image ${image} does not run here: ${JSON.stringify(found)}`)
  const shim = [
    "#!/usr/bin/env bash",
    "# docker run --rm --user U:G -v HOST:/work -w /work IMAGE ARGS... -> the image's binary with ARGS, in HOST.",
    "set -euo pipefail",
    '[[ ${1:-} == run ]] || { echo "docker shim: only run" >&2; exit 2; }; shift',
    "host='' mnt='' wd='' image=''",
    "while [[ $# -gt 0 ]]; do",
    "  case $1 in",
    "    --rm) shift ;;",
    "    --user) shift 2 ;;",
    "    -v) host=${2%%:*}; mnt=${2#*:}; shift 2 ;;",
    "    -w) wd=$2; shift 2 ;;",
    '    -*) echo "docker shim: unexpected flag $1" >&2; exit 2 ;;',
    "    *) image=$1; shift; break ;;",
    "  esac",
    "done",
    `[[ $image == '${image}' ]] || { echo "docker shim: no local build of image $image" >&2; exit 2; }`,
    '[[ -n $host && $mnt == /work && $wd == /work ]] || { echo "docker shim: expected -v HOST:/work -w /work" >&2; exit 2; }',
    `cd "$host" && exec '${found.runtime.entrypoint[0]}' "$@"`,
    "",
  ].join("\n")
  writeFileSync(join(shims, "docker"), shim)
  chmodSync(join(shims, "docker"), 0o755)
}

interface Printed {
  readonly image: string
  readonly planFlags: string
  /** The lines after "Render the same bundle …:", as printed (indent removed). */
  readonly script: string
}

/** `kubectl aicr reproduce [PLAN] [--dir D]` as the user runs it; the image, the PLAN_FLAGS line and the printed commands. */
const reproduce = async (args: string): Promise<Printed> => {
  const out = await ok(`kubectl aicr reproduce ${args}`)
  const lines = out.split("\n")
  const at = lines.findIndex((l) => l.startsWith("Render the same bundle with the AICR CLI"))
  expect(at, out).toBeGreaterThan(0)
  const script = lines
    .slice(at + 1)
    .filter((l) => l.trim() !== "")
    .map((l) => l.replace(/^ {2}/u, ""))
    .join("\n")
  const image = /^AICR_IMAGE=(\S+)$/mu.exec(script)?.[1]?.replace(/^'|'$/gu, "")
  const planFlags = /^PLAN_FLAGS=\((.*)\)$/mu.exec(script)?.[1]
  if (image === undefined || planFlags === undefined) throw new Error(`no AICR_IMAGE or PLAN_FLAGS line in:\n${out}`)
  return { image, planFlags, script }
}

/** Every file under d (relative path → bytes), to say which ones differ when the diff is not empty. */
const tree = (d: string, base = d, out: Record<string, string> = {}): Record<string, string> => {
  for (const e of readdirSync(d)) {
    const p = join(d, e)
    if (statSync(p).isDirectory()) tree(p, base, out)
    else out[p.slice(base.length + 1)] = readFileSync(p, "utf8")
  }
  return out
}

/** Runs the printed lines as they are; expects zero diff, and returns the two trees for further checks. */
const verify = async (p: Printed, reproduceDir: string) => {
  writeDockerShim(p.image)
  const r = await bash(p.script)
  const operator = join(work, reproduceDir, "operator-bundle")
  const cli = join(work, reproduceDir, "cli-bundle")
  if (r.code !== 0 || !r.stdout.includes("zero diff")) {
    const a = existsSync(operator) ? tree(operator) : {}
    const b = existsSync(cli) ? tree(cli) : {}
    const differing = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).sort()
    throw new Error(
      `the printed commands exited ${r.code} without "zero diff"; files differing: ${differing.join(", ")}\n${r.stdout.slice(0, 4000)}\n${r.stderr.slice(0, 4000)}`,
    )
  }
  return { operator, cli }
}

/** A plan target none of `seen` that `accept` likes, once its plan ConfigMap exists; its desiredStateDigest. */
const waitTarget = async (
  what: string,
  seen: ReadonlyArray<string | undefined>,
  accept: (rt: { status?: { resolution?: { aicr?: { version?: string }; inputDigest?: string } } }) => boolean,
) =>
  eventually(
    async () => {
      const rt = await runtime()
      const target = rt.status?.plans?.target as string | undefined
      if (target === undefined || seen.includes(target) || !accept(rt)) return undefined
      return (await bash(`kubectl get configmaps -n aicr-system -l operator.aicr.run/role=plan -o name | grep -q ${target.slice(7, 39)}`)).code === 0
        ? target
        : undefined
    },
    { timeoutMs: 420_000, intervalMs: 1_000, what },
  )

let overridesTarget: string | undefined

beforeAll(async () => {
  mkdirSync(work, { recursive: true })
  mkdirSync(shims, { recursive: true })
  const { stdout } = await up()
  const rollout = /^Rollout (\S+) awaits approval/mu.exec(stdout)?.[1]
  if (rollout === undefined) throw new Error(`up printed no rollout awaiting approval:\n${stdout}`)
  env = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    // kubectl of the same Kubernetes version, the plugin (its shebang finds this Node 24), oras, and the docker shim.
    PATH: [
      shims,
      join(root, "dist", "apps", "kubectl-aicr"),
      dirname(toolPath("kubectl")),
      dirname(toolPath("oras")),
      dirname(process.execPath),
      process.env.PATH,
    ].join(":"),
  }
  // The first rollout, approved as the local approver (the guide's line, printed by up); then the plan is active.
  await ok(`kubectl aicr approve ${rollout} --expires 2h --reason "first install" --context approver`)
  await eventually(async () => (await runtime()).status?.plans?.active !== undefined, {
    timeoutMs: 420_000,
    intervalMs: 2_000,
    what: "the first plan active (status.plans.active)",
  })
}, 900_000)

afterAll(async () => {
  await run(process.execPath, [devScript, "down"], { cwd: root, env: { ...process.env, AICR_LOCAL_DIR: dir } }).catch(() => undefined)
  rmSync(dir, { recursive: true, force: true })
})

describe("verify the bundle yourself (install guide), verbatim", () => {
  it(`AICR ${versions.aicr}, the active plan: the plan's flags are the placement's, and the printed commands give zero diff`, async () => {
    const p = await reproduce("")
    // The AICR image as the chart pins it: the version's tag and the digest the release lists in aicr.digests.
    expect(p.image).toMatch(new RegExp(`^ghcr\\.io/nvidia/aicr:${versions.aicr.replaceAll(".", "\\.")}@sha256:[0-9a-f]{64}$`, "u"))
    // The sample's placement, as the resolver passed it to `aicr bundle`.
    expect(p.planFlags).toBe(
      "--deployer helm --system-node-selector eks.amazonaws.com/nodegroup=system --accelerated-node-selector eks.amazonaws.com/nodegroup=gpu --accelerated-node-toleration nvidia.com/gpu:NoSchedule",
    )
    expect(p.script).toContain('oras pull --plain-http "${BUNDLE}" -o aicr-reproduce/operator-bundle')
    expect(JSON.parse(readFileSync(join(work, "aicr-reproduce", "recipe.json"), "utf8")).kind).toBe("RecipeResult")
    const { operator } = await verify(p, "aicr-reproduce")
    // oras put the files at the -o root, with sane modes.
    expect(statSync(join(operator, "deploy.sh")).mode & 0o777).toBe(0o755)
    expect(statSync(join(operator, "gpu-operator", "values.yaml")).mode & 0o777).toBe(0o644)
    expect(existsSync(join(operator, "bundle"))).toBe(false)
    // The comparison tells: the same recipe rendered without the plan's flags differs from the operator's bundle.
    const bin = lookupImage(p.image)
    if (bin.kind !== "runnable") throw new Error("unreachable")
    const flagless = await bash(
      `cd aicr-reproduce && '${bin.runtime.entrypoint[0]}' bundle --recipe recipe.json --output cli-bundle-flagless >/dev/null && diff -rq operator-bundle cli-bundle-flagless`,
    )
    expect(flagless.code).toBe(1)
    expect(flagless.stdout).toMatch(/gpu-operator\/values\.yaml differ/u)
  })

  it(`AICR ${versions.aicr}, a runtime with overrides: the --set flags are in the plan's flags, and zero diff`, async () => {
    const rt = await runtime()
    const before = rt.status?.resolution?.inputDigest as string
    await ok(
      `kubectl patch clusterruntime cluster --type merge -p '${JSON.stringify({
        metadata: { annotations: { "operator.aicr.run/edited-by": "admin" } },
        spec: {
          overrides: [
            { path: "gpu-operator:driver.version", value: "580.95.05" },
            { path: "cert-manager:replicaCount", value: "2" },
          ],
        },
      })}'`,
    )
    const target = await waitTarget(
      "the plan of the runtime with overrides",
      [rt.status?.plans?.active, rt.status?.plans?.target],
      (r) => r.status?.resolution?.inputDigest !== before,
    )
    overridesTarget = target
    const p = await reproduce(`${target} --dir aicr-reproduce-overrides`)
    expect(p.planFlags).toContain("--set gpu-operator:driver.version=580.95.05 --set cert-manager:replicaCount=2")
    const { cli } = await verify(p, "aicr-reproduce-overrides")
    expect(readFileSync(join(cli, "gpu-operator", "values.yaml"), "utf8")).toContain("580.95.05")
  })

  it(`AICR ${versions.aicrPrevious}, after re-pinning the resolver: zero diff with that AICR image`, async () => {
    await up(versions.aicrPrevious)
    const active = (await runtime()).status?.plans?.active as string
    const target = await waitTarget(
      `the plan AICR ${versions.aicrPrevious} renders`,
      [active, overridesTarget],
      (r) => r.status?.resolution?.aicr?.version === versions.aicrPrevious,
    )
    const p = await reproduce(`${target} --dir aicr-reproduce-previous`)
    expect(p.image).toMatch(new RegExp(`^ghcr\\.io/nvidia/aicr:${versions.aicrPrevious.replaceAll(".", "\\.")}@sha256:[0-9a-f]{64}$`, "u"))
    expect(p.planFlags).toContain("--accelerated-node-toleration nvidia.com/gpu:NoSchedule")
    await verify(p, "aicr-reproduce-previous")
  })
})
