import type { ColumnType } from 'kysely'

// Kysely types of the simulated debit rail's table (src/schema.ts's Database extends this).

export interface SimulatedDebitDisputesTable {
  debit_order_id: string
  /** `YYYY-MM-DD`: the disputed collection's date. */
  collection_date: string
  bank_reference: string
  reason: string
  /** When the debtor disputes it; handed to the bank from then on. */
  disputed_at: ColumnType<Date, Date | string, Date | string>
  acknowledged_at: ColumnType<Date | null, Date | string | null, Date | string | null>
}

export interface DebitRailTables {
  simulated_debit_disputes: SimulatedDebitDisputesTable
}
