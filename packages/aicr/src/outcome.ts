/**
 * How an AICR Job ended, from the Job and its pod as the API server reports them: the exit code, the termination
 * message (AICR's own failure line, `FallbackToLogsOnError`) and the Job's conditions. Pure.
 */
import { type AicrJobReason, isTransient, parseAicrFailure, reasonOf } from "./errors"

export interface JobView {
  readonly status?: {
    readonly succeeded?: number
    readonly failed?: number
    readonly active?: number
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string }>
  }
  readonly spec?: { readonly suspend?: boolean }
}

export interface PodView {
  readonly status?: {
    readonly phase?: string
    readonly containerStatuses?: ReadonlyArray<{
      readonly name: string
      readonly state?: {
        readonly waiting?: { readonly reason?: string; readonly message?: string }
        readonly terminated?: { readonly exitCode: number; readonly reason?: string; readonly message?: string }
      }
    }>
  }
}

export type JobOutcome =
  | { readonly _tag: "Running"; readonly detail: string }
  | { readonly _tag: "Succeeded"; readonly terminationMessage: string }
  | { readonly _tag: "Failed"; readonly reason: AicrJobReason; readonly transient: boolean; readonly message: string; readonly exitCode: number | undefined }

const cond = (job: JobView, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === "True")

/** The message for a condition: AICR's cause, one line, bounded. */
const oneLine = (s: string): string => s.replace(/\s+/gu, " ").trim().slice(0, 600)

export const jobOutcome = (job: JobView, pod: PodView | undefined): JobOutcome => {
  const container = pod?.status?.containerStatuses?.find((c) => c.name === "aicr")
  const terminated = container?.state?.terminated
  if (cond(job, "Complete") !== undefined || (job.status?.succeeded ?? 0) > 0) {
    return { _tag: "Succeeded", terminationMessage: terminated?.message ?? "" }
  }
  // Kubernetes ≥ 1.31 sets FailureTarget when a Job is bound to fail (deadline, backoff limit) and Failed only once its
  // pods have terminated; in between the Job already counts failed pods whose status may be gone.
  const failed = cond(job, "Failed") ?? cond(job, "FailureTarget")
  if (failed !== undefined && failed.reason === "DeadlineExceeded") {
    const waiting = container?.state?.waiting
    const why = waiting?.reason !== undefined ? `; the pod was ${waiting.reason}${waiting.message ? `: ${oneLine(waiting.message)}` : ""}` : ""
    return { _tag: "Failed", reason: "AICRTimeout", transient: false, message: `ran past its deadline${why}`, exitCode: undefined }
  }
  if (failed !== undefined || (job.status?.failed ?? 0) > 0) {
    if (terminated === undefined) {
      return {
        _tag: "Failed",
        reason: "AICRInternal",
        transient: true,
        message: `failed before AICR ran: ${oneLine(failed?.message ?? failed?.reason ?? "no pod status")}`,
        exitCode: undefined,
      }
    }
    const e = parseAicrFailure(terminated.message ?? "", terminated.exitCode)
    const text = e.text === "" ? `exited ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ""}` : e.text
    return {
      _tag: "Failed",
      reason: reasonOf(e),
      transient: isTransient(e),
      message: `exited ${terminated.exitCode}: ${oneLine(text)}`,
      exitCode: terminated.exitCode,
    }
  }
  const waiting = container?.state?.waiting
  if (waiting?.reason !== undefined) return { _tag: "Running", detail: `pod ${waiting.reason}${waiting.message ? `: ${oneLine(waiting.message)}` : ""}` }
  if (job.spec?.suspend === true) return { _tag: "Running", detail: "starting" }
  return { _tag: "Running", detail: pod?.status?.phase === "Running" ? "running" : "pending" }
}

/** The output a `-o cm://` run left in its ConfigMap: `data.format` picks `snapshot.<format>`, else any `snapshot.*`. */
export const outputOf = (data: Readonly<Record<string, string>> | undefined): string | undefined => {
  if (data === undefined) return undefined
  const format = data["format"]
  if (format !== undefined && data[`snapshot.${format}`] !== undefined) return data[`snapshot.${format}`]
  return data["snapshot.json"] ?? data["snapshot.yaml"] ?? data["snapshot.txt"]
}
