import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { CommanderError } from 'commander'
import { z } from 'zod'
import { contractEntries } from '../contract/index.ts'
import type { Operation } from '../contract/operation.ts'
import { methodFor } from '../client/method-groups.ts'
import type { OperatorClient } from '../client/operator-client.ts'
import { isDetachable, jobOperations } from '../jobs/jobs-contract.ts'
import { UsageError } from './cli-context.ts'
import { detachAndFollow, followById } from './follow-job.ts'
import type { ProgressOutput } from './job-progress.ts'
import { commandSpec, requestOf, usageOf, type Args, type CliField, type CommandSpec } from './command-spec.ts'
import { cliProgram, type CliCommand, type HelpItem } from './program.ts'

// The operator commands: one per `ops.` operation of the contract, derived from it (see
// command-spec.ts), so a new operation is a new command without a line here. Each calls
// its operation through the SDK's OperatorClient. A long call whose request takes `detach`
// is sent detached and its job followed until it ends (follow-job.ts).

export type { Args } from './command-spec.ts'

/**
 * Sends a command's request. With `progress` (the CLI's run), a long call is detached and
 * its job followed, saying how it goes there; without (a test's `run`), it sends the request
 * the line asks for, once.
 */
export type Call = (client: OperatorClient, progress?: ProgressOutput) => Promise<unknown>

export interface Command extends CliCommand {
  operation: Operation
  spec: CommandSpec
  /**
   * Reads the request from the command line (a UsageError names every mistake on it) and
   * answers the call that sends it: nothing reaches the bank before the line is right.
   */
  prepare(args: Args): Call
  run(client: OperatorClient, args: Args): Promise<unknown>
  /** Exit code for a reply the bank sent that is not a success (e.g. a ledger mismatch). */
  exitCode(result: unknown): number
}

function commandOf(op: Operation): Command {
  const spec = withJsonLists(commandSpec(op))
  const download = op.cli?.download === true
  const detaches = isDetachable(op)
  const followable = op === jobOperations.get
  const prepare = (given: Args): Call => {
    const args: Args = { positionals: given.positionals, flags: { ...given.flags } }
    const out = download ? takeOut(args) : undefined
    const followAsked = followable && takeFollow(args)
    const request = requestOf(spec, args)
    return (client, progress) => {
      const send = methodFor(client, op) as (request: Record<string, unknown>) => Promise<unknown>
      if (progress && detaches && request.detach === undefined) return detachAndFollow(client, send,
        request, progress)
      if (progress && followAsked) return followById(client, String(request.job_id), progress)
      return out === undefined ? send(request)
        : downloadTo(out, request, send as (request: Record<string, unknown>) => Promise<FilePart>)
    }
  }
  const flagHelps = spec.flags.map((f) => (detaches && f.field === 'detach' ? detachFlag
    : flagHelp(f, spec)))
  return {
    words: spec.words,
    usage: usageOf(spec) + (download ? ' [--out FILE]' : '') + (followable ? ' [--follow]' : ''),
    summary: op.summary,
    positionals: spec.positionals.map(
      (p) => ({ word: p.word, required: p.required, help: fieldHelp(p) })),
    flags: [...choiceFlags(spec), ...flagHelps, ...(download ? [outFlag] : []),
      ...(followable ? [followFlag] : [])],
    operation: op,
    spec,
    prepare,
    run: async (client, args) => prepare(args)(client),
    exitCode: (result) => op.cli?.exitCode?.(result) ?? 0,
  }
}

const detachFlag: HelpItem = {
  word: 'detach',
  required: false,
  help: 'print the job the bank answers with at once and leave it running (bank jobs get ' +
    '<job_id> [--follow] reads it); without it, the command follows the job until it ends and ' +
    'prints its result',
}

const followFlag: HelpItem = {
  word: 'follow',
  required: false,
  help: 'ask again until the job has ended, saying how it goes on stderr; print its last view ' +
    '(exit 1 if it failed)',
}

/** `--follow` of `bank jobs get`, taken out of the flags the request is read from. */
function takeFollow(args: Args): boolean {
  const follow = args.flags.follow
  if (follow === undefined) return false
  if (follow !== true) throw new UsageError('--follow takes no value')
  delete args.flags.follow
  return true
}

const outFlag: HelpItem = {
  word: 'out',
  example: 'FILE',
  required: false,
  help: 'fetch the whole file into FILE (its SHA-256 checked) and print its metadata instead of ' +
    'the bytes',
}

/** What a field takes, in words: `required; a whole number`, `default deposit`, `one of a, b`. */
function fieldHelp(field: CliField, requiredBy?: string): string {
  const need = field.required ? 'required' : requiredBy ? `required with ${requiredBy}` : 'optional'
  const takes: Record<CliField['kind'], string> = {
    string: '',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
    list: 'a comma-separated list',
    duration: 'a duration: 30d, 12h, 90m, 45s or seconds',
    json: 'JSON',
  }
  const choices = field.example.includes('|') ? `one of ${field.example.split('|').join(', ')}` : ''
  const fallback = field.default === undefined ? ''
    : `default ${typeof field.default === 'string' ? field.default : JSON.stringify(field.default)}`
  return [need, choices || takes[field.kind], fallback].filter(Boolean).join('; ')
}

function flagHelp(flag: CliField, spec: CommandSpec): HelpItem {
  const chooser = spec.choices.flatMap((c) => c.options).find(
    (o) => o.requires.includes(flag.field))
  return {
    word: flag.word,
    ...(flag.kind === 'boolean' ? {} : { example: flag.example }),
    required: flag.required,
    help: fieldHelp(flag, chooser ? `--${chooser.flag}` : undefined),
  }
}

/** `--approve` | `--reject`: bare flags, exactly one of which is given. */
function choiceFlags(spec: CommandSpec): HelpItem[] {
  return spec.choices.flatMap((choice) =>
    choice.options.map((option) => ({
      word: option.flag,
      required: false,
      help: `${choice.field} ${option.value} (give exactly one ` +
        `of ${choice.options.map((o) => `--${o.flag}`).join(', ')})`,
    })),
  )
}

/**
 * A list of objects (`documents: [{document_id, decision, reason}]` of a review decision)
 * cannot be written as `A,B`: such a flag takes JSON. (command-spec.ts's kind of a field
 * would be the place for this rule.)
 */
function withJsonLists(spec: CommandSpec): CommandSpec {
  const schema = z.toJSONSchema(spec.operation.request,
      { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { items?: { type?: string } }>
  }
  const objectItems = (field: string) => schema.properties?.[field]?.items?.type === 'object'
  return {
    ...spec,
    flags: spec.flags.map((flag) => (flag.kind === 'list' && objectItems(flag.field)
      ? { ...flag, kind: 'json', example: 'JSON' } : flag)),
  }
}

/** `--out <file>` of a download command, taken out of the flags the request is read from. */
function takeOut(args: Args): string | undefined {
  const out = args.flags.out
  if (out === undefined) return undefined
  if (typeof out !== 'string' || out === '') throw new UsageError('--out needs a file name')
  if (args.flags.offset !== undefined) throw new UsageError(
    '--out fetches the whole file from its start; leave out --offset')
  delete args.flags.out
  return out
}

/** One part of a file, as a download operation's reply carries it (CliOptions.download). */
interface FilePart {
  offset: number
  data: string
  next_offset: number | null
  size: number
  sha256: string
  [key: string]: unknown
}

/**
 * Fetches every part of the file into `file` and checks the SHA-256 of the bytes written
 * against the one the bank recorded: the file appears only when they agree (it is written
 * beside the target first, then renamed). Resolves with the reply's metadata, without the
 * bytes. Each part must move forward, so at most `size` bytes are ever asked for.
 */
async function downloadTo(file: string, request: Record<string, unknown>,
    call: (request: Record<string, unknown>) => Promise<FilePart>) {
  const target = path.resolve(file)
  const partial = `${target}.part-${process.pid}`
  const handle = await fs.promises.open(partial, 'w')
  let first: FilePart | undefined
  try {
    try {
      for (let offset: number | null = 0; offset !== null; ) {
        const part: FilePart = await call({ ...request, offset })
        first ??= part
        const bytes = Buffer.from(part.data, 'base64')
        await handle.write(bytes)
        if (part.next_offset !== null && (part.next_offset !== offset + bytes.length
            || part.next_offset > first.size)) {
          throw new Error(`the bank answered part ${offset} with ${bytes.length} bytes and ` +
            `next_offset ${part.next_offset}; the download stopped`)
        }
        offset = part.next_offset
      }
    } finally {
      await handle.close()
    }
    const written = await fs.promises.readFile(partial)
    const sha256 = createHash('sha256').update(written).digest('hex')
    if (sha256 !== first!.sha256 || written.length !== first!.size) {
      throw new Error(
        `the ${written.length} bytes written have SHA-256 ${sha256}, but the bank ` +
          `recorded ${first!.size} bytes with SHA-256 ${first!.sha256}; ${target} was not written`,
      )
    }
    await fs.promises.rename(partial, target)
  } catch (error) {
    await fs.promises.rm(partial, { force: true })
    throw error
  }
  const { offset: _offset, data: _data, next_offset: _next, ...metadata } = first!
  return { ...metadata, out: target }
}

export const commands: Command[] = contractEntries()
  .filter((entry) => entry.client === 'operator')
  .map((entry) => commandOf(entry.operation))

/**
 * The command an argv names and its words and flags, read by the same commander program
 * the CLI runs (without running anything); `command` is undefined for a line commander
 * refuses. test/contract/reachability.test.ts dispatches every command through it.
 */
export function parseArgs(argv: string[]): { command: Command | undefined; args: Args } {
  let found: { command: Command | undefined; args: Args } =
    { command: undefined, args: { positionals: [], flags: {} } }
  const program = cliProgram(commands, { stdout: () => {}, stderr: () => {} }, (command, args) => {
    found = { command: command as Command, args }
  }, '0.0.0')
  try {
    program.parse(argv, { from: 'user' })
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
  }
  return found
}
