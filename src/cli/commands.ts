import { contractEntries } from '../contract/index.ts'
import type { Operation } from '../contract/operation.ts'
import { methodFor } from '../client/method-groups.ts'
import type { OperatorClient } from '../client/operator-client.ts'
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
  const spec = commandSpec(op)
  return {
    words: spec.words,
    usage: usageOf(spec),
    summary: op.summary,
    operation: op,
    spec,
    run: (client, args) => {
      // The request is read before the method is looked up: a usage mistake reaches nobody.
      const request = requestOf(spec, args)
      return methodFor(client, op)(request)
    },
    exitCode: (result) => op.cli?.exitCode?.(result) ?? 0,
  }
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
