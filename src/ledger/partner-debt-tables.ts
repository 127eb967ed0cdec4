import type { ColumnType } from 'kysely'

// Kysely types of the partner-debt table (src/schema.ts's Database extends this).

export interface PartnerDebtsTable {
  partner_id: string
  /** Outstanding cents (int8: pg reads it as a string, PGlite as bigint). */
  owed: ColumnType<bigint | string, bigint | string | number, bigint | string | number>
  updated_at: ColumnType<Date, Date | string, Date | string>
}

export interface PartnerDebtTables {
  partner_debts: PartnerDebtsTable
}
