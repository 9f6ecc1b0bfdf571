// @aicr/testing/harness: the local control plane every integration and e2e test runs on (test-infra.md §3, §4):
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok fake nodes and an OCI registry, as local
// processes on loopback, and Argo CD on demand (startArgoCd). Tests get a running plane from the vitest globalSetup via
// `inject("harness")`.
export type { HarnessInfo, KubeTarget } from "./types"
export { type ControlPlane, type ControlPlaneOptions, runningPlane, startControlPlane, stopRecorded } from "./plane"
export { type ApiServer, type ApiServerOptions, type Etcd, type EtcdOptions, SERVICE_ACCOUNT_ISSUER, startApiServer, startEtcd } from "./apiserver"
export { htpasswdLine, type Registry, type RegistryOptions, startRegistry } from "./registry"
export { KWOK_NODE_ANNOTATION, startControllerManager, startKwok, startProcessKubelet, startScheduler } from "./components"
export {
  addNode,
  addNodes,
  DEFAULT_GPU_NODES,
  DEFAULT_NODES,
  DEFAULT_SYSTEM_NODES,
  GPU_TAINT,
  gpuNode,
  type NodeSpec,
  nodeObject,
  REGION,
  removeNode,
  systemNode,
  type Taint,
  waitForNodesReady,
} from "./nodes"
export {
  writesByName,
  applyManifests,
  deleteClusterScoped,
  type ApplyOptions,
  type AuditEvent,
  createNamespace,
  createServiceAccountToken,
  eventually,
  expectOk,
  FIELD_MANAGER,
  kubeconfigFor,
  kubeRequest,
  type KubeRequest,
  type KubeResponse,
  objectPath,
  readAuditEvents,
  resourceFor,
  type TokenOptions,
} from "./kube"
export { type Condition, conditionIn, type ConditionSource, type ConditionStatus, expectCondition, untilCondition } from "./conditions"
export { loadManifests, parseManifests } from "./manifests"
export {
  EDITOR_STAMP_FILE,
  installApprovalPolicies,
  installEditorStamp,
  type PolicyInstallOptions,
  POLICIES_DIR,
  removeApprovalPolicies,
  removeEditorStamp,
} from "./policies"
export { AUDIT_READS_GROUP, COMPONENT_USERS, componentUser, DEFAULT_USERS, type StaticUser, writeKubeconfig } from "./auth"
export { adoptProc, HarnessError, pidAlive, type Proc, processesOfPod, spawnProc, type SpawnOptions, tailFile } from "./proc"
export { aicrBinary, argoCdCrdsDir, readVersions, repoRoot, toolPath, type ToolVersions } from "./tools"
export { defaultHostFor, h100Host, HOST_PROFILE_ANNOTATION, HostProfile, hostProfileOf, setHostProfile, systemHost } from "./kubelet/hosts"
export { AICR_IMAGES, CLAIMED_REPOSITORIES, CUDA_BASE_IMAGE, type ImageRule, type ImageRuntime, KUBELET_IMAGES, lookupImage } from "./kubelet/images"
export { CONTAINER_ID_PREFIX, KUBELET_FIELD_MANAGER, startKubelet } from "./kubelet/kubelet"
export { HOLD_LABEL } from "./kubelet/stages"
export { type IsolatedHelm, isolatedHelm } from "./helm"
export {
  addRepositoryCredential,
  ARGOCD_CONTROLLER,
  ARGOCD_NAMESPACE,
  ARGOCD_PROCS,
  type ArgoCd,
  type ArgoCdInfo,
  type ArgoCdOptions,
  installArgoCdObjects,
  RESOURCES_FINALIZER,
  type RepositoryCredential,
  repositoryCredentialSecret,
  RUNTIME_PREFIX,
  runtimeOciPrefix,
  runtimeRepositories,
  runtimeSourceRepos,
  startArgoCd,
  stopArgoCd,
} from "./argocd"
export {
  applicationNotReady,
  type ApplicationView,
  deleteApplication,
  getApplication,
  type HelmApplication,
  helmApplication,
  type OciApplication,
  ociApplication,
  packageDemoChart,
  waitForApplication,
} from "./argocd-apps"
export {
  type AwsEmulator,
  type AwsFixtures,
  type AwsKeys,
  type AwsOptions,
  type MintedToken,
  motoPython,
  type PodIdentityAgent,
  startAws,
  startPodIdentityAgent,
} from "./aws"
export { recordedProcess, standInProcess, standInRequest } from "./processes"
