import { sql, type Kysely, type RawBuilder } from 'kysely'
import { unnestRows } from '../db/speed/arrays.ts'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import type { EventType } from './event-types.ts'

// The SQL of the outbox: the `events` table belongs to events/ and nothing else writes it.

/** An event as it is stored and as subscribers receive it. */
export interface OutboxEvent {
  /** A UUID; it becomes the webhook's `webhook-id`, the same on every delivery attempt. */
  id: string
  /** Position in the outbox: events are handed over in this order. */
  seq: bigint
  type: EventType
  /** The partner the event belongs to; null for the bank's own events. */
  partner_id: string | null
  /** The resource the event is about (a batch id, a debit order id, a clearing cycle). */
  resource_id: string
  data: Record<string, unknown>
  /** When the change happened, on the bank's clock. */
  occurred_at: Date
  /** Where this event's webhook goes instead of the partner's endpoint (a batch's callback_url). */
  endpoint_url: string | null
}

export interface EventRow {
  id: string
  type: EventType
  partner_id: string | null
  resource_id: string
  /** The event's data as JSON text. */
  data: string
  occurred_at: Date
  endpoint_url: string | null
}

/**
 * Inserts the rows, each pending, in one statement (`unnest`, one array parameter per
 * column). Rows take their `seq` in the order given, because the set-returning `unnest`
 * feeds the insert in array order: events one transaction appends together keep the order
 * it gave them.
 */
export async function insertEvents(trx: Kysely<Database>, rows: EventRow[]): Promise<void> {
  if (rows.length === 0) return
  const result = await sql`with ${appendedQuery(rows)}
    insert into events_pending (seq) select seq from appended`.execute(trx)
  assert(result.numAffectedRows === BigInt(rows.length),
    `inserted ${result.numAffectedRows} of ${rows.length} events`)
}

/** `appended as (insert into events … returning seq)` over the rows, in their order. */
function appendedQuery(rows: EventRow[]): RawBuilder<unknown> {
  const source = unnestRows(rows, [
    ['id', 'uuid'],
    ['type', 'text'],
    ['partner_id', 'uuid'],
    ['resource_id', 'text'],
    ['data', 'text'],
    ['occurred_at', 'timestamptz'],
    ['endpoint_url', 'text'],
  ])
  return sql`appended as (
      insert into events (id, type, partner_id, resource_id, data, occurred_at, endpoint_url)
      select id, type, partner_id, resource_id, data::jsonb, occurred_at, endpoint_url from ${source}
      returning seq
    )`
}

/**
 * The same insert as WITH queries (`appended`, `appended_pending`) of another statement: a
 * group's one write (ledger-batch.ts flush guards) appends its events with its change. The
 * statement fails whole, events included, when its condition does not hold.
 */
export function insertEventsQueries(rows: EventRow[]): RawBuilder<unknown>[] {
  if (rows.length === 0) return []
  return [appendedQuery(rows), sql`appended_pending as (insert into events_pending (seq) select seq from appended)`]
}

// Every instance's dispatcher asks for this lock; the bank's advisory lock keys are 727xxx
// (727001 guards the operator bootstrap in app.ts).
const dispatch_lock_key = 727002

/**
 * Takes the dispatcher's lock for the rest of the transaction, or answers false at once
 * when another transaction (another instance's dispatcher) holds it.
 */
export async function tryLockDispatch(trx: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(dispatch_lock_key)}) as locked`.execute(trx)
  return rows[0]?.locked === true
}

/**
 * The oldest events not yet handed over, in `seq` order (read off the pending rows' primary key).
 */
export async function selectPending(trx: Kysely<Database>, limit: number): Promise<OutboxEvent[]> {
  const { rows } = await sql<Omit<OutboxEvent,
    'seq' | 'type'> & { seq: string | bigint; type: string }>`
    select e.id, e.seq, e.type, e.partner_id, e.resource_id, e.data, e.occurred_at, e.endpoint_url
    from (select seq from events_pending order by seq limit ${limit}) as p
    join events as e on e.seq = p.seq
    order by p.seq`.execute(trx)
  return rows.map((row) => ({
    id: row.id,
    // int8 arrives as a string from pg and as a bigint from PGlite.
    seq: BigInt(row.seq),
    // Only appendEvent writes this table and it accepts known types only. A type this
    // version does not know (written by a newer instance during an upgrade) still reaches
    // `*` and family subscribers, which match on the name.
    type: row.type as EventType,
    partner_id: row.partner_id,
    resource_id: row.resource_id,
    data: row.data,
    occurred_at: row.occurred_at,
    endpoint_url: row.endpoint_url,
  }))
}

/**
 * Marks the events handed over (their pending rows go); every one of them must still have been
 * pending.
 */
export async function markDispatched(trx: Kysely<Database>,
    seqs: readonly bigint[]): Promise<void> {
  if (seqs.length === 0) return
  const result = await sql`delete from events_pending where seq = any(${seqs.map(String)}::int8[])`.execute(trx)
  // Under the dispatch lock nobody else marks events; a shortfall means two dispatchers
  // handed the same events over, which must stop this one rather than pass unnoticed.
  assert(result.numAffectedRows === BigInt(seqs.length),
    `marked ${result.numAffectedRows} of ${seqs.length} events dispatched`)
}
