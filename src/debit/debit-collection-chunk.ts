import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { appendEvents, type NewEvent } from '../events/index.ts'
import type { HistoryRow, OrderRow } from './debit-store.ts'
import type { DebitOrderStatus } from './debit-tables.ts'
import { statusView } from './debit-view.ts'
import { historiesOf, insertHistory, writeCollections, writeOrders, type CollectionRow } from './debit-collection-store.ts'

// One chunk of a collection run's changes, gathered in memory under the rows' locks and
// written with one statement per table at the end of the chunk's transaction: the orders'
// new columns, their status_history entries, their collections and their `debit_order.*`
// events (the outbox; an event's data is the order as status returns it, with the entity).
// Each status change takes its event's snapshot at that moment, so an order that is
// collected and scheduled again in one chunk announces `successful` with that status.

const eventOf: Partial<Record<DebitOrderStatus, NewEvent['type']>> = {
  processing: 'debit_order.processing',
  successful: 'debit_order.successful',
  failed: 'debit_order.failed',
  disputed: 'debit_order.disputed',
}

export interface HistoryNote {
  description: string
  bank_reference?: string | null
  collection_date: string
}

export class CollectionChunk {
  private readonly orders = new Map<string, OrderRow>()
  private readonly collections = new Map<string, CollectionRow>()
  private readonly history: Array<Omit<HistoryRow, 'id'>> = []
  private readonly events: NewEvent[] = []

  private constructor(
    private readonly histories: Map<string, HistoryRow[]>,
    readonly now: Date,
  ) {}

  /** Reads the histories of the chunk's (locked) orders, which its events carry. */
  static async open(trx: Kysely<Database>, orderIds: readonly string[],
      now: Date): Promise<CollectionChunk> {
    return new CollectionChunk(await historiesOf(trx, orderIds), now)
  }

  /**
   * Records an order's new state and a history entry; a status with an event (processing,
   * successful, failed, disputed) also announces it, unless `quiet` (a retry's note).
   */
  record(order: OrderRow, status: DebitOrderStatus, note: HistoryNote, quiet = false): OrderRow {
    const updated: OrderRow = { ...order, status, updated_at: this.now }
    this.orders.set(order.id, updated)
    const entry = {
      debit_order_id: order.id,
      status,
      description: note.description,
      bank_reference: note.bank_reference ?? null,
      collection_date: note.collection_date,
      occurred_at: this.now,
    }
    this.history.push(entry)
    const history = this.histories.get(order.id) ?? []
    history.push({ id: '', ...entry })
    this.histories.set(order.id, history)
    const type = eventOf[status]
    if (type && !quiet) {
      this.events.push({
        type,
        partner_id: order.partner_id,
        resource_id: order.id,
        data: { ...statusView(updated, history), entity_id: order.entity_id },
        occurred_at: this.now,
      })
    }
    return updated
  }

  /** Changes of an order's columns that come with no history entry. */
  update(order: OrderRow): void {
    this.orders.set(order.id, { ...order, updated_at: this.now })
  }

  collection(row: CollectionRow): void {
    this.collections.set(`${row.debit_order_id}:${row.collection_date}`, row)
  }

  async flush(trx: Kysely<Database>): Promise<void> {
    await writeOrders(trx, [...this.orders.values()])
    await writeCollections(trx, [...this.collections.values()])
    await insertHistory(trx, this.history)
    if (this.events.length > 0) await appendEvents(trx, this.events)
  }
}
