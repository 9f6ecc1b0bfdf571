/**
 * ecr-credential-refresher's process entry point.
 *
 * Run: `node ecr-credential-refresher.js --registry oci://<account>.dkr.ecr.<region>.amazonaws.com/aicr/<cluster>
 *   --auth-provider aws|static [--repo-creds-secret aicr-registry] [--engine-namespace argocd]
 *   [--docker-config-secret aicr-registry-docker-config] [runtime flags]`.
 */
import { main } from "@aicr/runtime"
import { ecrCredentialRefresherApp } from "./app"

main(ecrCredentialRefresherApp)
