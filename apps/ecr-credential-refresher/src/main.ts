/**
 * ecr-credential-refresher's process entry point.
 *
 * Run: `node ecr-credential-refresher.js --registry oci://<account>.dkr.ecr.<region>.amazonaws.com/aicr/<cluster>
 *   --auth-provider aws|static [--repo-creds-secret aicr-registry] [--engine-namespace argocd]
 *   [--docker-config-secret aicr-registry-docker-config] [runtime flags]`.
 */
import { main, siblingProcess } from "@aicr/runtime"
import { ecrCredentialRefresherApp } from "./app"

// As shipped, every mint runs in the bundle's mint process (mint-process.mjs); from sources there is none.
main(ecrCredentialRefresherApp({ mintProcess: siblingProcess(import.meta.url, "mint-process") }))
