import { defineConfig } from "vitest/config"

// Test tiers are selected by file suffix (design/style.md §B.7):
//   unit      *.test.ts            pure functions, in-memory fakes
//   component *.component.test.ts  one controller's reconcile against FakeKube
//   int       *.int.test.ts        the real kube-apiserver + etcd + kwok + OCI registry (never skipped)
//   e2e       *.e2e.test.ts        user stories on the whole local control plane (never skipped)
const notUnit = ["**/*.component.test.ts", "**/*.int.test.ts", "**/*.e2e.test.ts", "**/node_modules/**", "**/dist/**"]

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "hack/**/*.test.ts"],
          exclude: notUnit,
        },
      },
      {
        test: {
          name: "component",
          include: ["packages/*/test/**/*.component.test.ts", "apps/*/test/**/*.component.test.ts"],
        },
      },
      {
        test: {
          name: "int",
          include: ["packages/*/test/**/*.int.test.ts", "apps/*/test/**/*.int.test.ts", "hack/**/*.int.test.ts"],
          globalSetup: ["packages/testing/src/harness/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["e2e/**/*.e2e.test.ts"],
          globalSetup: ["packages/testing/src/harness/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
})
