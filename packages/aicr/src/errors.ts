/**
 * AICR's structured errors and exit codes → the operator's `AICR*` reasons.
 *
 * AICR prints `[CODE] message: cause` chains (pkg/errors) and exits with the code of the *outermost* structured error
 * (aicr-cli.md §1.6). `recipe` wraps every build error in INTERNAL, so the exit code alone hides the cause: the
 * innermost code of the chain is the one that names it (`[INTERNAL] error building recipe: … [INVALID_REQUEST] invalid
 * accelerator type: h9000`). `reasonOf` therefore prefers the innermost code, then the exit code.
 */

/** The reasons an AICR run can end with (operator.md §3.2, AICR Job runbook). */
export type AicrJobReason = "AICRInvalidRequest" | "AICRNotFound" | "AICRUnauthorized" | "AICRInternal" | "AICRTimeout"

/** AICR's error codes (pkg/errors) and their exit codes (pkg/errors/exitcode.go). */
export const AICR_ERROR_CODES = {
  INVALID_REQUEST: 2,
  METHOD_NOT_ALLOWED: 2,
  NOT_FOUND: 3,
  UNAUTHORIZED: 4,
  TIMEOUT: 5,
  SERVICE_UNAVAILABLE: 6,
  RATE_LIMIT_EXCEEDED: 7,
  INTERNAL: 8,
} as const
export type AicrErrorCode = keyof typeof AICR_ERROR_CODES

const codeReason: Record<AicrErrorCode, AicrJobReason> = {
  INVALID_REQUEST: "AICRInvalidRequest",
  METHOD_NOT_ALLOWED: "AICRInvalidRequest",
  NOT_FOUND: "AICRNotFound",
  UNAUTHORIZED: "AICRUnauthorized",
  TIMEOUT: "AICRTimeout",
  SERVICE_UNAVAILABLE: "AICRInternal",
  RATE_LIMIT_EXCEEDED: "AICRInternal",
  INTERNAL: "AICRInternal",
}

/** Exit code → reason when no structured error could be read. 1 is urfave's own (unknown or missing flag). */
const exitReason = (exitCode: number): AicrJobReason => {
  switch (exitCode) {
    case 1:
    case 2:
      return "AICRInvalidRequest"
    case 3:
      return "AICRNotFound"
    case 4:
      return "AICRUnauthorized"
    case 5:
      return "AICRTimeout"
    default:
      return "AICRInternal"
  }
}

/** A parsed AICR failure: every code of the chain (outermost first), the innermost message, and the full text. */
export interface AicrError {
  readonly codes: ReadonlyArray<AicrErrorCode>
  /** The text after the innermost `[CODE]`: the actual cause. */
  readonly cause: string
  readonly text: string
  readonly exitCode: number | undefined
}

const CODE_RE = /\[([A-Z_]+)\]/gu

/** Parses an AICR error text (`[CODE] msg: [CODE] cause`). Unknown or missing codes yield an empty chain. */
export const parseAicrErrorText = (text: string, exitCode?: number): AicrError => {
  const codes: AicrErrorCode[] = []
  let cause = text.trim()
  for (const m of text.matchAll(CODE_RE)) {
    const code = m[1] as AicrErrorCode
    if (!(code in AICR_ERROR_CODES)) continue
    codes.push(code)
    cause = text.slice((m.index ?? 0) + m[0].length).trim()
  }
  return { codes, cause, text: text.trim(), exitCode }
}

/**
 * Finds AICR's failure in its `--log-json` stderr (or a termination message holding it): the last
 * `{"level":"ERROR","msg":"command failed","error":…,"exitCode":n}` line. Lines that are not JSON (a truncated or
 * foreign output) are skipped; without such a line the last non-empty line stands as the text.
 */
export const parseAicrFailure = (output: string, exitCode?: number): AicrError => {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
  for (let i = lines.length - 1; i >= 0; i--) {
    const parsed = tryJson(lines[i]!)
    if (parsed === undefined || typeof parsed !== "object" || parsed === null) continue
    const rec = parsed as Record<string, unknown>
    if (rec["level"] !== "ERROR" || typeof rec["error"] !== "string") continue
    const code = typeof rec["exitCode"] === "number" ? rec["exitCode"] : exitCode
    return parseAicrErrorText(rec["error"], code)
  }
  return parseAicrErrorText(lines.at(-1) ?? "", exitCode)
}

const tryJson = (line: string): unknown => {
  if (!line.startsWith("{")) return undefined
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

/**
 * A Kubernetes API refusal of AICR's own identity, as client-go words it inside AICR's INTERNAL wrap (AICR wraps every
 * API error as INTERNAL: `[INTERNAL] failed to apply ConfigMap: configmaps "x" is forbidden: User "…" cannot patch
 * resource …`): 403 Forbidden from RBAC, or 401 Unauthorized.
 */
const KUBE_REFUSED = /\bis forbidden: User "[^"]*" cannot |\bthe server has asked for the client to provide credentials\b/u

/**
 * The reason of a failure: a Kubernetes refusal of the Job's identity is `AICRUnauthorized` whatever code wraps it
 * (the fix is that identity's RBAC, [I] ADR 20261203-aicr-job-reasons); else the innermost known code names the
 * cause; else the exit code.
 */
export const reasonOf = (e: AicrError): AicrJobReason => {
  if (KUBE_REFUSED.test(e.text)) return "AICRUnauthorized"
  const inner = e.codes.at(-1)
  if (inner !== undefined) return codeReason[inner]
  return e.exitCode === undefined ? "AICRInternal" : exitReason(e.exitCode)
}

/** True for the codes worth retrying: AICR could not reach a service, or was rate limited. */
export const isTransient = (e: AicrError): boolean => e.codes.some((c) => c === "SERVICE_UNAVAILABLE" || c === "RATE_LIMIT_EXCEEDED")

/** An invalid criterion, as AICR words it: `invalid accelerator type: h9000`. */
export interface InvalidCriterion {
  readonly field: "service" | "accelerator" | "intent" | "os" | "platform"
  readonly value: string
}

const INVALID_RE = /invalid (service|accelerator|intent|os|platform) type: ?(\S*)/iu

export const invalidCriterionOf = (e: AicrError): InvalidCriterion | undefined => {
  const m = INVALID_RE.exec(e.text)
  if (m === null) return undefined
  return { field: m[1]!.toLowerCase() as InvalidCriterion["field"], value: m[2] ?? "" }
}
