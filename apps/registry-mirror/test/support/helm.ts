// The real helm v4 CLI with isolated HELM_* dirs, for interop checks of what the mirror pushed.
import { execFile } from "node:child_process"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { toolPath } from "@aicr/testing/harness"

const run = promisify(execFile)

export const makeHelm = async () => {
  const work = await mkdtemp(join(tmpdir(), "registry-mirror-helm-"))
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    HELM_CONFIG_HOME: join(work, "config"),
    HELM_CACHE_HOME: join(work, "cache"),
    HELM_DATA_HOME: join(work, "data"),
    HELM_REGISTRY_CONFIG: join(work, "config", "registry.json"),
    HELM_REPOSITORY_CONFIG: join(work, "config", "repositories.yaml"),
    HELM_REPOSITORY_CACHE: join(work, "cache", "repository"),
  }
  const helm = async (...args: string[]) => (await run(toolPath("helm"), args, { env, cwd: work, maxBuffer: 32 * 1024 * 1024 })).stdout
  return { work, helm }
}
