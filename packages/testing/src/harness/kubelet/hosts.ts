// Fake hosts: what a process that the process kubelet runs "on" a kwok node sees of that node. Each node has a
// host profile (OS release, kernel, boot command line, loaded modules, GPUs and driver) rendered into a small host
// root under <dir>/kubelet/hosts/<node>/root; the pod's private mount namespace binds those files over the build
// machine's own (/etc/os-release, /proc/sys/kernel/osrelease, …) and puts a fake `nvidia-smi` on PATH.
//
// A profile lives on the Node as the annotation harness.aicr.run/host-profile (JSON), so a test changes a host with
// one API write (setHostProfile), the way a driver upgrade changes a real node. Without the annotation the profile
// follows the node's labels: nvidia.com/gpu.present=true gives the H100 profile, anything else a system node.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Schema } from "effect"
import { expectOk, kubeRequest } from "../kube"
import type { KubeTarget } from "../types"

export const HOST_PROFILE_ANNOTATION = "harness.aicr.run/host-profile"

const Gpu = Schema.Struct({
  product: Schema.String,
  architecture: Schema.String,
  memoryMiB: Schema.Number,
  count: Schema.Number,
})

export const HostProfile = Schema.Struct({
  os: Schema.Struct({ id: Schema.String, versionId: Schema.String, prettyName: Schema.String, codename: Schema.String }),
  kernel: Schema.String,
  cmdline: Schema.String,
  modules: Schema.Array(Schema.String),
  gpu: Schema.optional(Schema.Struct({ driver: Schema.String, cuda: Schema.String, devices: Gpu })),
})
export type HostProfile = typeof HostProfile.Type

const UBUNTU_2404 = { id: "ubuntu", versionId: "24.04", prettyName: "Ubuntu 24.04.3 LTS", codename: "noble" } as const
const AWS_KERNEL = "6.8.0-1031-aws"
const BASE_MODULES = ["overlay", "br_netfilter", "ena", "nvme", "xfs", "ip_tables"] as const

/** An EKS Ubuntu 24.04 node without GPUs (m5.2xlarge). */
export const systemHost = (): HostProfile => ({
  os: UBUNTU_2404,
  kernel: AWS_KERNEL,
  cmdline: `BOOT_IMAGE=/vmlinuz-${AWS_KERNEL} root=PARTUUID=7b2b0b7e-01 ro console=tty1 console=ttyS0 nvme_core.io_timeout=4294967295`,
  modules: [...BASE_MODULES],
})

/** A p5.48xlarge: Ubuntu 24.04, kernel 6.8 (AWS), 8 × H100 80GB HBM3 with the given driver. */
export const h100Host = (opts: { driver?: string; cuda?: string; count?: number } = {}): HostProfile => ({
  ...systemHost(),
  modules: [...BASE_MODULES, "nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_peermem", "efa", "gdrdrv"],
  gpu: {
    driver: opts.driver ?? "570.133.20",
    cuda: opts.cuda ?? "12.8",
    devices: { product: "NVIDIA H100 80GB HBM3", architecture: "Hopper", memoryMiB: 81559, count: opts.count ?? 8 },
  },
})

/** The profile a node without the annotation gets, from its labels. */
export const defaultHostFor = (labels: Readonly<Record<string, string>>): HostProfile => {
  if (labels["nvidia.com/gpu.present"] !== "true") return systemHost()
  const count = Number(labels["nvidia.com/gpu.count"] ?? "8")
  return h100Host({ count: Number.isFinite(count) && count > 0 ? count : 8 })
}

const decodeProfile = Schema.decodeUnknownSync(Schema.fromJsonString(HostProfile))

/** The node's host profile: its annotation when present (a malformed one throws, naming the node), else the default. */
export const hostProfileOf = (node: { metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } }): HostProfile => {
  const raw = node.metadata?.annotations?.[HOST_PROFILE_ANNOTATION]
  if (raw === undefined) return defaultHostFor(node.metadata?.labels ?? {})
  try {
    return decodeProfile(raw)
  } catch (e) {
    throw new Error(`node ${node.metadata?.name}: annotation ${HOST_PROFILE_ANNOTATION} is not a host profile: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    })
  }
}

/**
 * Sets a node's host profile, and the labels GPU feature discovery would publish for it (driver version, product,
 * count), as a driver upgrade or a GPU swap changes a real node.
 */
export const setHostProfile = async (info: KubeTarget, node: string, profile: HostProfile): Promise<void> => {
  const gpu = profile.gpu
  const [major, minor, rev] = (gpu?.driver ?? "").split(".")
  const labels = gpu
    ? {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": gpu.devices.product.replaceAll(" ", "-"),
        "nvidia.com/gpu.count": String(gpu.devices.count),
        "nvidia.com/cuda.driver.major": major ?? null,
        "nvidia.com/cuda.driver.minor": minor ?? null,
        "nvidia.com/cuda.driver.rev": rev ?? null,
      }
    : { "nvidia.com/gpu.present": null, "nvidia.com/gpu.product": null, "nvidia.com/gpu.count": null }
  const res = await kubeRequest(info, {
    method: "PATCH",
    path: `/api/v1/nodes/${node}`,
    body: { metadata: { annotations: { [HOST_PROFILE_ANNOTATION]: JSON.stringify(profile) }, labels } },
  })
  expectOk(res, `set host profile of node ${node}`)
}

export const osRelease = (p: HostProfile): string =>
  [
    `PRETTY_NAME="${p.os.prettyName}"`,
    `NAME="${p.os.id === "ubuntu" ? "Ubuntu" : p.os.id}"`,
    `VERSION_ID="${p.os.versionId}"`,
    `VERSION="${p.os.versionId} LTS (${p.os.codename[0]!.toUpperCase()}${p.os.codename.slice(1)} ${p.os.codename === "noble" ? "Numbat" : ""})"`.replace(
      " )",
      ")",
    ),
    `VERSION_CODENAME=${p.os.codename}`,
    `ID=${p.os.id}`,
    "ID_LIKE=debian",
    `UBUNTU_CODENAME=${p.os.codename}`,
    "",
  ].join("\n")

/** /proc/modules lines for the loaded modules. */
export const procModules = (p: HostProfile): string => p.modules.map((m, i) => `${m} ${65536 + i * 4096} 0 - Live 0x0000000000000000`).join("\n") + "\n"

const xmlEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** What `nvidia-smi -q -x` prints on this host (the nvsmi_device_v12 shape AICR's GPU collector parses). */
export const nvidiaSmiXml = (p: HostProfile, now: Date = new Date()): string => {
  const g = p.gpu
  if (!g) throw new Error("host has no GPUs")
  const gpus = Array.from({ length: g.devices.count }, (_, i) => {
    const bus = (0x18 + i * 0x10).toString(16).padStart(2, "0")
    return [
      `  <gpu id="00000000:${bus}:00.0">`,
      `    <product_name>${xmlEscape(g.devices.product)}</product_name>`,
      "    <product_brand>NVIDIA</product_brand>",
      `    <product_architecture>${g.devices.architecture}</product_architecture>`,
      "    <display_mode>Disabled</display_mode>",
      "    <display_active>Disabled</display_active>",
      "    <persistence_mode>Enabled</persistence_mode>",
      "    <addressing_mode>None</addressing_mode>",
      "    <mig_mode><current_mig>Disabled</current_mig><pending_mig>Disabled</pending_mig></mig_mode>",
      `    <serial>165232300${String(1000 + i)}</serial>`,
      `    <uuid>GPU-5f3c1d2e-0000-4000-8000-${String(i).padStart(12, "0")}</uuid>`,
      `    <minor_number>${i}</minor_number>`,
      "    <vbios_version>96.00.99.00.01</vbios_version>",
      `    <gsp_firmware_version>${g.driver}</gsp_firmware_version>`,
      `    <pci><pci_bus>${bus}</pci_bus><pci_device>00</pci_device><pci_domain>0000</pci_domain></pci>`,
      `    <fb_memory_usage><total>${g.devices.memoryMiB} MiB</total><reserved>551 MiB</reserved><used>0 MiB</used><free>${g.devices.memoryMiB - 551} MiB</free></fb_memory_usage>`,
      "    <performance_state>P0</performance_state>",
      "  </gpu>",
    ].join("\n")
  })
  return [
    '<?xml version="1.0" ?>',
    '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">',
    "<nvidia_smi_log>",
    `  <timestamp>${now.toUTCString()}</timestamp>`,
    `  <driver_version>${g.driver}</driver_version>`,
    `  <cuda_version>${g.cuda}</cuda_version>`,
    `  <attached_gpus>${g.devices.count}</attached_gpus>`,
    ...gpus,
    "</nvidia_smi_log>",
    "",
  ].join("\n")
}

/** The human-readable table `nvidia-smi` prints without flags (what a GPU check greps for). */
export const nvidiaSmiTable = (p: HostProfile): string => {
  const g = p.gpu!
  return [
    "+-----------------------------------------------------------------------------------------+",
    `| NVIDIA-SMI ${g.driver}             Driver Version: ${g.driver}     CUDA Version: ${g.cuda}     |`,
    "|-----------------------------------------+------------------------+----------------------+",
    ...Array.from(
      { length: g.devices.count },
      (_, i) => `|   ${i}  ${g.devices.product.padEnd(30)} On  |   00000000:${(0x18 + i * 0x10).toString(16)}:00.0 Off |                    0 |`,
    ),
    "+-----------------------------------------------------------------------------------------+",
    "",
  ].join("\n")
}

/** Files of the host root, relative to it. */
export const hostFiles = (p: HostProfile): Record<string, { content: string; mode?: number }> => {
  const files: Record<string, { content: string; mode?: number }> = {
    "etc/os-release": { content: osRelease(p) },
    "proc/sys/kernel/osrelease": { content: `${p.kernel}\n` },
    "proc/cmdline": { content: `${p.cmdline}\n` },
    "proc/modules": { content: procModules(p) },
  }
  if (p.gpu) {
    files["usr/share/harness/nvidia-smi.xml"] = { content: nvidiaSmiXml(p) }
    files["usr/share/harness/nvidia-smi.txt"] = { content: nvidiaSmiTable(p) }
    // A stand-in for the driver's nvidia-smi: the XML for -q -x, the table otherwise.
    files["usr/bin/nvidia-smi"] = {
      mode: 0o755,
      content: [
        "#!/bin/sh",
        "# nvidia-smi of a fake host (harness process kubelet): prints this node's GPU profile.",
        'here=$(dirname "$0")/../share/harness',
        'case " $* " in *" -x "*|*" --xml-format "*) exec cat "$here/nvidia-smi.xml";; esac',
        'exec cat "$here/nvidia-smi.txt"',
        "",
      ].join("\n"),
    }
  }
  return files
}

/** Host paths the pod's mount namespace binds from the host root over the build machine's own. */
export const HOST_OVERLAYS = ["etc/os-release", "proc/sys/kernel/osrelease", "proc/cmdline", "proc/modules"] as const

/** Writes the host root of one node; returns its path. */
export const writeHostRoot = (hostsDir: string, node: string, p: HostProfile): string => {
  const root = join(hostsDir, node, "root")
  for (const [rel, f] of Object.entries(hostFiles(p))) {
    const path = join(root, rel)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, f.content)
    chmodSync(path, f.mode ?? 0o644)
  }
  mkdirSync(join(root, "run", "systemd"), { recursive: true })
  return root
}
