// Workspace boundaries are enforced by lint, not hoped for (design/style.md §B.1, ADR 20261202-workspace-layout).
import nx from "@nx/eslint-plugin"
import tseslint from "typescript-eslint"

const banned = ["@kubernetes/client-node", "pino"]

export default [
  { ignores: ["**/node_modules/**", "**/dist/**", "**/.nx/**", "crds/**", "charts/**", "coverage/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs"],
    plugins: { "@nx": nx },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@nx/enforce-module-boundaries": [
        "error",
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            {
              sourceTag: "type:controller",
              onlyDependOnLibsWithTags: ["type:api", "type:runtime", "type:kube", "type:logging", "type:util", "type:domain", "type:testing"],
              bannedExternalImports: banned,
            },
            { sourceTag: "type:cli", onlyDependOnLibsWithTags: ["type:api", "type:kube", "type:util", "type:domain"], bannedExternalImports: banned },
            { sourceTag: "type:runtime", onlyDependOnLibsWithTags: ["type:kube", "type:logging", "type:util", "type:api"], bannedExternalImports: ["pino"] },
            { sourceTag: "type:kube", onlyDependOnLibsWithTags: ["type:api", "type:util", "type:logging"], bannedExternalImports: ["pino"] },
            { sourceTag: "type:api", onlyDependOnLibsWithTags: ["type:api", "type:util"], bannedExternalImports: banned },
            { sourceTag: "type:util", onlyDependOnLibsWithTags: ["type:util"], bannedExternalImports: banned },
            { sourceTag: "type:logging", onlyDependOnLibsWithTags: ["type:util"], bannedExternalImports: ["@kubernetes/client-node"] },
            { sourceTag: "type:domain", onlyDependOnLibsWithTags: ["type:api", "type:util", "type:domain"], bannedExternalImports: banned },
            { sourceTag: "type:testing", onlyDependOnLibsWithTags: ["type:api", "type:util", "type:kube", "type:runtime", "type:logging", "type:domain", "type:testing"] },
            { sourceTag: "type:e2e", onlyDependOnLibsWithTags: ["*"] },
          ],
        },
      ],
    },
  },
]
