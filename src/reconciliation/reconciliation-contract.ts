import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { timestamp } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Reconciliation of the bank's settlement account against the clearing house's statements
// (camt.053/camt.054): the statements received, and one day's matched totals and breaks.

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date, YYYY-MM-DD' })
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`))
    && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
  { error: 'must be a real date, YYYY-MM-DD' })

const statement = z.object({
  message_id: z.string(),
  kind: z.enum(['camt.053.001.08', 'camt.054.001.08']),
  report_id: z.string(),
  account_id: z.string(),
  statement_date: z.string(),
  opening_balance: centsString.nullable(),
  closing_balance: centsString.nullable(),
  entry_count: z.number(),
  issued_at: z.string(),
  recorded_at: timestamp,
})

const side = z.object({ count: z.number(), sum: centsString })
const totals = z.object({ credits: side, debits: side })

const reconciliationBreak = z.object({
  kind: z.enum(['not_in_ledger', 'not_in_statement', 'amount_differs', 'ledger_differs',
    'duplicate_entry']),
  credit_debit: z.enum(['CRDT', 'DBIT']),
  end_to_end_id: z.string().nullable(),
  tx_id: z.string().nullable(),
  statement_amount: centsString.nullable(),
  ledger_amount: centsString.nullable(),
  message_id: z.string().nullable(),
  position: z.number().nullable(),
  detail: z.string(),
})

export const reconciliationOperations = {
  railsStatements: operation({
    name: 'ops_rails_statements',
    sdk: 'rails.statements',
    subject: 'ops.rails.statements',
    permission: 'operator',
    summary: "The clearing house's statements (camt.053) and notifications (camt.054) of the " +
      "bank's settlement account the bank received, newest day first: at most `limit` (50 " +
      'by default), of days before `before` when given.',
    request: z.strictObject({
      before: day.optional(),
      limit: z.number().int().min(1).max(500).optional(),
    }),
    response: z.object({ statements: z.array(statement) }),
  }),
  railsReconcile: operation({
    name: 'ops_rails_reconcile',
    sdk: 'rails.reconcile',
    subject: 'ops.rails.reconcile',
    permission: 'operator',
    summary: "Reconciles a day (South African date) of the bank's settlement account: every " +
      "booked entry of the day's camt.053 (or, before it comes, the day's camt.054) matched by " +
      "end-to-end id, direction and amount to a payment the bank's records and ledger hold, " +
      "and every payment the bank's records put on the day found on a statement. Answers the " +
      'totals of both sides, what matched, and each break (at most 1,000 listed; ' +
      '`breaks_count` counts them all). Changes nothing.',
    request: z.strictObject({ date: day }),
    response: z.object({
      date: z.string(),
      source: z.enum(['statement', 'notifications', 'none']),
      statements: z.array(statement),
      statement_totals: totals,
      not_booked: z.number(),
      ledger_totals: totals,
      matched: side,
      on_other_days: z.number(),
      breaks_count: z.number(),
      breaks: z.array(reconciliationBreak),
    }),
    cli: { positionals: ['date'] },
  }),
}
