import type { ColumnType } from 'kysely'

// Kysely types of the tables the sandbox owns (src/schema.ts's Database extends this).

export interface SandboxClockTable {
  /** Always 1: the table has one row. */
  id: number
  /**
   * Bank time minus wall time, in milliseconds (int8: pg reads it as a string, PGlite as bigint).
   */
  offset_ms: ColumnType<bigint | string, bigint | string | number, bigint | string | number>
  updated_at: ColumnType<Date, Date | string, Date | string>
}

/** A partner's own sandbox clock: how far ahead of the bank's it is (no row: with it). */
export interface SandboxPartnerClockTable {
  partner_id: string
  lead_ms: ColumnType<bigint | string, bigint | string | number, bigint | string | number>
  updated_at: ColumnType<Date, Date | string, Date | string>
}

export interface SandboxTables {
  sandbox_clock: SandboxClockTable
  sandbox_partner_clocks: SandboxPartnerClockTable
}
