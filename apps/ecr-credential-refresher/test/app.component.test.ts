// The app's informers are exactly its contract's watches (kind and label selector): what the contract says it
// watches is what it watches.
import { contractMismatch, informersOfApp } from "@aicr/testing"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { ecrCredentialRefresherApp } from "../src/app"
import { contract } from "../src/contract"

describe("ecr-credential-refresher app", () => {
  it.effect("makes one informer per watch of its contract, with the contract's selectors, and no other", () =>
    Effect.gen(function* () {
      const informers = yield* informersOfApp(ecrCredentialRefresherApp(), ["--registry", "oci://registry.example/aicr", "--auth-provider", "static"])
      expect(informers.length).toBeGreaterThanOrEqual(contract.watches.length)
      expect(contractMismatch(contract, informers)).toEqual([])
    }),
  )
})
