/**
 * `kubectl aicr` as a function of its arguments: parse, run one command against the API server, print. Exit codes:
 * 0 done, 1 refused or failed (the message on stderr says why), 2 usage error. `__complete` prints completion
 * candidates in kubectl's format.
 */
import { KubeError, makeKube } from "@aicr/kube"
import { Cause, Effect, Exit } from "effect"
import { stringify } from "yaml"
import { COMMANDS, FLAGS, HELP, parseArgs } from "./args"
import { acknowledge, approve, CliError, describe, evidence, explain, type Io, reproduce, type Result_, revoke, rolloutNames } from "./commands"
import { completionScript } from "./completion"
import { follow } from "./watch"

const kubeOf = (kubeconfig: string | undefined, context: string | undefined) => makeKube({ kubeconfigPath: kubeconfig, context })

/** kubectl's completion protocol: candidates, one per line, then `:<directive>` (4 = no file completion). */
const complete = async (words: ReadonlyArray<string>): Promise<string> => {
  const current = words.at(-1) ?? ""
  const before = words.slice(0, -1)
  const previous = before.at(-1)
  const directive = ":4"
  if (current.startsWith("-"))
    return [
      ...Object.keys(FLAGS)
        .map((f) => `--${f}`)
        .filter((f) => f.startsWith(current)),
      directive,
    ].join("\n")
  if (previous === "-o" || previous === "--output") return ["json", "yaml", directive].join("\n")
  if (previous === "--dir") return ":0"
  const positional = before.filter(
    (w, i) => !w.startsWith("-") && !(i > 0 && /^--?(kubeconfig|context|o|output|operator-namespace|reason|expires|dir|step|plan)$/u.test(before[i - 1]!)),
  )
  if (positional.length === 0) return [...COMMANDS.filter((c) => c.startsWith(current)), directive].join("\n")
  if (positional.length === 1 && ["describe", "watch", "approve", "revoke", "acknowledge", "evidence"].includes(positional[0]!)) {
    const flag = (name: string) => {
      const i = before.indexOf(`--${name}`)
      return i >= 0 ? before[i + 1] : undefined
    }
    const names = await Effect.runPromise(
      rolloutNames(kubeOf(flag("kubeconfig"), flag("context"))).pipe(Effect.catchCause(() => Effect.succeed([] as string[]))),
    )
    return [...names.filter((n) => n.startsWith(current)), directive].join("\n")
  }
  if (positional[0] === "completion") return ["bash", "zsh", directive].join("\n")
  return directive
}

/** The terminal stdout is, if it is one (watch redraws in place there). */
export interface Terminal {
  readonly tty: boolean
  readonly columns: number
}

export const run = async (
  argv: ReadonlyArray<string>,
  write: (s: string) => void,
  writeErr: (s: string) => void,
  terminal: Terminal = { tty: false, columns: 100 },
): Promise<number> => {
  if (argv[0] === "__complete") {
    write((await complete(argv.slice(1))) + "\n")
    return 0
  }
  const parsed = parseArgs(argv)
  if (parsed._tag === "Usage") {
    writeErr(`Error: ${parsed.message}\n`)
    return 2
  }
  if (parsed._tag === "Help") {
    write(HELP[parsed.command ?? "root"] + "\n")
    return 0
  }
  const { command, name, flags } = parsed
  if (command === "completion") {
    write(completionScript(name as "bash" | "zsh"))
    return 0
  }
  const io: Io = { kube: kubeOf(flags.kubeconfig, flags.context), out: write }
  const fail = (error: unknown) => {
    if (error instanceof CliError) writeErr(`Error: ${error.message}\n`)
    else if (error instanceof KubeError) writeErr(`Error: ${explain(error)}\n`)
    else writeErr(`Error: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  if (command === "watch" || (command === "describe" && flags.watch === true)) {
    const followed = await Effect.runPromiseExit(follow(io.kube, name!, { out: write, tty: terminal.tty, columns: terminal.columns, now: Date.now }))
    return Exit.isSuccess(followed) ? followed.value : fail(Cause.squash(followed.cause))
  }
  const commands = { describe, approve, revoke, acknowledge, reproduce, evidence } as const
  const program: Effect.Effect<Result_, KubeError | CliError> = Effect.suspend(() => commands[command as keyof typeof commands](io, name!, flags))
  const exit = await Effect.runPromiseExit(program)
  if (Exit.isSuccess(exit)) {
    const r = exit.value
    write(flags.output === "json" ? JSON.stringify(r.doc, null, 2) + "\n" : flags.output === "yaml" ? stringify(r.doc, { lineWidth: 0 }) : r.text)
    return 0
  }
  return fail(Cause.squash(exit.cause))
}
