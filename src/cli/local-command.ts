import type { Args } from './command-spec.ts'
import type { CliCommand } from './program.ts'

// A command that is not an `ops.` operation of the contract but runs in the CLI itself:
// `bank status` (asks NATS who serves) and `bank operator create` (writes to the database).

export interface LocalOutcome {
  /** What `--format json` prints. */
  result: unknown
  /** What `--format table` prints, when a flatter view reads better (default: `result`). */
  table?: unknown
  /** What the operator should know beside it, printed on stderr (`bank: warning: …`). */
  warnings?: string[]
}

export interface LocalCommand extends CliCommand {
  run(args: Args, env: NodeJS.ProcessEnv): Promise<LocalOutcome>
}
