import { ClusterRuntimeKind, Core, RegistryCredentialsReady } from "@aicr/api"
import { Contract, Watch } from "./contract"

/**
 * ecr-credential-refresher: keeps the registry credentials the operator and Argo CD use. With `aws` it mints ECR
 * tokens into Argo CD's repo-creds Secret and the docker-config Secret the pushing components mount; with `static`
 * it checks the admin's docker-config Secret. Both Secrets are read and written by name only
 * (docs/adr/20261202-registry-credentials.md); per-run Job Secrets are copied from the docker-config Secret by
 * whoever creates the Job.
 */
export const ecrCredentialRefresher = Contract.make({
  controller: "ecr-credential-refresher",
  fieldManager: "aicr-ecr-credential-refresher",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(Core.Secret, "singleton", "the repo-creds Secret and the docker-config Secret, each by name (field selector metadata.name)"),
  ],
  reads: { conditions: [], kinds: [Core.Secret] },
  writes: [{ kind: ClusterRuntimeKind, conditions: [RegistryCredentialsReady], statusKeys: ["credentials"] }],
  creates: [{ kind: Core.Secret, why: "aws: the repo-creds Secret in the Argo CD namespace and the docker-config Secret in the operator namespace, by name" }],
})
