import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import { unnestRows } from '../db/speed/arrays.ts'
import type { Database } from '../schema.ts'
import type { BulkPaymentItemsTable, BulkPaymentsTable, PaymentStatus } from './bulk-tables.ts'

// The SQL of bulk payments' own tables. Every change of a batch or of its payments is made
// under the batch row's lock (`batchForUpdate`), taken before any account lock, so that
// concurrent verifies, cancels, expiries and processing runs of one batch take turns.

export type BatchRow = Selectable<BulkPaymentsTable>
export type ItemRow = Selectable<BulkPaymentItemsTable>
type Executor = Kysely<Database>

export async function insertBatch(trx: Executor, batch: Insertable<BulkPaymentsTable>,
    items: Insertable<BulkPaymentItemsTable>[]): Promise<void> {
  await trx.insertInto('bulk_payments').values(batch).execute()
  // 16 columns of at most 1000 rows: one statement, well under the parameter limit.
  await trx.insertInto('bulk_payment_items').values(items).execute()
}

/** The partner's batch by its id, locked for the rest of the transaction. */
export async function batchForUpdate(trx: Executor, partnerId: string,
    bulkPaymentId: string): Promise<BatchRow | undefined> {
  return trx
    .selectFrom('bulk_payments')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('bulk_payment_id', '=', bulkPaymentId)
    .forUpdate()
    .executeTakeFirst()
}

/** A batch by its row id, not locked (a look before sending its payments). */
export async function batchByUuid(db: Executor, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('bulk_payments').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function batchByUuidForUpdate(trx: Executor, id: string): Promise<BatchRow
    | undefined> {
  return trx.selectFrom('bulk_payments').selectAll().where('id', '=', id).forUpdate()
    .executeTakeFirst()
}

export async function batchOf(db: Executor, partnerId: string,
    bulkPaymentId: string): Promise<BatchRow | undefined> {
  return db
    .selectFrom('bulk_payments')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .where('bulk_payment_id', '=', bulkPaymentId)
    .executeTakeFirst()
}

/** Batches of any partner with this id (the sandbox operator's look-up). */
export async function batchesById(db: Executor, bulkPaymentId: string,
    partnerId?: string): Promise<BatchRow[]> {
  let query = db.selectFrom('bulk_payments').selectAll().where('bulk_payment_id', '=',
    bulkPaymentId)
  if (partnerId) query = query.where('partner_id', '=', partnerId)
  return query.limit(2).execute()
}

export async function itemsOf(db: Executor, batchId: string): Promise<ItemRow[]> {
  return db.selectFrom('bulk_payment_items').selectAll().where('batch_id', '=', batchId).orderBy(
    'position').execute()
}

export async function updateBatch(trx: Executor, id: string,
    change: Partial<Insertable<BulkPaymentsTable>>): Promise<void> {
  const result = await trx.updateTable('bulk_payments').set(change).where('id', '=', id)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) !== 1) throw new Error(
    `assertion failed: batch ${id} was not updated`)
}

export async function setAllItems(trx: Executor, batchId: string,
    status: PaymentStatus): Promise<void> {
  await trx.updateTable('bulk_payment_items').set({ status }).where('batch_id', '=', batchId)
    .execute()
}

/** Gives payments their ledger transaction, one statement for the lot. */
export async function setItemTxIds(trx: Executor, batchId: string, rows: Array<{ position: number;
    tx_id: string }>): Promise<void> {
  if (rows.length === 0) return
  await sql`
    update bulk_payment_items as i set tx_id = v.tx_id
    from ${unnestRows(rows, [['position', 'bigint'], ['tx_id', 'uuid']])}
    where i.batch_id = ${batchId} and i.position = v.position`.execute(trx)
}

/** Records the final state of payments, one statement for the lot. */
export async function finishItems(
  trx: Executor,
  batchId: string,
  rows: Array<{ position: number; status: PaymentStatus; error_message: string | null;
    processed_at: Date }>,
): Promise<void> {
  if (rows.length === 0) return
  await sql`
    update bulk_payment_items as i set status = v.status, error_message = v.error_message, processed_at = v.processed_at
    from ${unnestRows(rows, [['position', 'bigint'], ['status', 'text'], ['error_message', 'text'], ['processed_at', 'timestamptz']])}
    where i.batch_id = ${batchId} and i.position = v.position`.execute(trx)
}

/** Where a page of batches with open EFTs ended: its last batch's verify time and id. */
export interface BatchCursor {
  verified_at: Date
  id: string
}

/**
 * Batches still paying out whose EFT payments wait for a clearing cycle (verified by
 * `before`), oldest verified first, a page after `after`: paged by position rather than by
 * what was sent, so batches whose open EFTs cannot go yet (held in a screening review, or
 * sent and not answered) never hide the ones after them.
 */
export async function batchesWithOpenEfts(db: Executor, before: Date, limit: number,
    after?: BatchCursor): Promise<Array<{ id: string; verified_at: Date }>> {
  let query = db
    .selectFrom('bulk_payments as b')
    .select(['b.id', 'b.verified_at'])
    .where('b.status', '=', 'processing')
    .where('b.verified_at', '<=', before)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('bulk_payment_items as i')
          .select('i.position')
          .whereRef('i.batch_id', '=', 'b.id')
          .where('i.status', '=', 'processing')
          .where('i.real_time', '=', false)
          .where('i.tx_id', 'is not', null),
      ),
    )
  if (after) {
    query = query.where((eb) => eb.or([eb('b.verified_at', '>', after.verified_at),
      eb.and([eb('b.verified_at', '=', after.verified_at), eb('b.id', '>', after.id)])]))
  }
  const rows = await query.orderBy('b.verified_at').orderBy('b.id').limit(limit).execute()
  return rows.map((r) => ({ id: r.id, verified_at: r.verified_at! }))
}

/** The payment of a batch that has this ledger transaction, if any. */
export async function itemByTxId(db: Executor, txId: string): Promise<ItemRow | undefined> {
  return db.selectFrom('bulk_payment_items').selectAll().where('tx_id', '=', txId)
    .executeTakeFirst()
}
