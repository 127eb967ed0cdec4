import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import { insertUnnest, unnestRows, type PgType } from '../db/speed/arrays.ts'
import { assert } from '../errors.ts'
import type { DebitCollectionsTable, DebitOrderHistoryTable } from './debit-tables.ts'
import type { HistoryRow, OrderRow } from './debit-store.ts'

// The SQL of the collection runs (debit-collection.ts): which orders and collections are
// due, taking them under row locks, and set-based writes of a chunk's changes (one
// statement per table, whatever the chunk's size).

export type CollectionRow = Selectable<DebitCollectionsTable>

/**
 * The ids of the mandates among `mandateIds` that are no longer `active` (cancelled, say); one
 * array parameter, not one per id.
 */
export async function inactiveMandates(db: Kysely<Database>,
    mandateIds: readonly string[]): Promise<Set<string>> {
  if (mandateIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('debit_mandates')
    .select('id')
    .where('id', '=', sql<string>`any(${[...new Set(mandateIds)]}::uuid[])`)
    .where('status', '!=', 'active')
    .execute()
  return new Set(rows.map((row) => row.id))
}

/** Scheduled orders whose next collection is due by `date`, oldest date first. */
export async function dueScheduledOrderIds(db: Kysely<Database>, date: string,
    limit: number, partnerId?: string): Promise<string[]> {
  let query = db.selectFrom('debit_orders').select('id')
  // A partner's own run (its sandbox clock's): its orders only.
  if (partnerId !== undefined) query = query.where('partner_id', '=', partnerId)
  const rows = await query
    .where('status', '=', 'scheduled')
    .where('next_collection_date', '<=', date)
    .orderBy('next_collection_date')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((row) => row.id)
}

/**
 * Collections waiting for an attempt on `date`: taken to the bank (`processing`) and not
 * yet tried on that date (a first attempt, or an insufficient-funds retry).
 */
export async function openCollections(db: Kysely<Database>, date: string,
    limit: number, partnerId?: string): Promise<CollectionRow[]> {
  let query = db.selectFrom('debit_collections').selectAll()
  if (partnerId !== undefined) {
    query = query.where('debit_order_id', 'in', (eb) => eb.selectFrom('debit_orders')
      .select('debit_orders.id').where('debit_orders.partner_id', '=', partnerId))
  }
  return query
    .where('status', '=', 'processing')
    .where((eb) => eb.or([eb('last_attempt_date', 'is', null), eb('last_attempt_date', '<', date)]))
    .orderBy('collection_date')
    .orderBy('debit_order_id')
    .limit(limit)
    .execute()
}

/** An order's latest collected collection (successful, or disputed already), if any. */
export async function lastCollectedCollection(db: Kysely<Database>,
    orderId: string): Promise<CollectionRow | undefined> {
  return db
    .selectFrom('debit_collections')
    .selectAll()
    .where('debit_order_id', '=', orderId)
    .where('status', 'in', ['successful', 'disputed'])
    .orderBy('collection_date', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** Orders by id, locked for the rest of the transaction (in id order: no deadlocks). */
export async function ordersForUpdate(trx: Kysely<Database>,
    ids: readonly string[]): Promise<Map<string, OrderRow>> {
  if (ids.length === 0) return new Map()
  const rows = await trx
    .selectFrom('debit_orders')
    .selectAll()
    .where('id', '=', sql<string>`any(${[...new Set(ids)]}::uuid[])`)
    .orderBy('id')
    .forUpdate()
    .execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/** Orders by id, unlocked (what the rail needs to know about a collection). */
export async function ordersByIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string,
    OrderRow>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('debit_orders').selectAll().where('id', '=', sql<string>`any(${[...new Set(ids)]}::uuid[])`).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/**
 * Collections by order and date, locked in that order (callers lock their orders first).
 * Each is looked up in the primary key on its own (the lateral subquery, which PostgreSQL
 * does not flatten into a join): joined to the pairs, the plan hashed the whole table for
 * every chunk whenever the table had grown past its statistics, as it does during a run.
 */
export async function collectionsForUpdate(
  trx: Kysely<Database>,
  keys: ReadonlyArray<{ debit_order_id: string; collection_date: string }>,
): Promise<Map<string, CollectionRow>> {
  if (keys.length === 0) return new Map()
  const sorted = [...keys].sort((a, b) => compare(a.debit_order_id, b.debit_order_id)
    || compare(a.collection_date, b.collection_date))
  const { rows } = await sql<CollectionRow>`
    select c.* from ${unnestRows(sorted, [['debit_order_id', 'uuid'], ['collection_date', 'text']], 'k')}
    cross join lateral (
      select * from debit_collections
      where debit_order_id = k.debit_order_id and collection_date = k.collection_date
      for update
    ) c`.execute(trx)
  return new Map(rows.map((row) => [`${row.debit_order_id}:${row.collection_date}`, row]))
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Every history entry of these orders, in order, by order id: each order's entries looked
 * up in the order's index on their own (a lateral subquery, for the reason above).
 */
export async function historiesOf(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string,
    HistoryRow[]>> {
  const histories = new Map<string, HistoryRow[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return histories
  const { rows } = await sql<HistoryRow>`
    select h.* from unnest(${[...new Set(ids)]}::uuid[]) as o(id)
    cross join lateral (select * from debit_order_history where debit_order_id = o.id order by id) h`.execute(db)
  for (const row of rows) histories.get(row.debit_order_id)?.push(row)
  return histories
}

const order_columns: Array<[keyof OrderRow & string, PgType]> = [
  ['id', 'uuid'], ['status', 'text'], ['next_collection_date', 'text'], ['attempts', 'bigint'],
  ['first_attempt_date', 'text'], ['last_attempt_date', 'text'], ['collections_count', 'bigint'],
  ['processed_at', 'timestamptz'], ['bank_charges', 'bigint'], ['net_amount', 'bigint'],
    ['credit_tx_id', 'uuid'],
  ['bank_reference', 'text'], ['failure_reason', 'text'], ['disputed_at', 'timestamptz'],
    ['reversal_tx_id', 'uuid'],
  ['updated_at', 'timestamptz'],
]

/**
 * Writes the run's columns of these orders (one statement). The `any` makes the plan find
 * them through the primary key: joined to the rows alone, PostgreSQL read and hashed the
 * whole table for every chunk (a seq scan of 100,000 orders per 500 written).
 */
export async function writeOrders(trx: Kysely<Database>, rows: OrderRow[]): Promise<void> {
  if (rows.length === 0) return
  const result = await sql`
    update debit_orders as o set
      status = v.status, next_collection_date = v.next_collection_date, attempts = v.attempts,
      first_attempt_date = v.first_attempt_date, last_attempt_date = v.last_attempt_date,
      collections_count = v.collections_count, processed_at = v.processed_at,
      bank_charges = v.bank_charges, net_amount = v.net_amount, credit_tx_id = v.credit_tx_id,
      bank_reference = v.bank_reference, failure_reason = v.failure_reason,
      disputed_at = v.disputed_at, reversal_tx_id = v.reversal_tx_id,
      updated_at = v.updated_at
    from ${unnestRows(rows, order_columns)}
    where o.id = v.id and o.id = any(${rows.map((row) => row.id)}::uuid[])`.execute(trx)
  assert(Number(result.numAffectedRows) === rows.length, 'every order of the chunk was written')
}

const collection_columns: Array<[keyof CollectionRow & string, PgType]> = [
  ['debit_order_id', 'uuid'], ['collection_date', 'text'], ['status', 'text'],
    ['attempts', 'bigint'],
  ['first_attempt_date', 'text'], ['last_attempt_date', 'text'], ['amount', 'bigint'],
    ['bank_charges', 'bigint'],
  ['net_amount', 'bigint'], ['credit_tx_id', 'uuid'], ['reversal_tx_id', 'uuid'],
    ['bank_reference', 'text'],
  ['failure_reason', 'text'], ['submitted_at', 'timestamptz'], ['processed_at', 'timestamptz'],
    ['disputed_at', 'timestamptz'],
]

/** Inserts new collections and writes changed ones (one statement). */
export async function writeCollections(trx: Kysely<Database>,
    rows: CollectionRow[]): Promise<void> {
  if (rows.length === 0) return
  await sql`
    insert into debit_collections (${sql.join(collection_columns.map(([name]) => sql.ref(name)))})
    select * from ${unnestRows(rows, collection_columns)}
    on conflict (debit_order_id, collection_date) do update set
      status = excluded.status, attempts = excluded.attempts,
      first_attempt_date = excluded.first_attempt_date,
      last_attempt_date = excluded.last_attempt_date, bank_charges = excluded.bank_charges,
      net_amount = excluded.net_amount, credit_tx_id = excluded.credit_tx_id,
      reversal_tx_id = excluded.reversal_tx_id, bank_reference = excluded.bank_reference,
      failure_reason = excluded.failure_reason, submitted_at = excluded.submitted_at,
      processed_at = excluded.processed_at, disputed_at = excluded.disputed_at`.execute(trx)
}

type NewHistory = Omit<Selectable<DebitOrderHistoryTable>, 'id'>

const history_columns: Array<[keyof NewHistory & string, PgType]> = [
  ['debit_order_id', 'uuid'], ['status', 'text'], ['description', 'text'],
    ['bank_reference', 'text'],
  ['collection_date', 'text'], ['occurred_at', 'timestamptz'],
]

/** Appends history entries in the order given (one statement; ids follow that order). */
export async function insertHistory(trx: Kysely<Database>, rows: NewHistory[]): Promise<void> {
  await insertUnnest(trx, 'debit_order_history', rows, history_columns)
}
