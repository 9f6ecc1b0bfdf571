// An in-memory stand-in for the `Registry` service: mirrors a plan into a map of tags (deterministic digests),
// skips what it already holds, answers what a tag holds from the same map, and fails with whatever error a test queues.
import { digestOf } from "@aicr/oras"
import { Effect } from "effect"
import type { RegistryShape } from "../../src/act"
import type { MirrorError } from "../../src/errors"
import type { MirroredArtifact, MirrorResult } from "../../src/mirror"
import type { MirrorPlan } from "../../src/plan"

export const makeFakeRegistry = () => {
  const tags = new Map<string, string>()
  const failures: MirrorError[] = []
  const checkFailures: MirrorError[] = []
  let calls = 0
  let checks = 0
  const put = (key: string, repository: string, tag: string, content: string): MirroredArtifact => {
    const ref = `${repository}:${tag}`
    const digest = tags.get(ref) ?? digestOf(`${ref}#${content}`)
    const action = tags.has(ref) ? "present" : "pushed"
    tags.set(ref, digest)
    return { key, ref: `${ref}@${digest}`, digest, action }
  }
  const service: RegistryShape = {
    mirror: (plan: MirrorPlan) =>
      Effect.suspend(() => {
        calls++
        const failure = failures.shift()
        if (failure !== undefined) return Effect.fail(failure)
        const charts = plan.items.map((i) => put(i.key, i.repository, i.tag, i._tag === "Chart" ? i.source.original : i.files.map((f) => f.path).join(",")))
        const bundle = put("bundle", plan.bundle.repository, plan.bundle.tag, JSON.stringify(plan.bundle.files))
        const all = [...charts, bundle]
        const pushed = all.filter((a) => a.action === "pushed").length
        return Effect.succeed<MirrorResult>({
          inputDigest: plan.inputDigest,
          charts,
          bundle,
          bytesUploaded: pushed * 1000,
          pushed,
          present: all.length - pushed,
        })
      }),
    resolveTags: (references) =>
      Effect.suspend(() => {
        checks++
        const failure = checkFailures.shift()
        if (failure !== undefined) return Effect.fail(failure)
        return Effect.succeed(references.map((reference) => ({ reference, digest: tags.get(reference) })))
      }),
  }
  return {
    service,
    tags,
    calls: () => calls,
    /** How many times the recorded tags were checked. */
    checks: () => checks,
    /** The next mirror calls fail with these errors, in order. */
    failNext: (...errors: MirrorError[]) => void failures.push(...errors),
    /** The next checks of recorded tags fail with these errors, in order. */
    failNextCheck: (...errors: MirrorError[]) => void checkFailures.push(...errors),
  }
}
