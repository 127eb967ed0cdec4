import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, Json } from '../db/column-types.ts'

// Kysely types of the outbox's tables (src/schema.ts's Database extends EventTables).

export interface EventsTable {
  id: string
  seq: Generated<string>
  type: string
  partner_id: string | null
  resource_id: string
  data: Json<Record<string, unknown>>
  occurred_at: Timestamp
  endpoint_url: string | null
}

/**
 * The events not yet handed over (src/events): a row per event, deleted by the dispatch that hands
 * it over.
 */
export interface EventsPendingTable {
  seq: ColumnType<bigint | string, bigint | string, never>
}

export interface EventTables {
  events: EventsTable
  events_pending: EventsPendingTable
}
