/**
 * The YAML parser of kubeconfig files, loaded only when a kubeconfig is YAML (`await import("./yaml")`): in-cluster
 * and JSON kubeconfigs never load it.
 *
 * A dynamic `import()` must target an ES module of ours, never a CommonJS package such as `yaml` itself: in an
 * esbuild bundle with `--splitting` (how apps ship, `hack/build-apps.ts`) the chunk of a dynamically imported
 * CommonJS module exports only `default`, so `(await import("yaml")).parse` is `undefined` there (evanw/esbuild#3245)
 * while it works under Node, tsx and vitest. Re-exported from here, esbuild converts the CommonJS exports statically.
 */
export { parse } from "yaml"
