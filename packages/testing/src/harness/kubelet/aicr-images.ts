// AICR's images for the local control plane: built without a daemon from the AICR binaries hack/build-tools.sh
// made (packages/image: AICR's CLI as /ko-app/aicr over Debian packages with a shell; the deployment validator as
// /deployment with /app/testdata, user nonroot) and pushed to the plane's registry under `aicr-images/`, the path
// the process kubelet pulls AICR's images from (its mirror of ghcr.io/nvidia). AICR's Jobs then run from their own
// root filesystem, where no volume over a build-machine path (a tools cache under /tmp) can hide the binary.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { aicrImage, aicrValidatorImage, type Arch, buildImage, pushImage } from "@aicr/image"
import { OciClient } from "@aicr/oras"
import { toolsCache } from "../tools"

/** The repository prefix under the registry: `<registry>/aicr-images/nvidia/aicr:<version>`. */
export const AICR_MIRROR_PREFIX = "aicr-images"

const hostArch = (): Arch => (process.arch === "arm64" ? "arm64" : "amd64")

/**
 * Builds and pushes the AICR images of each built version to `registry`; returns the mirror (`<registry>/aicr-images`)
 * and the versions pushed. A version without a local build is left out (its pods then fail to pull, saying so).
 */
export const pushAicrImages = async (registry: string, versions: ReadonlyArray<string>, outDir: string): Promise<{ mirror: string; pushed: string[] }> => {
  const mirror = `${registry}/${AICR_MIRROR_PREFIX}`
  const client = new OciClient({ userAgent: "aicr-harness" })
  const pushed: string[] = []
  try {
    for (const version of new Set(versions)) {
      const dir = join(toolsCache(), `aicr-${version}`)
      if (!existsSync(join(dir, ".complete"))) continue
      const cli = await buildImage({ ...aicrImage(dir, version, [hostArch()]), name: `aicr-${version}` }, { outDir })
      await pushImage(client, cli, `${mirror}/nvidia/aicr`, version)
      const validator = await buildImage({ ...aicrValidatorImage(dir, version, [hostArch()]), name: `aicr-validators-deployment-${version}` }, { outDir })
      await pushImage(client, validator, `${mirror}/nvidia/aicr-validators/deployment`, version)
      pushed.push(version)
    }
  } finally {
    await client.close()
  }
  return { mirror, pushed }
}
