/** `aicr-dev down`: stops what `aicr-dev up --detach` left running: the operator's processes, then the control plane. */
import { join } from "node:path"
import { stopRecorded } from "@aicr/testing/harness"
import { stopLocalOperator } from "./local-operator"

const dir = process.env.AICR_LOCAL_DIR ?? join(import.meta.dirname, "..", ".aicr", "local")
const operator = await stopLocalOperator(dir)
const plane = await stopRecorded(dir)
process.stderr.write(`[aicr-dev] stopped ${operator} operator processes and ${plane} control-plane processes of ${dir}\n`)
