export { makeFakeKube, type FakeKube, type FakeKubeOptions, type RecordedWrite, type WriteVerb } from "./fake-kube"
export { DEFAULT_LIST_MAP_KEYS, type ListMapKeys } from "./ssa"
export { WidgetKind, widgetCrd, ssaScenarios, runSsaScenario, type SsaScenario, type SsaStep, type SsaOutcome } from "./ssa-scenarios"
export { settle } from "./settle"
