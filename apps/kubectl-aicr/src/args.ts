/**
 * Command line of `kubectl aicr` (operator.md §7): `COMMAND ROLLOUT [flags]`, `reproduce [PLAN] [flags]`, `help`,
 * `completion bash|zsh`. Flags may come before or after the name and every command accepts every flag; `--help`
 * works on every command. Pure: parsing, help texts, durations.
 */

export const COMMANDS = ["describe", "watch", "approve", "revoke", "acknowledge", "evidence", "reproduce", "completion", "help"] as const
export type Command = (typeof COMMANDS)[number]

export interface Flags {
  readonly kubeconfig?: string | undefined
  readonly context?: string | undefined
  readonly output?: "json" | "yaml" | undefined
  readonly operatorNamespace: string
  readonly reason?: string | undefined
  readonly expires?: string | undefined
  readonly dir: string
  readonly step?: ReadonlyArray<string> | undefined
  readonly plan?: string | undefined
  /** describe --watch: follow the rollout live (as the watch command). */
  readonly watch?: boolean | undefined
}

export type Parsed =
  | { readonly _tag: "Run"; readonly command: Exclude<Command, "help">; readonly name: string | undefined; readonly flags: Flags }
  | { readonly _tag: "Help"; readonly command: Command | undefined }
  | { readonly _tag: "Usage"; readonly message: string }

/** Flag → whether it takes a value. */
export const FLAGS = {
  kubeconfig: true,
  context: true,
  output: true,
  "operator-namespace": true,
  reason: true,
  expires: true,
  dir: true,
  step: true,
  plan: true,
  watch: false,
  help: false,
} as const
type FlagName = keyof typeof FLAGS
const SHORT: Record<string, FlagName> = { o: "output", h: "help", w: "watch" }

export const MAX_REASON = 1024

const COMMON = `Flags (every command accepts every flag, before or after the name):
      --kubeconfig PATH          kubeconfig file (default $KUBECONFIG, then ~/.kube/config)
      --context NAME             kubeconfig context (default: the current context)
  -o, --output json|yaml         print the result as JSON or YAML instead of text
      --operator-namespace NAME  where plans and assessment reports live (default aicr-system)
  -h, --help                     help for the command`

export const HELP: Record<Command | "root", string> = {
  root: `kubectl aicr: review and decide AICR operator rollouts. Talks only to the API server.

Usage:
  kubectl aicr COMMAND ROLLOUT [flags]      # COMMAND: describe | watch | approve | revoke | acknowledge | evidence
  kubectl aicr reproduce [PLAN] [flags]
  kubectl aicr completion bash|zsh
  kubectl aicr help [COMMAND]

Commands:
  describe     steps, per-component assessment, approval, validation and evidence of a rollout
  watch        follow a rollout live until it ends; the exit code is its outcome
  approve      approve a rollout in your own name (set once)
  revoke       revoke a rollout: the step in flight finishes, nothing new starts
  acknowledge  confirm the manual post-apply actions of a step were done
  evidence     pull a rollout's validation evidence from the registry, check it and print every check
  reproduce    write a plan's recipe and print how to render and compare its bundle yourself
  completion   print a shell completion script

${COMMON}`,
  describe: `Show a rollout: its kind and target plan, who requested it, the approval (or who may approve), each step with
its action, verdict and state, the assessment per component with versions and jump, validation and evidence.
Needs get on runtimerollouts, and get on ConfigMaps in the operator namespace for the assessment.

Usage:
  kubectl aicr describe ROLLOUT [-o json|yaml]
  kubectl aicr describe ROLLOUT --watch      # the same as kubectl aicr watch ROLLOUT

Command flags:
  -w, --watch   follow the rollout live until it ends (see kubectl aicr watch --help)

${COMMON}`,
  watch: `Follow a rollout live until it ends. On a terminal the screen is redrawn on every change and each second: a
progress bar over the steps, the step in flight with its elapsed time against its deadline, each finished step's
duration, the rollout's condition and its validation. Piped (not a terminal), one line per change, for logs.
Needs get, list and watch on runtimerollouts.

Usage:
  kubectl aicr watch ROLLOUT                 # or: kubectl aicr describe ROLLOUT --watch

Exit codes: 0 Succeeded, 1 Failed (or the rollout was deleted, or an error), 2 usage, 3 Expired, 4 Revoked,
5 Superseded.

${COMMON}`,
  approve: `Approve a rollout in your own name (your identity comes from a SelfSubjectReview). The approval is set once,
binds the rollout's target plan and expires after --expires (default and maximum: the rollout's deadline).
Needs the ClusterRole aicr-operator-approver; you may not approve a change you requested.

Usage:
  kubectl aicr approve ROLLOUT --reason TEXT [--expires DURATION]

Command flags:
      --reason TEXT        why you approve (required, at most ${MAX_REASON} characters)
      --expires DURATION   approval lifetime, e.g. 2h, 90m, 1h30m (default: until the rollout's deadline; not negative)

${COMMON}`,
  revoke: `Revoke a rollout in your own name: the step in flight finishes and nothing new starts; it ends RolloutRevoked.
A retry needs a new rollout and a new approval. Needs the ClusterRole aicr-operator-approver.

Usage:
  kubectl aicr revoke ROLLOUT --reason TEXT

Command flags:
      --reason TEXT   why you revoke (required, at most ${MAX_REASON} characters)

${COMMON}`,
  acknowledge: `Acknowledge that the manual post-apply actions of a step were done; the step is released and the rollout
continues. Without --step, every step waiting for acknowledgement (status.approval.pendingAcknowledgements).
Needs the ClusterRole aicr-operator-approver.

Usage:
  kubectl aicr acknowledge ROLLOUT [--step RELEASE]... [--reason TEXT]

Command flags:
      --step RELEASE   the step (release name) to acknowledge; repeatable
      --reason TEXT    a note recorded with the acknowledgement (optional)

${COMMON}`,
  evidence: `Pull a rollout's validation evidence (status.validation.evidenceRef) from the registry, check that its report
is the one its binding names (sha256) and whether it carries a signature, and print the binding (plan, bundle,
approval, AICR and validator images, run) and every check with its output. Registry credentials come from the docker
config ($DOCKER_CONFIG/config.json or ~/.docker/config.json); loopback registries are spoken to over plain HTTP.
Needs get on runtimerollouts, and pull on <prefix>/evidence/ in the registry.

Usage:
  kubectl aicr evidence ROLLOUT [-o json|yaml]

${COMMON}`,
  reproduce: `Write a plan's recipe (default: the active plan) to DIR/recipe.json and print the AICR image the operator ran,
the plan's bundle flags and the bundle reference, with the commands that render the same bundle with the AICR CLI
and compare it with the operator's. Reads only the plan record.
Needs get on the ClusterRuntime and on ConfigMaps in the operator namespace.

Usage:
  kubectl aicr reproduce [PLAN] [--plan DIGEST] [--dir DIR]

Command flags:
      --plan DIGEST   a desiredStateDigest or a unique prefix of one (same as the PLAN argument)
      --dir PATH      where the recipe is written (default aicr-reproduce)

${COMMON}`,
  completion: `Print a shell completion script for kubectl-aicr.

Usage:
  kubectl aicr completion bash    # source <(kubectl aicr completion bash)
  kubectl aicr completion zsh

kubectl itself completes plugin arguments through an executable named kubectl_complete-aicr on PATH: link it to
kubectl-aicr (ln -s kubectl-aicr kubectl_complete-aicr).

${COMMON}`,
  help: `Show help for kubectl aicr or one of its commands.

Usage:
  kubectl aicr help [COMMAND]`,
}

export const parseArgs = (argv: ReadonlyArray<string>): Parsed => {
  const values: Partial<Record<FlagName, string[]>> = {}
  const positional: string[] = []
  let help = false
  let watch = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      positional.push(...argv.slice(i + 1))
      break
    }
    const long = /^--([a-z-]+)(?:=(.*))?$/su.exec(arg)
    const short = /^-([a-zA-Z])(.*)$/su.exec(arg)
    if (long === null && short === null) {
      positional.push(arg)
      continue
    }
    const name: FlagName | undefined = long ? (long[1] as FlagName) : SHORT[short![1]!]
    if (name === undefined || !(name in FLAGS)) return { _tag: "Usage", message: `unknown flag ${arg}; see kubectl aicr --help` }
    if (name === "help") {
      help = true
      continue
    }
    if (name === "watch") {
      watch = true
      continue
    }
    const inline = long ? long[2] : short![2] !== "" ? short![2]!.replace(/^=/u, "") : undefined
    const value = inline ?? argv[++i]
    if (value === undefined) return { _tag: "Usage", message: `flag --${name} needs a value` }
    ;(values[name] ??= []).push(value)
  }
  const [first, ...rest] = positional
  const command = first as Command | undefined
  if (command !== undefined && !COMMANDS.includes(command)) return { _tag: "Usage", message: `unknown command "${first}"; commands: ${COMMANDS.join(", ")}` }
  if (help || command === undefined) return { _tag: "Help", command }
  if (command === "help") return { _tag: "Help", command: rest[0] !== undefined && COMMANDS.includes(rest[0] as Command) ? (rest[0] as Command) : undefined }
  if (rest.length > 1) return { _tag: "Usage", message: `${command} takes one name, got ${rest.join(" ")}` }
  const one = (f: FlagName) => values[f]?.at(-1)
  const output = one("output")
  if (output !== undefined && output !== "json" && output !== "yaml") return { _tag: "Usage", message: `--output must be json or yaml, not ${output}` }
  const name = rest[0]
  if (["describe", "watch", "approve", "revoke", "acknowledge", "evidence"].includes(command) && name === undefined)
    return { _tag: "Usage", message: `${command} needs a rollout name: kubectl aicr ${command} ROLLOUT (kubectl get runtimerollouts lists them)` }
  if (command === "completion" && name !== "bash" && name !== "zsh") return { _tag: "Usage", message: "completion needs a shell: bash or zsh" }
  const reason = one("reason")
  if ((command === "approve" || command === "revoke") && (reason === undefined || reason.trim() === ""))
    return { _tag: "Usage", message: `${command} needs --reason "…" (why you ${command})` }
  if (reason !== undefined && reason.length > MAX_REASON) return { _tag: "Usage", message: `--reason is ${reason.length} characters; at most ${MAX_REASON}` }
  if (command === "reproduce" && name !== undefined && one("plan") !== undefined && name !== one("plan"))
    return { _tag: "Usage", message: "give the plan once: as PLAN or as --plan" }
  return {
    _tag: "Run",
    command,
    name,
    flags: {
      kubeconfig: one("kubeconfig"),
      context: one("context"),
      output,
      operatorNamespace: one("operator-namespace") ?? "aicr-system",
      reason,
      expires: one("expires"),
      dir: one("dir") ?? "aicr-reproduce",
      step: values.step,
      plan: one("plan") ?? (command === "reproduce" ? name : undefined),
      ...(watch ? { watch } : {}),
    },
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Go-style durations (`2h`, `1h30m`, `90s`, `1.5h`) → milliseconds; a leading `-` is a negative duration. */
export const parseDuration = (text: string): number | undefined => {
  const m = /^(-)?((?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+)$/u.exec(text.trim())
  if (m === null) return undefined
  let total = 0
  for (const part of m[2]!.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/gu)) total += Number(part[1]) * UNITS[part[2]!]!
  return m[1] ? -total : total
}
