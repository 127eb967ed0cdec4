import { z } from 'zod'
import { uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Account statements (RULINGS "Account lifecycle", Statements): an account's posted
// transactions over a range of South African days, with opening and closing balances, as a
// PDF or as ISO 20022 camt.053.001.08. A small range is answered in the reply; a larger one
// is made in the background and fetched by its job id (`statement_get`) once the
// `account.statement_ready` event says it is ready. Amounts are integer-cent strings.

/** The longest range of days one statement covers. */
export const statement_days_max = 366
/**
 * The most lines a statement answered in the reply has; a range with more is made in the
 * background. 500 camt.053 entries are about 350 KB, under NATS's 1 MB message limit once
 * base64 has grown them by a third, with the rest of the reply beside them.
 */
export const statement_inline_lines_max = 500
/** The largest file answered in the reply (bytes); a larger one is stored and fetched. */
export const statement_inline_bytes_max = 512 * 1024
/** The most bytes of a stored statement one `statement_get` answers. */
export const statement_chunk_bytes_max = 256 * 1024
/** The most statements of a partner waiting to be made at once. */
export const statement_queued_per_partner_max = 20

export const statement_formats = ['pdf', 'camt053'] as const

const date_pattern = /^(\d{4})-(\d{2})-(\d{2})$/

/** Whether `YYYY-MM-DD` is a real day from the year 1900 on. */
export function isStatementDay(value: string): boolean {
  const parts = date_pattern.exec(value)
  if (!parts) return false
  const [year, month, day] = parts.slice(1).map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return year >= 1900 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1
    && date.getUTCDate() === day
}

/** The days from `from` to `to`, both included. */
export function daysOf(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1
}

const day = () => z.string({ error: 'must be a date like 2026-11-01' })
  .refine(isStatementDay, { error: 'must be a real date like 2026-11-01 (SAST)' })

const statementRequest = z.strictObject({
  account_id: uuid(),
  from: day(),
  to: day(),
  format: z.enum(statement_formats, { error: 'must be pdf or camt053' }),
}).superRefine((r, ctx) => {
  if (!isStatementDay(r.from) || !isStatementDay(r.to)) return
  if (r.from > r.to) ctx.addIssue({ code: 'custom', path: ['to'],
    message: 'must not be before the `from` day' })
  else if (daysOf(r.from, r.to) > statement_days_max) ctx.addIssue({ code: 'custom',
    path: ['to'],
    message: `must be at most ${statement_days_max} days after the \`from\` day, both included` })
})

const cents = z.string()

export const statementTotals = z.object({
  opening_balance: cents,
  closing_balance: cents,
  credits_count: z.number(),
  credits_sum: cents,
  debits_count: z.number(),
  debits_sum: cents,
  fees: cents,
  held_at_end: cents,
  lines: z.number(),
})

const statementFile = {
  account_id: z.string(),
  from: z.string(),
  to: z.string(),
  format: z.enum(statement_formats),
  file_name: z.string(),
  content_type: z.string(),
}

export const statementReply = z.object({
  /** `ready`: in this reply (or, with a job id, stored); `queued`: made in the background. */
  status: z.enum(['ready', 'queued']),
  job_id: z.string().nullable(),
  ...statementFile,
  /** The whole file, base64; null when it is fetched by its job id. */
  content: z.string().nullable(),
  size: z.number().nullable(),
  sha256: z.string().nullable(),
  totals: statementTotals.nullable(),
})

export const statementPart = z.object({
  job_id: z.string(),
  status: z.enum(['ready', 'queued']),
  ...statementFile,
  size: z.number().nullable(),
  sha256: z.string().nullable(),
  totals: statementTotals.nullable(),
  offset: z.number(),
  /** Base64 of the bytes from `offset`; empty while queued. */
  data: z.string(),
  next_offset: z.number().nullable(),
})

export type StatementReply = z.output<typeof statementReply>
export type StatementPart = z.output<typeof statementPart>

export const statementOperations = {
  statement: operation({
    name: 'account_statement',
    subject: 'svc.account.<partner_id>.statement',
    permission: 'read',
    summary: 'An account\'s statement for a range of SAST days (`from`, `to`, both included, at ' +
      `most ${statement_days_max} days, not after today) as \`pdf\` or \`camt053\` ` +
      '(camt.053.001.08): opening and closing balance, every posted transaction with its ' +
      'running balance, credits, debits, fees and what was held at the end. Up to ' +
      `${statement_inline_lines_max} lines it is in the reply (\`content\`, base64, with ` +
      '`totals`); a larger range answers `queued` with a `job_id` at once, is made in the ' +
      'background and announced by `account.statement_ready`; fetch it with `statement_get`.',
    request: statementRequest,
    response: statementReply,
    sdk: 'accounts.statement',
  }),
  statementGet: operation({
    name: 'account_statement_get',
    subject: 'svc.account.<partner_id>.statement_get',
    permission: 'read',
    summary: 'A statement made in the background (its `job_id` from `statement` or from the ' +
      '`account.statement_ready` event): its status, totals and part of its file, base64 (at ' +
      `most ${statement_chunk_bytes_max} bytes from \`offset\`); \`next_offset\` is null at ` +
      'the end. Another partner\'s job id is not found.',
    request: z.strictObject({
      job_id: uuid(),
      offset: z.int({ error: 'must be a whole number of bytes' }).min(0, {
        error: 'must not be negative' }).max(2 ** 31 - 1).default(0),
    }),
    response: statementPart,
    sdk: 'accounts.statementGet',
  }),
  operatorStatement: operation({
    name: 'ops_account_statement',
    sdk: 'accounts.statement',
    subject: 'ops.account.statement',
    permission: 'operator',
    summary: 'Any account\'s statement, as `svc.account.<partner_id>.statement` makes it for its ' +
      `partner, in the reply only (\`content\`, base64): a range of more than ` +
      `${statement_inline_lines_max} lines, or a file of more than ${statement_inline_bytes_max} ` +
      'bytes, is refused (422): narrow the range, or have the partner ask for it (made in the ' +
      'background). Nothing is stored or announced; the call is audited.',
    request: statementRequest,
    response: statementReply,
    // `--format` is every command's (json or table).
    cli: { names: { format: 'file-format' } },
  }),
}
