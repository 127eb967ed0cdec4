import { randomUUID } from 'node:crypto'
import type { Kysely, RawBuilder } from 'kysely'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import { insertEvents, insertEventsQueries, type EventRow } from './event-store.ts'
import { isEventType, type EventType } from './event-types.ts'

// The outbox: a capability announces a change by appending an event in the same database
// transaction as the change itself. Both commit together or neither does, so no event is
// lost when the process dies after the commit, and none announces a change that rolled
// back. The dispatcher (event-dispatcher.ts) hands events to subscribers afterwards.

export interface NewEvent {
  type: EventType
  /** The partner the event belongs to; null for the bank's own events (clearing). */
  partner_id: string | null
  /** The resource the event is about: events of one resource are handed over in order. */
  resource_id: string
  /**
   * The resource as its status operation returns it, in wire form: JSON-safe values only
   * (amounts as the contract writes them, never a bigint).
   */
  data: Record<string, unknown>
  /** When the change happened, on the bank's clock (not the database's). */
  occurred_at: Date
  /**
   * Where the partner wants this event's webhook instead of its endpoint (a bulk batch's
   * `callback_url`); absent for the partner's default endpoint.
   */
  endpoint_url?: string | null
}

/** Appends one event in the caller's transaction; resolves with its id (a UUID). */
export async function appendEvent(trx: Kysely<Database>, event: NewEvent): Promise<string> {
  const [id] = await appendEvents(trx, [event])
  return id!
}

/**
 * Appends events in the caller's transaction with one statement; they take their places
 * in the outbox in the order given. Resolves with their ids in the same order.
 */
export async function appendEvents(trx: Kysely<Database>,
    events: readonly NewEvent[]): Promise<string[]> {
  // Appending outside a transaction would commit the event on its own, before the change
  // it announces and whether or not that change commits.
  assert(trx.isTransaction,
    'an event must be appended in the transaction of the change it announces')
  const rows = events.map(toRow)
  await insertEvents(trx, rows)
  return rows.map((row) => row.id)
}

/**
 * Appends `events` as WITH queries of another statement of the change's transaction (a
 * card group's one write, cards/card-authorizations.ts): in it or not at all.
 */
export function appendEventsQueries(events: readonly NewEvent[]): RawBuilder<unknown>[] {
  return insertEventsQueries(events.map(toRow))
}

function toRow(event: NewEvent): EventRow {
  assert(isEventType(event.type), `unknown event type ${JSON.stringify(event.type)}`)
  assert(typeof event.resource_id === 'string' && event.resource_id !== '',
    `event ${event.type} needs a resource_id`)
  assert(event.occurred_at instanceof Date && !Number.isNaN(event.occurred_at.getTime()),
    `event ${event.type} needs a valid occurred_at`)
  const data = event.data as unknown
  assert(typeof data === 'object' && data !== null && !Array.isArray(data),
    `event ${event.type} data must be an object`)
  return {
    id: randomUUID(),
    type: event.type,
    partner_id: event.partner_id,
    resource_id: event.resource_id,
    data: JSON.stringify(data),
    occurred_at: event.occurred_at,
    endpoint_url: event.endpoint_url ?? null,
  }
}
