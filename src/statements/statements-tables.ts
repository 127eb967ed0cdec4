import type { Json, NullableTimestamp, Timestamp } from '../db/column-types.ts'

// Kysely types of the statements module's one table (statements-migration.ts).

/** A statement's totals, integer cents as strings (as the replies carry them). */
export interface StatementTotals {
  opening_balance: string
  closing_balance: string
  credits_count: number
  credits_sum: string
  debits_count: number
  debits_sum: string
  fees: string
  held_at_end: string
  lines: number
}

export interface AccountStatementsTable {
  id: string
  partner_id: string
  account_id: string
  format: 'pdf' | 'camt053'
  /** `YYYY-MM-DD` (SAST), both included. */
  from_date: string
  to_date: string
  origin: 'request' | 'monthly'
  state: 'queued' | 'ready'
  file_name: string
  content_type: string
  content: Uint8Array | null
  size: number | null
  sha256: string | null
  totals: Json<StatementTotals> | null
  created_at: Timestamp
  ready_at: NullableTimestamp
}

export interface StatementsTables {
  account_statements: AccountStatementsTable
}
