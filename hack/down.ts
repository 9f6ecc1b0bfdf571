/**
 * `aicr-dev down`: stops what `aicr-dev up --detach` left running: the operator's processes, Argo CD, then the control
 * plane.
 */
import { join } from "node:path"
import { stopArgoCd, stopRecorded } from "@aicr/testing/harness"
import { stopLocalOperator } from "./local-operator"

const dir = process.env.AICR_LOCAL_DIR ?? join(import.meta.dirname, "..", ".aicr", "local")
const operator = await stopLocalOperator(dir)
const argocd = await stopArgoCd(dir)
const plane = await stopRecorded(dir)
process.stderr.write(`[aicr-dev] stopped ${operator} operator processes, ${argocd} Argo CD processes and ${plane} control-plane processes of ${dir}\n`)
