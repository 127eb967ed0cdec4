import type { OperatorClient } from '../client/operator-client.ts'
import { parseDuration, UsageError } from './cli-context.ts'

// The operator commands: each reads its words and flags and calls one `ops.` operation.
// A table, so that `bank help` and dispatch cannot disagree.

export interface Args {
  positionals: string[]
  flags: Record<string, string | boolean>
}

export interface Command {
  words: string
  usage: string
  run(client: OperatorClient, args: Args): Promise<unknown>
  /** Exit code for a result the bank answered but that is not a success (e.g. a ledger mismatch). */
  exitCode?(result: unknown): number
}

function flag(args: Args, name: string): string {
  const value = args.flags[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function optionalFlag(args: Args, name: string): string | undefined {
  const value = args.flags[name]
  return typeof value === 'string' ? value : undefined
}

function positional(args: Args, index: number, name: string): string {
  const value = args.positionals[index]
  if (!value) throw new UsageError(`<${name}> is required`)
  return value
}

export const commands: Command[] = [
  {
    words: 'partner create',
    usage: 'partner create --name N --email E --registration-number R --trading-name T [--country ZAF]',
    run: (c, a) =>
      c.partners.create({
        name: flag(a, 'name'),
        email: flag(a, 'email'),
        registration_number: flag(a, 'registration-number'),
        trading_name: flag(a, 'trading-name'),
        ...(optionalFlag(a, 'country') ? { country: optionalFlag(a, 'country') } : {}),
      }),
  },
  { words: 'partner list', usage: 'partner list', run: (c) => c.partners.list() },
  {
    words: 'credential create',
    usage: 'credential create --partner P --permissions read,write,payments [--expires-in 30d] [--label L]',
    run: (c, a) => {
      const expires = optionalFlag(a, 'expires-in')
      return c.credentials.create({
        partner_id: flag(a, 'partner'),
        permissions: flag(a, 'permissions').split(',').map((p) => p.trim()) as Array<'read' | 'write' | 'payments'>,
        ...(expires ? { expires_in_seconds: parseDuration(expires) } : {}),
        ...(optionalFlag(a, 'label') ? { label: optionalFlag(a, 'label') } : {}),
      })
    },
  },
  {
    words: 'credential revoke',
    usage: 'credential revoke <credential_id>',
    run: (c, a) => c.credentials.revoke({ credential_id: positional(a, 0, 'credential_id') }),
  },
  {
    words: 'credential list',
    usage: 'credential list --partner P',
    run: (c, a) => c.credentials.list({ partner_id: flag(a, 'partner') }),
  },
  {
    words: 'entity review',
    usage: 'entity review <entity_id> --approve | --reject --reason R',
    run: (c, a) => {
      const approve = a.flags.approve === true
      const reject = a.flags.reject === true
      if (approve === reject) throw new UsageError('give exactly one of --approve and --reject')
      return c.entities.review({
        entity_id: positional(a, 0, 'entity_id'),
        decision: approve ? 'approve' : 'reject',
        ...(reject ? { reason: flag(a, 'reason') } : {}),
      })
    },
  },
  {
    words: 'entity list',
    usage: 'entity list --partner P',
    run: (c, a) => c.entities.list({ partner_id: flag(a, 'partner') }),
  },
  {
    words: 'user kyc',
    usage: 'user kyc <user_id> --status pending|approved|rejected [--reason R]',
    run: (c, a) =>
      c.users.kyc({
        user_id: positional(a, 0, 'user_id'),
        status: flag(a, 'status') as 'pending' | 'approved' | 'rejected',
        ...(optionalFlag(a, 'reason') ? { reason: optionalFlag(a, 'reason') } : {}),
      }),
  },
  {
    words: 'account deposit',
    usage: 'account deposit <account_id> <amount_cents> [--ref R]',
    run: (c, a) => {
      const amount = positional(a, 1, 'amount_cents')
      if (!/^\d+$/.test(amount)) throw new UsageError('<amount_cents> must be a whole number of cents, e.g. 150000 for R1,500.00')
      return c.accounts.deposit({
        account_id: positional(a, 0, 'account_id'),
        amount: Number(amount),
        ...(optionalFlag(a, 'ref') ? { ref: optionalFlag(a, 'ref') } : {}),
      })
    },
  },
  {
    words: 'ledger verify',
    usage: 'ledger verify',
    run: (c) => c.ledger.verify(),
    exitCode: (result) => ((result as { ok: boolean }).ok ? 0 : 3),
  },
  { words: 'clearing run', usage: 'clearing run', run: (c) => c.clearing.run() },
  {
    words: 'account list',
    usage: 'account list --entity E',
    run: (c, a) => c.accounts.list({ entity_id: flag(a, 'entity') }),
  },
]

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
