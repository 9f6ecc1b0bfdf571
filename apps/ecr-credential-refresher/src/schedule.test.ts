import { describe, expect, it } from "vitest"
import { DEFAULT_REFRESH_INTERVAL_MS, expiryMargin, MIN_WAIT_MS, refreshAt } from "./schedule"

const H = 3_600_000
const T0 = Date.parse("2026-12-02T10:00:00Z")

describe("refreshAt", () => {
  it.each([
    { name: "a 12 h ECR token refreshes at the 6 h interval (no jitter)", lifetime: 12 * H, jitter: 0, want: 6 * H },
    { name: "jitter moves it up to 10 % of the wait earlier", lifetime: 12 * H, jitter: 0.5, want: 5.7 * H },
    { name: "the largest jitter stays above 90 % of the wait", lifetime: 12 * H, jitter: 0.999999, want: Math.floor(6 * H * (1 - 0.0999999)) },
    { name: "a 4 h token refreshes a quarter of its lifetime before expiry, not at 6 h", lifetime: 4 * H, jitter: 0, want: 3 * H },
    { name: "the margin is at most an hour: a 7 h token refreshes at 6 h", lifetime: 7 * H, jitter: 0, want: 6 * H },
    { name: "a 20 s test token refreshes after 15 s", lifetime: 20_000, jitter: 0, want: 15_000 },
    { name: "a 1 s token still waits a second, never a hot loop", lifetime: 1_000, jitter: 0.9, want: MIN_WAIT_MS },
  ])("$name", ({ lifetime, jitter, want }) => {
    expect(refreshAt(T0, T0 + lifetime, DEFAULT_REFRESH_INTERVAL_MS, jitter) - T0).toBe(Math.floor(want))
  })

  it("is always before the expiry minus the margin, for every jitter", () => {
    for (const lifetime of [5_000, 60_000, H, 12 * H]) {
      for (let j = 0; j < 1; j += 0.05) {
        const at = refreshAt(T0, T0 + lifetime, DEFAULT_REFRESH_INTERVAL_MS, j)
        expect(at).toBeLessThanOrEqual(Math.max(T0 + MIN_WAIT_MS, T0 + lifetime - expiryMargin(lifetime)))
        expect(at).toBeGreaterThanOrEqual(T0 + MIN_WAIT_MS)
      }
    }
  })

  it("honours a shorter refresh interval", () => {
    expect(refreshAt(T0, T0 + 12 * H, 30 * 60_000, 0) - T0).toBe(30 * 60_000)
  })
})
