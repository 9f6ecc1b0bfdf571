// Workspace boundaries are enforced by lint, not hoped for (design/style.md §B.1, ADR 20261202-workspace-layout).
import nx from "@nx/eslint-plugin"
import tseslint from "typescript-eslint"

const banned = ["@kubernetes/client-node", "pino"]

// Production code: each tag may import only the tags listed. Tests (test/ folders and *.test.ts) may in addition
// import the testing package (FakeKube, the local control plane); nothing else is relaxed for them.
const constraints = [
  {
    sourceTag: "type:controller",
    onlyDependOnLibsWithTags: ["type:api", "type:runtime", "type:kube", "type:logging", "type:util", "type:domain"],
    bannedExternalImports: banned,
  },
  { sourceTag: "type:cli", onlyDependOnLibsWithTags: ["type:api", "type:kube", "type:util", "type:domain"], bannedExternalImports: banned },
  { sourceTag: "type:runtime", onlyDependOnLibsWithTags: ["type:kube", "type:logging", "type:util", "type:api"], bannedExternalImports: ["pino"] },
  { sourceTag: "type:kube", onlyDependOnLibsWithTags: ["type:api", "type:util", "type:logging"], bannedExternalImports: ["pino"] },
  { sourceTag: "type:api", onlyDependOnLibsWithTags: ["type:api", "type:util"], bannedExternalImports: banned },
  { sourceTag: "type:util", onlyDependOnLibsWithTags: ["type:util"], bannedExternalImports: banned },
  { sourceTag: "type:logging", onlyDependOnLibsWithTags: ["type:util"], bannedExternalImports: ["@kubernetes/client-node"] },
  { sourceTag: "type:domain", onlyDependOnLibsWithTags: ["type:api", "type:util", "type:domain"], bannedExternalImports: banned },
  {
    sourceTag: "type:testing",
    onlyDependOnLibsWithTags: ["type:api", "type:util", "type:kube", "type:runtime", "type:logging", "type:domain", "type:testing"],
  },
  { sourceTag: "type:e2e", onlyDependOnLibsWithTags: ["*"] },
]

// The testing package builds on api, kube, runtime and logging, so a test of those packages importing it closes a
// project cycle (e.g. kube -> api -> testing -> kube) that exists only through test files. Production code cannot
// import testing at all, and the tags above already forbid every other cycle, so Nx may ignore cycles via testing.
// The image builder (itself test tooling) is used by the harness's process kubelet and tests itself on the harness.
const libs = ["api", "conditions", "contracts", "kube", "runtime", "logging", "oras"]
const testOnlyCycles = [
  ...libs.map((p) => [p, "testing"]),
  ["image", "testing"],
  // Pairs inside one tag (api/contracts) stay checked: nothing else forbids a cycle between them.
  ...libs.flatMap((a) => libs.filter((b) => a !== b && !(["api", "contracts"].includes(a) && ["api", "contracts"].includes(b))).map((b) => [a, b])),
]

// Tests and benchmarks build apps, images and the plugin binaries as they ship, with hack/build-{apps,images,plugin}.ts,
// and e2e stories start the operator as `up` does, with hack/local-operator.ts and hack/local-chart.ts (no project: a
// relative import).
const buildApps = "^(\\.\\./)+hack/(build-(apps|images|plugin)|local-operator|local-chart)$"

const boundaries = (forTests) => ({
  enforceBuildableLibDependency: false,
  allow: forTests ? [buildApps] : [],
  ignoredCircularDependencies: testOnlyCycles,
  depConstraints: forTests
    ? constraints.map((c) => ({ ...c, onlyDependOnLibsWithTags: [...new Set([...c.onlyDependOnLibsWithTags, "type:testing"])] }))
    : constraints,
})
const common = {
  "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
  "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
}
const testFiles = ["**/test/**/*.ts", "**/*.test.ts", "**/bench/**/*.ts"]

// Shipped code may `import()` only modules of ours: in an esbuild bundle with --splitting (how apps ship,
// hack/build-apps.ts) the dynamic import of a CommonJS package yields only `default` (evanw/esbuild#3245), so its
// named exports are undefined there while Node, tsx and vitest resolve them. Re-export the package from a module of
// ours and import that (packages/kube/src/yaml.ts).
const dynamicImportOfPackage = {
  selector: "ImportExpression > Literal.source[value=/^[^.]/]",
  message: "import() a module of ours that re-exports the package (esbuild --splitting drops a CommonJS package's named exports)",
}

export default [
  { ignores: ["**/node_modules/**", "**/dist/**", "**/.nx/**", "crds/**", "charts/**", "coverage/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs"],
    ignores: testFiles,
    plugins: { "@nx": nx },
    rules: {
      ...common,
      "@nx/enforce-module-boundaries": ["error", boundaries(false)],
      "no-restricted-syntax": ["error", dynamicImportOfPackage],
    },
  },
  {
    files: testFiles,
    plugins: { "@nx": nx },
    rules: {
      ...common,
      "@nx/enforce-module-boundaries": ["error", boundaries(true)],
    },
  },
]
