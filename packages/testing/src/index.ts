/**
 * @aicr/testing — test helpers. The root entry holds in-process helpers (FakeKube); the local control-plane harness
 * lives behind the `@aicr/testing/harness` subpath so unit tests never load it.
 */
export * from "./fake-kube/index"
