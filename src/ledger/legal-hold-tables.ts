import type { Cents, NullableTimestamp, Timestamp } from '../db/column-types.ts'

// Kysely types of the legal holds table (legal-holds.ts; src/schema.ts's Database extends
// them through LedgerTables).

export interface LegalHoldsTable {
  id: string
  account_id: string
  partner_id: string
  amount: Cents
  /** The order it serves (e.g. a garnishee order's number), as the operator gave it. */
  reference: string
  /** When it ends by itself (the `accounts.hold_expiry` job releases it); null: never. */
  expires_at: NullableTimestamp
  placed_at: Timestamp
  /** The operator's credential that placed it. */
  placed_by: string
  /** Null while it holds. */
  released_at: NullableTimestamp
  /** The operator's credential that released it, or `system` for an expiry. */
  released_by: string | null
  release_reason: string | null
}

export interface LegalHoldTables {
  legal_holds: LegalHoldsTable
}
