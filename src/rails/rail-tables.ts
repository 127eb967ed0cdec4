import type { Timestamp, NullableTimestamp } from '../db/column-types.ts'
import type { DebitRailTables } from './debit-rail-tables.ts'

// Kysely types of the simulated rails' tables (src/schema.ts's Database extends RailTables):
// the payments the simulated rail will send back, and the simulated debit rail's own.

/** Owned by the simulated rail (src/rails/simulated-rail.ts): payments it will send back. */
export interface SimulatedRailReturnsTable {
  tx_id: string
  reason: string
  created_at: Timestamp
  collected_at: NullableTimestamp
}

export interface RailTables extends DebitRailTables {
  simulated_rail_returns: SimulatedRailReturnsTable
}
