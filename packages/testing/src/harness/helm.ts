// The real helm CLI (hack/tools/versions.env HELM_VERSION) with its own HOME and HELM_* directories, so interop tests
// never read or write the user's helm configuration, registry logins or repository cache.
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { toolPath } from "./tools"

const run = promisify(execFile)

export interface IsolatedHelm {
  /** The working directory, also helm's HOME; relative paths in helm arguments resolve here. */
  readonly work: string
  readonly env: NodeJS.ProcessEnv
  /** Runs helm with these arguments; resolves with its stdout, rejects (with stderr) on a non-zero exit. */
  readonly helm: (...args: string[]) => Promise<string>
  readonly cleanup: () => Promise<void>
}

export const isolatedHelm = async (prefix = "aicr-helm-"): Promise<IsolatedHelm> => {
  const work = await mkdtemp(join(tmpdir(), prefix))
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
  return { work, env, helm, cleanup: () => rm(work, { recursive: true, force: true }) }
}
