import { ClusterRuntimeKind, Core, LABEL_ROLE, RegistryCredentialsReady, ROLE_AICR_JOB } from "@aicr/api"
import { Contract, Watch } from "./contract"

/** ecr-credential-refresher: mints ECR tokens into Argo CD's repo-creds Secret and pushing Jobs' per-run Secrets. */
export const ecrCredentialRefresher = Contract.make({
  controller: "ecr-credential-refresher",
  fieldManager: "aicr-ecr-credential-refresher",
  reconciles: ClusterRuntimeKind,
  watches: [
    Watch.self(ClusterRuntimeKind),
    Watch.mapped(Core.Secret, "singleton", "the repo-creds Secret (by name) and its token-expires-at annotation"),
    Watch.mapped(Core.Job, "singleton", "pushing Jobs that need a per-run Secret", `${LABEL_ROLE}=${ROLE_AICR_JOB}`),
  ],
  reads: { conditions: [], kinds: [Core.Secret, Core.Job] },
  writes: [{ kind: ClusterRuntimeKind, conditions: [RegistryCredentialsReady], statusKeys: ["credentials"] }],
  creates: [{ kind: Core.Secret, why: "per-run credential Secrets owned by pushing Jobs; updates the repo-creds Secret by name" }],
})
