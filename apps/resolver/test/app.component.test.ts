// The app's informers are exactly its contract's watches (kind and label selector): what the contract says it
// watches is what it watches.
import { contractMismatch, informersOfApp } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { resolverApp } from "../src/app"
import { contract } from "../src/contract"

describe("resolver app", () => {
  it.effect("makes one informer per watch of its contract, with the contract's selectors, and no other", () =>
    Effect.gen(function* () {
      const informers = yield* informersOfApp(resolverApp(), [
        "--aicr-version",
        "v0.11.1",
        "--registry",
        "oci://registry.example/aicr",
        "--component-namespaces",
        "gpu-operator",
      ])
      expect(informers.length).toBeGreaterThanOrEqual(contract.watches.length)
      expect(contractMismatch(contract, informers)).toEqual([])
    }),
  )

  it.effect("does not start without --component-namespaces, and says which value is missing", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(informersOfApp(resolverApp(), ["--aicr-version", "v0.11.1", "--registry", "oci://registry.example/aicr"]))
      expect(String(error)).toContain("--component-namespaces (or AICR_COMPONENT_NAMESPACES) is required")
    }),
  )
})
