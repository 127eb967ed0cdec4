import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { contractEntries } from '../contract/index.ts'
import type { Operation } from '../contract/operation.ts'
import { methodFor } from '../client/method-groups.ts'
import type { OperatorClient } from '../client/operator-client.ts'
import { UsageError } from './cli-context.ts'
import { commandSpec, requestOf, usageOf, type Args, type CommandSpec } from './command-spec.ts'

// The operator commands: one per `ops.` operation of the contract, derived from it (see
// command-spec.ts), so a new operation is a new command without a line here. Each calls
// its operation through the SDK's OperatorClient.

export type { Args } from './command-spec.ts'

export interface Command {
  words: string
  usage: string
  summary: string
  operation: Operation
  spec: CommandSpec
  run(client: OperatorClient, args: Args): Promise<unknown>
  /** Exit code for a reply the bank sent that is not a success (e.g. a ledger mismatch). */
  exitCode(result: unknown): number
}

function commandOf(op: Operation): Command {
  const spec = withJsonLists(commandSpec(op))
  const download = op.cli?.download === true
  return {
    words: spec.words,
    usage: usageOf(spec) + (download ? ' [--out FILE]' : ''),
    summary: op.summary,
    operation: op,
    spec,
    run: (client, args) => {
      const out = download ? takeOut(args) : undefined
      // The request is read before the method is looked up: a usage mistake reaches nobody.
      const request = requestOf(spec, args)
      const call = methodFor(client, op) as (request: Record<string, unknown>) => Promise<unknown>
      return out === undefined ? call(request) : downloadTo(out, request, call as (request: Record<string, unknown>) => Promise<FilePart>)
    },
    exitCode: (result) => op.cli?.exitCode?.(result) ?? 0,
  }
}

/**
 * A list of objects (`documents: [{document_id, decision, reason}]` of a review decision)
 * cannot be written as `A,B`: such a flag takes JSON. (command-spec.ts's kind of a field
 * would be the place for this rule.)
 */
function withJsonLists(spec: CommandSpec): CommandSpec {
  const schema = z.toJSONSchema(spec.operation.request, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { items?: { type?: string } }>
  }
  const objectItems = (field: string) => schema.properties?.[field]?.items?.type === 'object'
  return {
    ...spec,
    flags: spec.flags.map((flag) => (flag.kind === 'list' && objectItems(flag.field) ? { ...flag, kind: 'json', example: 'JSON' } : flag)),
  }
}

/** `--out <file>` of a download command, taken out of the flags the request is read from. */
function takeOut(args: Args): string | undefined {
  const out = args.flags.out
  if (out === undefined) return undefined
  if (typeof out !== 'string' || out === '') throw new UsageError('--out needs a file name')
  if (args.flags.offset !== undefined) throw new UsageError('--out fetches the whole file from its start; leave out --offset')
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
async function downloadTo(file: string, request: Record<string, unknown>, call: (request: Record<string, unknown>) => Promise<FilePart>) {
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
        if (part.next_offset !== null && (part.next_offset !== offset + bytes.length || part.next_offset > first.size)) {
          throw new Error(`the bank answered part ${offset} with ${bytes.length} bytes and next_offset ${part.next_offset}; the download stopped`)
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
        `the ${written.length} bytes written have SHA-256 ${sha256}, but the bank recorded ${first!.size} bytes with SHA-256 ${first!.sha256}; ${target} was not written`,
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

/** Splits argv into the command's words, positionals and `--flag value` / `--flag` pairs. */
export function parseArgs(argv: string[]): { command: Command | undefined; args: Args } {
  const command = commands.find((c) => {
    const words = c.words.split(' ')
    return words.every((w, i) => argv[i] === w)
  })
  const rest = command ? argv.slice(command.words.split(' ').length) : argv
  const args: Args = { positionals: [], flags: {} }
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!
    if (word.startsWith('--')) {
      const [name, inline] = word.slice(2).split(/=(.*)/s)
      const next = rest[i + 1]
      if (inline !== undefined) args.flags[name!] = inline
      else if (next !== undefined && !next.startsWith('--')) {
        args.flags[name!] = next
        i++
      } else args.flags[name!] = true
    } else args.positionals.push(word)
  }
  return { command, args }
}
