import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { appendEvent } from '../events/index.ts'
import { appendHistory, historyOf, updateOrder, type OrderRow } from './debit-store.ts'
import type { DebitOrderStatus } from './debit-tables.ts'
import { statusView } from './debit-view.ts'

// A debit order's change of status, written the one way: its row, a status_history entry
// and (for the statuses that have one) its `debit_order.*` event, all in the caller's
// transaction, with the order's row already locked by the caller. Cancel and mandate
// cancel use it; so may the collection runs.

const eventOf: Partial<Record<DebitOrderStatus, 'debit_order.processing' | 'debit_order.successful'
    | 'debit_order.failed' | 'debit_order.disputed' | 'debit_order.cancelled'>> = {
  processing: 'debit_order.processing',
  successful: 'debit_order.successful',
  failed: 'debit_order.failed',
  disputed: 'debit_order.disputed',
  cancelled: 'debit_order.cancelled',
}

/** A debit order event's data: the order as status returns it, and the entity it belongs to. */
export async function orderEventData(trx: Kysely<Database>, order: OrderRow): Promise<Record<string,
    unknown>> {
  return { ...statusView(order, await historyOf(trx, order.id)), entity_id: order.entity_id }
}

/**
 * Records that `order` (locked) is now `after.status`: the row's changes, one history
 * entry, and the event of that status (none for `scheduled`). Resolves with the new row.
 */
export async function recordOrderStatus(
  trx: Kysely<Database>,
  order: OrderRow,
  after: Partial<Omit<OrderRow, 'id' | 'created_seq' | 'metadata'>> & { status: DebitOrderStatus },
  entry: { description: string; bank_reference?: string | null; collection_date?: string | null },
  now: Date,
): Promise<OrderRow> {
  const changes = { ...after, updated_at: now }
  await updateOrder(trx, order.id, changes)
  await appendHistory(trx, [{
    debit_order_id: order.id, status: after.status, description: entry.description,
    bank_reference: entry.bank_reference ?? null, collection_date: entry.collection_date ?? null,
      occurred_at: now,
  }])
  const updated: OrderRow = { ...order, ...changes }
  const type = eventOf[after.status]
  if (type) {
    await appendEvent(trx, { type, partner_id: order.partner_id, resource_id: order.id,
      data: await orderEventData(trx, updated), occurred_at: now })
  }
  return updated
}

/**
 * Cancels a scheduled order (locked by the caller): `cancelled`, history, `debit_order.cancelled`.
 */
export async function cancelScheduledOrder(trx: Kysely<Database>, order: OrderRow, now: Date,
    description: string, reason: string | null): Promise<OrderRow> {
  return recordOrderStatus(trx, order, { status: 'cancelled', cancelled_at: now,
    cancel_reason: reason, next_collection_date: null }, { description }, now)
}
