import { Command as Commander, CommanderError, Help, Option } from 'commander'
import type { Args } from './command-spec.ts'
import { formats, type Format } from './format.ts'

// The command line of `bank`, read by commander. We chose commander over hand parsing and
// over yargs/citty/node:util parseArgs because it is maintained (weekly downloads in the
// tens of millions, a release every few months), ships its own TypeScript types, has
// nested subcommands with generated `--help` on every level, `--version`, and refuses an
// unknown option or command with a suggestion (`--reff` → "Did you mean --ref?") rather
// than ignoring it; node:util parseArgs has no subcommands or help. Version 14 still
// supports Node 20, which the bank runs on.
//
// The commands themselves are not listed here: the contract's `ops.` operations (see
// commands.ts) and the few commands that run locally (local-commands.ts) each describe
// their words, positional words and flags, and this file turns every description into a
// commander command. Commander only splits the line and refuses what no command takes;
// which flags are required is checked by each command, so that all the missing ones are
// reported at once (commander stops at the first).

/** Where a run writes: the process's stdout and stderr, or a test's buffers. */
export interface CliOutput {
  stdout(text: string): void
  stderr(text: string): void
  /**
   * Whether stderr is a terminal: a followed job's progress is then one line rewritten in place.
   */
  terminal?: boolean
}

/** A positional word or a flag as `--help` shows it. */
export interface HelpItem {
  word: string
  /** A flag's value as the usage shows it (`N`, `30d`); none for a bare flag (`--approve`). */
  example?: string
  required: boolean
  help: string
}

/** One command as the command line knows it. */
export interface CliCommand {
  /** The words after `bank`, e.g. `account show`. */
  words: string
  /** The usage line without `bank `, e.g. `account show <account_id>`. */
  usage: string
  /** What the command does: the first sentence is its one-line description. */
  summary: string
  positionals: readonly HelpItem[]
  flags: readonly HelpItem[]
  /** Said in its `--help` after the flags (what a local command needs, how to use its output). */
  notes?: string
}

export type Act = (command: CliCommand, args: Args, format: Format) => void | Promise<void>

/** The flags every command takes; no command may use their names for its own. */
const globalFlags = ['format', 'version', 'help']

/**
 * The first sentence (up to `. ` or `; ` outside brackets) of a summary: the command's one-line
 * description.
 */
export function oneLine(summary: string): string {
  let depth = 0
  for (let i = 0; i < summary.length; i++) {
    const c = summary[i]!
    if (c === '(' || c === '[') depth++
    else if ((c === ')' || c === ']') && depth > 0) depth--
    else if ((c === '.' || c === ';') && depth === 0 && (i + 1 === summary.length || /\s/.test(summary[i + 1]!))) return summary.slice(0, i)
  }
  return summary
}

/**
 * The program for one run: a fresh commander tree (commander keeps parsed values on its
 * objects), writing to `out`, throwing a CommanderError instead of exiting the process.
 */
export function cliProgram(commands: readonly CliCommand[], out: CliOutput, act: Act,
    version: string): Commander {
  const program = new Commander('bank')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => out.stdout(text),
      writeErr: (text) => out.stderr(text),
      getOutHelpWidth: () => 100,
      getErrHelpWidth: () => 100,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .configureHelp({
      showGlobalOptions: true,
      optionTerm: (option) => option.flags.replace(/\[(.*)\]$/, '<$1>'),
      // A command's usage line is its own (`bank partner list`), not commander's `[options]`.
      commandUsage(this: Help, cmd: Commander) {
        const command = commands.find((c) => c.words === pathOf(cmd))
        return command ? `bank ${command.usage}` : Help.prototype.commandUsage.call(this, cmd)
      },
      formatHelp: (cmd, helper) => formatHelp(cmd, helper, commands),
    })
    // A mistake at the top (`bank partnr`) gets its message, commander's "Did you mean …?"
    // and one line, not the hundred lines of every command that would scroll them away.
    .showHelpAfterError('(bank --help lists every command)')
    .addOption(new Option('--format <format>',
      'output: json for scripts, table for people').choices(formats).default('json'))
    .version(version, '--version', "the CLI's version")
    .helpOption('-h, --help', 'this help')
    // `bank help [words]` is read by withHelpForBareGroups: commander's own help command
    // takes its exit code from process.exitCode, which a test runner may have set.
    .helpCommand(false)
  for (const command of commands) addCommand(program, command, act)
  return program
}

function addCommand(program: Commander, command: CliCommand, act: Act): void {
  const words = command.words.split(' ')
  let parent = program
  for (const word of words.slice(0, -1)) {
    parent =
      parent.commands.find((c) => c.name() === word) ??
      parent.command(word).showHelpAfterError(true).helpOption('-h, --help', 'this help')
        .helpCommand(false)
  }
  const leaf = parent
    .command(words.at(-1)!)
    .summary(oneLine(command.summary))
    .description(command.notes ? `${command.summary}\n\n${command.notes}` : command.summary)
    .helpOption('-h, --help', 'this help')
    // Every missing word and every extra one is reported by the command, all at once.
    .allowExcessArguments()
    .showHelpAfterError(
      `usage: bank ${command.usage}\n(bank ${command.words} --help: what each flag takes)`)
  for (const positional of command.positionals) leaf.argument(`[${positional.word}]`,
    positional.help)
  for (const flag of command.flags) {
    if (globalFlags.includes(flag.word)) throw new Error(
      `bank ${command.words}: --${flag.word} is a flag of every command`)
    // A value is declared optional (`[N]`), so that a flag left without one (`--name
    // --email a@b.example`) is reported as such rather than taking the next flag as its
    // value; the command then says `--name is required`. The help shows it as `<N>`.
    leaf.addOption(new Option(flag.example === undefined ? `--${flag.word}`
      : `--${flag.word} [${flag.example}]`, flag.help))
  }
  leaf.action((...params: unknown[]) => {
    const parsed = params.at(-1) as Commander
    const args: Args = { positionals: [...parsed.args], flags: {} }
    for (const option of parsed.options) {
      const value: unknown = parsed.getOptionValue(option.attributeName())
      if (typeof value === 'string' || typeof value === 'boolean') args.flags[option.long!.slice(
        2)] = value
    }
    return act(command, args, parsed.optsWithGlobals().format as Format)
  })
}

/**
 * `bank` and `bank partner` alone show the help of all commands or of the group's:
 * a group's name is not a mistake, it is a question. `bank help [words]` is
 * `bank [words] --help`.
 */
export function withHelpForBareGroups(program: Commander, given: readonly string[]): string[] {
  if (given[0] === 'help') return [...given.slice(1), '--help']
  const argv = given
  let at = program
  for (const word of argv) {
    const next = at.commands.find((c) => c.name() === word)
    if (!next) return [...argv]
    at = next
  }
  return at.commands.length > 0 ? [...argv, '--help'] : [...argv]
}

/**
 * A CommanderError's exit code for `bank`: 0 after help or the version, 2 for every usage mistake.
 */
export function exitCodeOf(error: CommanderError): number {
  return error.exitCode === 0 ? 0 : 2
}

/**
 * The help of `bank` and of a group (`bank partner`): each command's usage line and its
 * one-line description. A single command's help is commander's own (usage, description,
 * every flag with what it takes).
 */
function formatHelp(cmd: Commander, helper: Help, commands: readonly CliCommand[]): string {
  if (cmd.commands.length === 0) return Help.prototype.formatHelp.call(helper, cmd, helper)
  const prefix = pathOf(cmd)
  const listed = commands.filter((c) => prefix === '' || c.words === prefix
    || c.words.startsWith(`${prefix} `))
  const lines = listed.flatMap((c) => [`  bank ${c.usage}`, `      ${oneLine(c.summary)}`])
  return [
    `usage: bank ${prefix ? `${prefix} ` : ''}<command> [--format json|table]`,
    '',
    ...lines,
    '',
    `bank <command> --help shows what each flag ` +
      `takes.${prefix ? '' : ' bank --version shows the version.'}`,
    'Output: JSON (the default, for scripts), or a table with --format table.',
    'Exit codes: 0 done; 1 the bank refused (the error JSON on stderr), could not be reached, or ' +
      'a job it ran failed; 2 a usage mistake; 3 `ledger verify` found a mismatch.',
    'Long commands (clearing run, sandbox advance, debit run) get a job from the bank at once ' +
      'and follow it until it ends, on stderr; stdout gets its result. --detach prints the job ' +
      'instead.',
    'The bank is found through NATS_URL (else <data dir>/nats-url) and the operator credential ' +
      'in BANK_OPERATOR_TOKEN (else <data dir>/operator-token); the data dir is BANK_DATA_DIR, ' +
      'default ./.data.',
    'Where the bank is the NATS authority (bank nats init), the CLI logs in to NATS with ' +
      'NATS_CREDS (operator.creds) and NATS_TLS_CA (ca.pem).',
    '',
  ].join('\n')
}

/** A commander command's words after `bank`: `partner create`; '' for the program. */
function pathOf(cmd: Commander): string {
  const words: string[] = []
  for (let c: Commander | null = cmd; c?.parent; c = c.parent) words.unshift(c.name())
  return words.join(' ')
}
