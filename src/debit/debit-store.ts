import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import type {
  DebitMandatesTable,
  DebitOrderHistoryTable,
  DebitOrderStatus,
  DebitOrdersTable,
  MandateStatus,
} from './debit-tables.ts'

// The SQL of the debit tables that create, cancel, status and list use. Changes of an
// order are made under its row lock, and a mandate's changes under the mandate's lock,
// taken before any order lock (mandate cancel locks the mandate, then its orders), so
// concurrent cancels and collection runs take turns without deadlocks.

export type MandateRow = Selectable<DebitMandatesTable>
export type OrderRow = Selectable<DebitOrdersTable>
export type HistoryRow = Selectable<DebitOrderHistoryTable>
type Executor = Kysely<Database>

export async function insertMandate(trx: Executor,
    row: Insertable<DebitMandatesTable>): Promise<void> {
  await trx.insertInto('debit_mandates').values(row).execute()
}

export async function mandateOf(db: Executor, entityId: string,
    reference: string): Promise<MandateRow | undefined> {
  return db.selectFrom('debit_mandates').selectAll().where('entity_id', '=', entityId).where(
    'mandate_reference', '=', reference).executeTakeFirst()
}

export async function mandateForUpdate(trx: Executor, entityId: string,
    reference: string): Promise<MandateRow | undefined> {
  return trx
    .selectFrom('debit_mandates')
    .selectAll()
    .where('entity_id', '=', entityId)
    .where('mandate_reference', '=', reference)
    .forUpdate()
    .executeTakeFirst()
}

export async function mandateByIdForUpdate(trx: Executor, id: string): Promise<MandateRow
    | undefined> {
  return trx.selectFrom('debit_mandates').selectAll().where('id', '=', id).forUpdate()
    .executeTakeFirst()
}

export async function updateMandate(trx: Executor, id: string,
    changes: Updateable<DebitMandatesTable>): Promise<void> {
  await trx.updateTable('debit_mandates').set(changes).where('id', '=', id).execute()
}

export async function listMandates(
  db: Executor,
  entityId: string,
  filter: { status?: MandateStatus | undefined; limit: number; offset: number },
): Promise<{ rows: MandateRow[]; total: number }> {
  let query = db.selectFrom('debit_mandates').where('entity_id', '=', entityId)
  if (filter.status) query = query.where('status', '=', filter.status)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit)
      .offset(filter.offset).execute(),
    query.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.total) }
}

export async function insertOrder(trx: Executor, row: Insertable<DebitOrdersTable>): Promise<void> {
  await trx.insertInto('debit_orders').values(row).execute()
}

export async function orderOf(db: Executor, id: string): Promise<OrderRow | undefined> {
  return db.selectFrom('debit_orders').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function orderForUpdate(trx: Executor, id: string): Promise<OrderRow | undefined> {
  return trx.selectFrom('debit_orders').selectAll().where('id', '=', id).forUpdate()
    .executeTakeFirst()
}

/** The scheduled orders on a mandate, locked (mandate cancel cancels them). */
export async function scheduledOrdersOfMandateForUpdate(trx: Executor,
    mandateId: string): Promise<OrderRow[]> {
  return trx
    .selectFrom('debit_orders')
    .selectAll()
    .where('mandate_id', '=', mandateId)
    .where('status', '=', 'scheduled')
    .orderBy('id')
    .forUpdate()
    .execute()
}

export async function updateOrder(trx: Executor, id: string,
    changes: Updateable<DebitOrdersTable>): Promise<void> {
  await trx.updateTable('debit_orders').set(changes).where('id', '=', id).execute()
}

export async function appendHistory(trx: Executor,
    rows: Insertable<DebitOrderHistoryTable>[]): Promise<void> {
  if (rows.length === 0) return
  await trx.insertInto('debit_order_history').values(rows).execute()
}

export async function historyOf(db: Executor, orderId: string): Promise<HistoryRow[]> {
  return db.selectFrom('debit_order_history').selectAll().where('debit_order_id', '=', orderId)
    .orderBy('id').execute()
}

export interface OrderFilter {
  status?: DebitOrderStatus | undefined
  from_date?: string | undefined
  to_date?: string | undefined
  limit: number
  offset: number
}

/**
 * A page of an entity's orders (or, for operators, a partner's), newest created first (ties
 * by id), and how many match.
 */
export async function listOrders(db: Executor, owner: { entity_id?: string | undefined;
    partner_id?: string | undefined }, filter: OrderFilter): Promise<{ rows: OrderRow[];
    total: number }> {
  let query = db.selectFrom('debit_orders')
  if (owner.entity_id !== undefined) query = query.where('entity_id', '=', owner.entity_id)
  if (owner.partner_id !== undefined) query = query.where('partner_id', '=', owner.partner_id)
  assert(owner.entity_id !== undefined || owner.partner_id !== undefined,
    'a debit order list names its owner')
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.from_date) query = query.where('collection_date', '>=', filter.from_date)
  if (filter.to_date) query = query.where('collection_date', '<=', filter.to_date)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit)
      .offset(filter.offset).execute(),
    query.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.total) }
}

/** The order that used this clientTxId within the window (created after `cutoff`), if any. */
export async function liveKeyOf(db: Executor, partnerId: string, clientTxId: string,
    cutoff: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('debit_order_keys')
    .select('debit_order_id')
    .where('partner_id', '=', partnerId)
    .where('client_tx_id', '=', clientTxId)
    .where('created_at', '>', cutoff)
    .executeTakeFirst()
  return row?.debit_order_id
}

/**
 * Claims a clientTxId for an order in the caller's transaction: true when the key was new
 * or has outlived the window (then taken over), false when it is live (a duplicate). A
 * key is live for exactly the window: it is free again once `cutoff` reaches it. The
 * primary key makes two concurrent claims of one key take turns.
 */
export async function claimKey(trx: Executor, key: { partner_id: string; client_tx_id: string;
    debit_order_id: string }, now: Date, cutoff: Date): Promise<boolean> {
  const { rows } = await sql<{ debit_order_id: string }>`
    insert into debit_order_keys (partner_id, client_tx_id, debit_order_id, created_at)
    values (${key.partner_id}, ${key.client_tx_id}, ${key.debit_order_id}, ${now}::timestamptz)
    on conflict (partner_id, client_tx_id) do update set debit_order_id = excluded.debit_order_id, created_at = excluded.created_at
      where debit_order_keys.created_at <= ${cutoff}
    returning debit_order_id`.execute(trx)
  return rows.length === 1
}
