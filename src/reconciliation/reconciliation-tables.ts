import type { Cents, Timestamp } from '../db/column-types.ts'

// Kysely types of the statements the clearing house sends of the bank's settlement account
// (camt.053 end-of-day statements, camt.054 intraday notifications), kept entry by entry for
// reconciliation (reconciliation-service.ts).

/** One statement or notification the bank applied. */
export interface RailStatementsTable {
  message_id: string
  /** `camt.053.001.08` or `camt.054.001.08`. */
  kind: string
  /** The statement's (or notification's) own `Id`. */
  report_id: string
  account_id: string
  /** The day it reports (`YYYY-MM-DD`): the closing balance's date, or the entries' booking. */
  statement_date: string
  /** Cents (negative: a debit balance); null for a notification. */
  opening_balance: Cents | null
  closing_balance: Cents | null
  entry_count: number
  /** `CreDtTm` as written. */
  issued_at: string
  recorded_at: Timestamp
}

/** One entry of a statement, as written. */
export interface RailStatementEntriesTable {
  message_id: string
  /** Its place in the statement, from 0. */
  position: number
  /** Cents, never negative: `credit_debit` says which way. */
  amount: Cents
  credit_debit: 'CRDT' | 'DBIT'
  reversal: boolean
  /** BOOK, PDNG, INFO, FUTR, or a proprietary status. */
  status: string
  booking_date: string | null
  entry_reference: string | null
  account_servicer_reference: string | null
  /** The first transaction's references in the entry's details. */
  end_to_end_id: string | null
  ref_message_id: string | null
  ref_tx_id: string | null
}

export interface ReconciliationTables {
  rail_statements: RailStatementsTable
  rail_statement_entries: RailStatementEntriesTable
}
