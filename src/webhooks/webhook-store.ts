import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import { insertUnnestStatement, unnestRows, type PgType } from '../db/speed/arrays.ts'
import { assert } from '../errors.ts'
import type { WebhookDeliveriesTable } from './webhook-tables.ts'

// The SQL of webhooks: nothing else reads or writes the webhook_* tables.

export type DeliveryRow = Selectable<WebhookDeliveriesTable>

// One partner's deliveries about one resource form a lane: they go out one at a time in
// `seq` order. Whoever changes which delivery heads a lane (the dispatcher adding one, a
// job ending one, a redelivery) holds the lane's lock, a transaction-scoped advisory lock
// (the bank's keys are 727xxx; a two-key lock never meets a one-key one).
const lane_lock_key = 727003

export async function lockLane(trx: Kysely<Database>, partnerId: string,
    resourceId: string): Promise<void> {
  await lockLanes(trx, [{ partner_id: partnerId, resource_id: resourceId }])
}

export interface Lane {
  partner_id: string
  resource_id: string
}

/**
 * Takes several lanes' locks in one statement, in the order given: the event dispatcher
 * and a resumed endpoint take more than one, both in sortLanes' order, so neither waits on
 * the other's lanes.
 */
export async function lockLanes(trx: Kysely<Database>, lanes: readonly Lane[]): Promise<void> {
  assert(trx.isTransaction, 'a lane is locked inside a transaction')
  if (lanes.length === 0) return
  const keys = lanes.map((lane) => `${lane.partner_id}:${lane.resource_id}`)
  await sql`select pg_advisory_xact_lock(${sql.lit(lane_lock_key)}, hashtext(k)) from unnest(${keys}::text[]) as k`.execute(trx)
}

export async function endpointOf(db: Kysely<Database>, partnerId: string): Promise<string | null> {
  const row = await db.selectFrom('webhook_endpoints').select('url').where('partner_id', '=',
    partnerId).executeTakeFirst()
  return row?.url ?? null
}

/** The endpoints of these partners; a partner without one is not in the map. */
export async function endpointsOf(db: Kysely<Database>,
    partnerIds: readonly string[]): Promise<Map<string, string>> {
  if (partnerIds.length === 0) return new Map()
  const rows = await db.selectFrom('webhook_endpoints').select(['partner_id', 'url']).where(
    'partner_id', 'in', [...new Set(partnerIds)]).execute()
  return new Map(rows.map((row) => [row.partner_id, row.url]))
}

export async function saveEndpoint(db: Kysely<Database>, partnerId: string, url: string | null,
    now: Date): Promise<void> {
  if (url === null) {
    await db.deleteFrom('webhook_endpoints').where('partner_id', '=', partnerId).execute()
    return
  }
  await db
    .insertInto('webhook_endpoints')
    .values({ partner_id: partnerId, url, updated_at: now })
    .onConflict((oc) => oc.column('partner_id').doUpdateSet({ url, updated_at: now }))
    .execute()
}

export interface NewDelivery {
  event_id: string
  seq: bigint
  partner_id: string
  resource_id: string
  event_type: string
  endpoint_url: string | null
  body: string
  state: 'pending' | 'failed'
  last_error: string | null
  now: Date
}

const delivery_columns: Array<[keyof DeliveryInsert & string, PgType]> = [
  ['event_id', 'uuid'], ['seq', 'bigint'], ['partner_id', 'uuid'], ['resource_id', 'text'],
    ['event_type', 'text'],
  ['endpoint_url', 'text'], ['body', 'text'], ['state', 'text'], ['last_error', 'text'],
    ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
]

type DeliveryInsert = Omit<NewDelivery, 'now'> & { created_at: Date; updated_at: Date }

/**
 * Records deliveries (one statement, whatever their number), but none for an event that
 * has one already (handed over again); resolves with the event ids recorded.
 */
export async function insertDeliveries(trx: Kysely<Database>,
    deliveries: readonly NewDelivery[]): Promise<Set<string>> {
  if (deliveries.length === 0) return new Set()
  const rows = deliveries.map(({ now, ...d }) => ({ ...d, created_at: now, updated_at: now }))
  const { rows: inserted } = await sql<{ event_id: string }>`${insertUnnestStatement('webhook_deliveries', rows, delivery_columns)}
    on conflict ("event_id") do nothing
    returning "event_id"`.execute(trx)
  return new Set(inserted.map((row) => row.event_id))
}

export async function findDelivery(db: Kysely<Database>, eventId: string,
    options: { forUpdate?: boolean } = {}): Promise<DeliveryRow | undefined> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId)
  if (options.forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The pending delivery that heads the lane: the oldest by `seq`. */
export async function laneHead(db: Kysely<Database>, partnerId: string,
    resourceId: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('resource_id', '=', resourceId)
    .where('state', '=', 'pending')
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst()
}

/** The partner's lanes that have a pending delivery, in key order (the order to lock them in). */
export async function pendingLanes(db: Kysely<Database>, partnerId: string): Promise<Lane[]> {
  const rows = await db.selectFrom('webhook_deliveries').select('resource_id').distinct()
    .where('partner_id', '=', partnerId).where('state', '=', 'pending').execute()
  return sortLanes(rows.map((row) => ({ partner_id: partnerId, resource_id: row.resource_id })))
}

/**
 * Lanes in the order every caller that locks several takes their locks in (the dispatcher,
 * a resumed endpoint), so that two of them never wait on each other.
 */
export function sortLanes(lanes: Lane[]): Lane[] {
  const key = (lane: Lane) => `${lane.partner_id}:${lane.resource_id}`
  return lanes.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
}

/**
 * The heads of these lanes (those that have a pending delivery), in one statement: one
 * look-up of the lane index per lane, whatever the table's size.
 */
export async function laneHeads(db: Kysely<Database>, lanes: Lane[]): Promise<DeliveryRow[]> {
  if (lanes.length === 0) return []
  const { rows } = await sql<DeliveryRow>`
    select h.* from ${unnestRows(lanes, lane_columns, 'l')}
    cross join lateral (
      select * from webhook_deliveries d
      where d.partner_id = l.partner_id and d.resource_id = l.resource_id and d.state = 'pending'
      order by d.seq limit 1
    ) h`.execute(db)
  return rows
}

const lane_columns: Array<[keyof Lane, PgType]> = [['partner_id', 'uuid'], ['resource_id', 'text']]

/** The pending deliveries queued behind `afterSeq` in the lane, oldest first. */
export async function laneQueue(db: Kysely<Database>, partnerId: string, resourceId: string,
    afterSeq: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('resource_id', '=', resourceId)
    .where('state', '=', 'pending')
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
}

/**
 * Marks pending deliveries delivered by one attempt each that the receiver answered with `status`.
 */
export async function markDelivered(trx: Kysely<Database>, eventIds: readonly string[],
    status: number, now: Date): Promise<number> {
  if (eventIds.length === 0) return 0
  const result = await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      state: 'delivered',
      attempts: eb('attempts', '+', 1),
      first_attempt_at: eb.fn.coalesce('first_attempt_at', eb.val(now)),
      last_attempt_at: now,
      last_status_code: status,
      last_error: null,
      next_attempt_at: null,
      delivered_at: now,
      updated_at: now,
    }))
    .where('event_id', 'in', eventIds)
    .where('state', '=', 'pending')
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

export type DeliveryChange = Partial<
  Pick<
    DeliveryRow,
    | 'state' | 'attempts' | 'generation' | 'first_attempt_at' | 'last_attempt_at'
    | 'next_attempt_at' | 'last_status_code' | 'last_error' | 'delivered_at'
  >
>

export async function updateDelivery(trx: Kysely<Database>, eventId: string, change: DeliveryChange,
    now: Date): Promise<void> {
  const result = await trx.updateTable('webhook_deliveries').set({ ...change, updated_at: now })
    .where('event_id', '=', eventId).executeTakeFirst()
  assert(Number(result.numUpdatedRows) === 1, `delivery of event ${eventId} was not updated`)
}

/** One page of a partner's deliveries, newest first, below `beforeSeq` when given. */
export async function pageDeliveries(
  db: Kysely<Database>,
  partnerId: string,
  filter: { eventType?: string | undefined; beforeSeq?: bigint | undefined; limit: number },
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('partner_id', '=', partnerId)
  if (filter.eventType) query = query.where('event_type', '=', filter.eventType)
  if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq.toString())
  return query.orderBy('seq', 'desc').limit(filter.limit).execute()
}

export interface DeliveryFilter {
  partnerId?: string | undefined
  state?: string | undefined
  eventType?: string | undefined
  beforeSeq?: bigint | undefined
  limit: number
}

/**
 * One page of deliveries across partners (the operators' view), newest first. One partner's
 * page reads its (partner_id, seq) index; across partners, each partner's newest rows are
 * read through that index (a lateral join) and merged, so no page scans the whole table.
 */
export async function pageAllDeliveries(
  db: Kysely<Database>,
  filter: DeliveryFilter,
): Promise<DeliveryRow[]> {
  const state = filter.state ? sql`and d.state = ${filter.state}` : sql``
  const type = filter.eventType ? sql`and d.event_type = ${filter.eventType}` : sql``
  const before = filter.beforeSeq === undefined ? sql`` : sql`and d.seq < ${filter.beforeSeq.toString()}`
  const partners = filter.partnerId ? sql`(select ${filter.partnerId}::uuid as id)` : sql`(select id from partners)`
  const rows = await sql<DeliveryRow>`
    select d.* from ${partners} as p
    cross join lateral (
      select * from webhook_deliveries d
      where d.partner_id = p.id ${state} ${type} ${before}
      order by d.seq desc limit ${filter.limit}
    ) as d
    order by d.seq desc limit ${filter.limit}`.execute(db)
  return rows.rows
}

/**
 * Each partner's delivered and failed counts among its newest `window` deliveries (the failure
 * rate by partner): partners with none that ended are left out.
 */
export async function recentEndedByPartner(
  db: Kysely<Database>,
  window: number,
): Promise<Array<{ partner_id: string; delivered: number; failed: number }>> {
  const rows = await sql<{ partner_id: string; delivered: string; failed: string }>`
    select p.id as partner_id,
      count(*) filter (where d.state = 'delivered') as delivered,
      count(*) filter (where d.state = 'failed') as failed
    from partners p
    cross join lateral (
      select state from webhook_deliveries d where d.partner_id = p.id order by d.seq desc limit ${window}
    ) as d
    where d.state in ('delivered', 'failed')
    group by p.id`.execute(db)
  return rows.rows.map((r) => ({ partner_id: r.partner_id, delivered: Number(r.delivered),
    failed: Number(r.failed) }))
}

/** Each state's count among the newest `window` deliveries of each partner (the failure rate). */
export async function recentDeliveryStates(
  db: Kysely<Database>,
  window: number,
): Promise<Record<string, number>> {
  const rows = await sql<{ state: string; n: string }>`
    select d.state, count(*) as n from partners p
    cross join lateral (
      select state from webhook_deliveries d where d.partner_id = p.id order by d.seq desc limit ${window}
    ) as d
    group by d.state`.execute(db)
  return Object.fromEntries(rows.rows.map((r) => [r.state, Number(r.n)]))
}
