/**
 * `npx tsx packages/image/bench/images.bench.ts [--idle <seconds>]`: each controller's RSS running from the
 * `aicr-operator` image on the local control plane, as the process kubelet runs it (its own root filesystem, the
 * pod's ServiceAccount, in-cluster config). Builds the bundles and the image (linux on this machine's architecture),
 * pushes it to the plane's registry, runs one Deployment per controller (by digest, readiness on /readyz), waits for
 * every rollout, lets them idle, then reads each container process's VmRSS and VmHWM from /proc; each controller
 * also runs with NODE_OPTIONS=--enable-source-maps (`<name>-sm`). Measured, never asserted; written to
 * .aicr/bench/images-rss.json.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { promisify } from "node:util"
import { OciClient } from "@aicr/oras"
import { applyManifests, argoCdCrdsDir, expectOk, kubeRequest, loadManifests, repoRoot, startControlPlane, toolPath } from "@aicr/testing/harness"
import { apps, buildApp } from "../../../hack/build-apps"
import { buildImage, imageSize, operatorImage, pushImage } from "../src/index"
import { benchControllerFlags } from "../../../hack/local-operator"

const run = promisify(execFile)
const root = repoRoot()
const idle = Number(process.argv[process.argv.indexOf("--idle") + 1] ?? 20) || 20
const NS = "aicr-system"

const main = async () => {
  const plane = await startControlPlane({ fresh: true })
  const client = new OciClient()
  try {
    const info = plane.info
    await applyManifests(info, join(root, "crds"))
    await applyManifests(
      info,
      ["application-crd.yaml", "appproject-crd.yaml"].flatMap((f) => loadManifests(join(argoCdCrdsDir(), f))),
    )
    await applyManifests(info, [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "argocd" } },
    ])
    const controllers = apps()
    const bundles: Record<string, string> = {}
    for (const a of controllers) bundles[a] = (await buildApp(a, join(info.dir, "bench-apps", a))).outdir
    const arch = process.arch === "arm64" ? "arm64" : "amd64"
    const built = await buildImage(operatorImage(bundles, { version: "0.0.0-bench" }, [arch]), { outDir: join(info.dir, "bench-images") })
    const ref = await pushImage(client, built, `${info.registry}/bench/aicr-operator`, "v0.0.0-bench")
    const image = ref.replace(/:v0\.0\.0-bench@/, "@")
    // Each controller twice: as the image starts it, and with source maps on (NODE_OPTIONS=--enable-source-maps, what
    // one sets to get source positions in stack traces), to show what they cost.
    const variants = controllers.flatMap((a) => [
      { name: a, app: a, sourceMaps: false },
      { name: `${a}-sm`, app: a, sourceMaps: true },
    ])
    for (const { app: a } of variants.filter((v) => !v.sourceMaps)) {
      const sa = `aicr-${a}`
      await applyManifests(info, [
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: NS } },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: `${sa}-bench` },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: sa, namespace: NS }],
        },
      ])
    }
    for (const { name, app: a, sourceMaps } of variants) {
      const sa = `aicr-${a}`
      await applyManifests(info, [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name, namespace: NS },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: name } },
            template: {
              metadata: { labels: { app: name } },
              spec: {
                serviceAccountName: sa,
                containers: [
                  {
                    name: "controller",
                    image,
                    args: [
                      a,
                      ...benchControllerFlags(a, info.registry),
                      "--leader-election-id",
                      `aicr-${name}`,
                      "--health-probe-bind-address",
                      "$(POD_IP):8081",
                      "--metrics-bind-address",
                      "$(POD_IP):8080",
                      "--log-level",
                      "warn",
                    ],
                    env: [
                      { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
                      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                      ...(sourceMaps ? [{ name: "NODE_OPTIONS", value: "--enable-source-maps" }] : []),
                    ],
                    readinessProbe: { httpGet: { path: "/readyz", port: 8081 }, periodSeconds: 1 },
                  },
                ],
              },
            },
          },
        },
      ])
    }
    const rollout: Record<string, string> = {}
    for (const { name: a } of variants) {
      const t0 = performance.now()
      try {
        await run(toolPath("kubectl"), ["--kubeconfig", info.kubeconfig, "-n", NS, "rollout", "status", `deployment/${a}`, "--timeout=120s"])
        rollout[a] = `${((performance.now() - t0) / 1000).toFixed(1)} s`
      } catch (e) {
        rollout[a] = `not ready: ${e instanceof Error ? e.message.split("\n").slice(-2).join(" ") : String(e)}`
      }
    }
    await sleep(idle * 1000)
    const pods = expectOk(await kubeRequest(info, { method: "GET", path: `/api/v1/namespaces/${NS}/pods` }), "pods").items as {
      metadata: { name: string; labels: { app: string } }
      status: { containerStatuses?: { containerID?: string; ready: boolean; restartCount: number; state?: unknown; lastState?: unknown }[] }
    }[]
    const rss: Record<string, unknown> = {}
    for (const p of pods) {
      const cs = p.status.containerStatuses?.[0]
      const pid = Number(cs?.containerID?.split("/").pop())
      const file = `/proc/${pid}/status`
      const status = Number.isFinite(pid) && existsSync(file) ? readFileSync(file, "utf8") : ""
      const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
      const app = p.metadata.labels.app
      const logFile = join(
        info.dir,
        "kubelet",
        "pods",
        readdirSync(join(info.dir, "kubelet", "pods")).find((d) => d.startsWith(`${NS}_${p.metadata.name}_`)) ?? "-",
        "logs",
        "controller.log",
      )
      const logTail = existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n").slice(-3) : []
      rss[app] = status
        ? {
            ready: cs?.ready ?? false,
            restarts: cs?.restartCount ?? 0,
            rssMiB: +(kib("VmRSS") / 1024).toFixed(1),
            peakMiB: +(kib("VmHWM") / 1024).toFixed(1),
            rollout: rollout[app],
          }
        : { ready: false, restarts: cs?.restartCount ?? 0, state: cs?.state, lastState: cs?.lastState, rollout: rollout[app], logTail }
    }
    const size = imageSize(built, arch)
    const result = {
      image,
      arch,
      compressedMiB: +(size.compressed / 2 ** 20).toFixed(1),
      uncompressedMiB: +(size.uncompressed / 2 ** 20).toFixed(1),
      idleSeconds: idle,
      controllers: rss,
    }
    mkdirSync(join(root, ".aicr", "bench"), { recursive: true })
    writeFileSync(join(root, ".aicr", "bench", "images-rss.json"), `${JSON.stringify(result, null, 2)}\n`)
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } finally {
    await client.close()
    await plane.stop()
  }
}

await main()
