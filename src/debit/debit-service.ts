import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import { addDays, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import { Invalid, InvalidState, NotFound, Unprocessable, type FieldIssue } from '../errors.ts'
import { cents } from '../ledger/cents.ts'
import { debit_limits, type DebitCreateRequest } from './debit-contract.ts'
import { cancelScheduledOrder } from './debit-order-events.ts'
import { repeatOfOrder } from './debit-repeat.ts'
import { cancelDeadline, canCancelAt, earliestCollectionDate, toCollectionDay } from './debit-schedule.ts'
import {
  appendHistory,
  claimKey,
  historyOf,
  insertOrder,
  listOrders,
  liveKeyOf,
  mandateForUpdate,
  mandateOf,
  orderForUpdate,
  orderOf,
  updateMandate,
  type MandateRow,
  type OrderFilter,
  type OrderRow,
} from './debit-store.ts'
import { listItem, statusView } from './debit-view.ts'

// The four debit order operations (docs/guides/debit-orders.md): create schedules a
// collection under an active mandate into the entity's oldest account that takes payments
// (chosen now and kept); cancel, status and list. An account's closure cancels the scheduled
// orders that collect into it (cancelAllInto). Collecting is the collection runs' work
// (debit-collection*.ts), which take `scheduled` orders whose `next_collection_date` has
// come.

/** What debit orders need to know of accounts, through their service. */
export interface DebitDirectory {
  /** The entity's accounts, oldest first. */
  accountIdsOf(entityId: string): Promise<string[]>
}

interface CreatePlan {
  requested: string
  collectionDate: string
  endDate: string | null
  trackingDays: number
}

export class DebitService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly calendar: SouthAfricanCalendar,
    private readonly directory: DebitDirectory,
  ) {}

  async create(caller: Caller, entityId: string, request: DebitCreateRequest) {
    const partnerId = caller.partnerId as string
    const now = this.clock.now()
    const cutoff = new Date(now.getTime() - debit_limits.client_tx_id_window_ms)
    // A repeat of a request that was taken is a 409 before anything else is judged again.
    const original = await liveKeyOf(this.db, partnerId, request.clientTxId, cutoff)
    if (original) throw await this.repeat(request, entityId, original)
    const plan = this.checkDates(request, now)
    this.checkMandate(request, plan, await mandateOf(this.db, entityId, request.mandate_reference))
    const accountId = (await this.directory.accountIdsOf(entityId))[0]
    if (!accountId) throw Invalid.field('entity_id', 'the entity has no account to credit the ' +
      'collections to (its first account opens when it is approved)')
    const orderId = randomUUID()
    await this.db.transaction().execute(async (trx) => {
      // Under the mandate's lock: it is still active, and a once-off mandate still unused.
      const mandate = await mandateForUpdate(trx, entityId, request.mandate_reference)
      this.checkMandate(request, plan, mandate)
      if (!(await claimKey(trx, { partner_id: partnerId, client_tx_id: request.clientTxId,
          debit_order_id: orderId }, now, cutoff))) {
        const taken = await liveKeyOf(trx, partnerId, request.clientTxId, cutoff)
        throw await this.repeat(request, entityId, taken ?? orderId, trx)
      }
      await insertOrder(trx, orderRow(orderId, caller, entityId, accountId, mandate, request, plan,
        now))
      await appendHistory(trx, [{
        debit_order_id: orderId, status: 'scheduled', description: createdDescription(plan,
          request.frequency),
        bank_reference: null, collection_date: null, occurred_at: now,
      }])
      if (mandate.frequency === 'once_off') await updateMandate(trx, mandate.id,
        { used_by_order: orderId })
    })
    return {
      debit_order_id: orderId,
      status: 'scheduled' as const,
      collection_date: plan.collectionDate,
      amount: BigInt(request.amount).toString(),
      reference: request.reference,
    }
  }

  /** A repeat of a live clientTxId: duplicate or idempotency_key_reused (debit-repeat.ts). */
  private async repeat(request: DebitCreateRequest, entityId: string, originalId: string,
      db: Kysely<Database> = this.db) {
    return repeatOfOrder(request, entityId, originalId, await orderOf(db, originalId))
  }

  /** Lead time, the move to a business day, end_date and tracking_days (400s). */
  private checkDates(request: DebitCreateRequest, now: Date): CreatePlan {
    const today = toSast(now).date
    const collectionDate = toCollectionDay(request.collection_date, this.calendar)
    const earliest = earliestCollectionDate(now, this.calendar)
    if (collectionDate < earliest) {
      throw Invalid.field('collection_date', `must be on or after ${earliest}: at least 2 South ` +
        `African business days after today (${today} SAST)`)
    }
    const latest = addDays(today, debit_limits.collection_days_ahead_max)
    if (collectionDate > latest) throw Invalid.field('collection_date',
      `must be no later than ${latest} (${debit_limits.collection_days_ahead_max} days ahead)`)
    const moved = collectionDate === request.collection_date ? ''
      : ` (${request.collection_date} moved to the next business day)`
    if (request.end_date === undefined) {
      if (request.frequency !== 'once_off') throw Invalid.field('end_date',
        `is required for a recurring debit order (frequency ${request.frequency})`)
    } else {
      if (request.end_date < collectionDate) throw Invalid.field('end_date',
        `must not be before the collection date ${collectionDate}${moved}`)
      const endYear = Number(collectionDate.slice(0, 4)) + debit_limits.end_date_years_max
      const endMax = `${String(endYear)}${collectionDate.slice(4)}`
      if (request.end_date > endMax) throw Invalid.field('end_date', `must be no later ` +
        `than ${endMax} (${debit_limits.end_date_years_max} years after the collection date)`)
    }
    return {
      requested: request.collection_date,
      collectionDate,
      endDate: request.end_date ?? null,
      trackingDays: request.tracking_days ?? debit_limits.tracking_days_default,
    }
  }

  /** An unknown or inactive mandate is a 400; an order it does not cover is a 422. */
  private checkMandate(request: DebitCreateRequest, plan: CreatePlan, mandate: MandateRow
      | undefined): asserts mandate is MandateRow {
    if (!mandate) throw Invalid.field('mandate_reference',
      'no mandate of this entity has this reference')
    if (mandate.status !== 'active') {
      throw Invalid.field('mandate_reference',
        `the mandate is ${mandate.status}; a debit order needs an active mandate`)
    }
    const issues: FieldIssue[] = []
    if (BigInt(request.amount) > cents(mandate.max_amount)) issues.push({ field: 'amount',
      message: `is over the mandate's max_amount of ${cents(mandate.max_amount)} cents` })
    for (const field of ['account_number', 'account_type', 'branch_code'] as const) {
      if (request[field] !== mandate[field]) issues.push(
        { field, message: 'differs from the mandate' })
    }
    if (sameName(request.account_holder_name) !== sameName(
      mandate.account_holder_name)) issues.push({ field: 'account_holder_name',
      message: 'differs from the mandate' })
    if (request.frequency !== mandate.frequency) issues.push(
      { field: 'frequency', message: `must be the mandate's frequency (${mandate.frequency})` })
    if (mandate.frequency === 'once_off' && mandate.used_by_order !== null) issues.push({
      field: 'mandate_reference', message: 'the once_off mandate has served its one debit order' })
    if (mandate.first_collection_date !== null
        && plan.collectionDate < mandate.first_collection_date) {
      issues.push({ field: 'collection_date', message: `must not be before the mandate's ` +
        `first_collection_date ${mandate.first_collection_date}` })
    }
    if (issues.length > 0) throw new Unprocessable(`the mandate does not cover this debit ` +
      `order: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, issues)
  }

  async cancel(partnerId: string, entityId: string, request: { debit_order_id: string;
      reason?: string | undefined }) {
    return this.db.transaction().execute(async (trx) => {
      const order = await orderForUpdate(trx, request.debit_order_id)
      if (!order || order.partner_id !== partnerId
        || order.entity_id !== entityId) throw new NotFound('debit order')
      if (order.status !== 'scheduled') {
        throw InvalidState.field('debit_order_id',
          `the debit order is ${order.status}; only a scheduled debit order can be cancelled`, 400)
      }
      const now = this.clock.now()
      const date = order.next_collection_date ?? order.collection_date
      if (!canCancelAt(now, date)) {
        throw InvalidState.field('debit_order_id', `too late to cancel: the collection on ` +
          `${date} could be cancelled until 24 hours before 00:00 SAST that day ` +
          `(${formatTimestamp(cancelDeadline(date))})`, 400)
      }
      const reason = request.reason ?? null
      await cancelScheduledOrder(trx, order, now, reason ? `cancelled by the partner: ${reason}`
        : 'cancelled by the partner', reason)
      return { debit_order_id: order.id, status: 'cancelled' as const,
        cancelled_at: formatTimestamp(now) }
    })
  }

  /** Cancels the scheduled orders that collect into an account (its closure); how many. */
  /**
   * Locks the debit orders that collect into the account and are live (scheduled, or
   * `processing`: submitted to the debtor's bank), in the closing account's transaction;
   * answers how many are processing. A collection run that takes an order to processing
   * holds the order's lock until it commits, so a close either waits and counts it, or locks
   * it first, cancels it, and the run then finds it cancelled and leaves it.
   */
  async lockCollectionsInto(trx: Kysely<Database>, accountId: string): Promise<number> {
    const orders = await trx.selectFrom('debit_orders').select(['id', 'status'])
      .where('account_id', '=', accountId).where('status', 'in', ['scheduled', 'processing'])
      .orderBy('id').forUpdate().execute()
    return orders.filter((order) => order.status === 'processing').length
  }

  async cancelAllInto(trx: Kysely<Database>, accountId: string, reason: string):
      Promise<number> {
    const orders = await trx.selectFrom('debit_orders').selectAll()
      .where('account_id', '=', accountId).where('status', '=', 'scheduled').orderBy('id')
      .forUpdate().execute()
    const now = this.clock.now()
    for (const order of orders) {
      await cancelScheduledOrder(trx, order, now, `cancelled: the account it collects into ` +
        `was closed (${reason})`, reason)
    }
    return orders.length
  }

  async status(partnerId: string, entityId: string, debitOrderId: string) {
    const order = await this.ownOrder(partnerId, entityId, debitOrderId)
    return statusView(order, await historyOf(this.db, order.id))
  }

  async list(entityId: string, request: Partial<Pick<OrderFilter, 'status' | 'from_date'
      | 'to_date' | 'limit' | 'offset'>>) {
    if (request.from_date && request.to_date && request.from_date > request.to_date) {
      throw Invalid.field('to_date', `must not be before from_date ${request.from_date}`)
    }
    const limit = request.limit ?? debit_limits.list_limit_default
    const offset = request.offset ?? 0
    const { rows, total } = await listOrders(this.db, { entity_id: entityId },
      { ...request, limit, offset })
    return { debit_orders: rows.map(listItem), total, limit, offset }
  }

  /**
   * The operators' view (`bank debit list --partner P`): a partner's orders, each with its entity.
   */
  async listForOperator(request: { partner_id: string; entity_id?: string
      | undefined } & Partial<Pick<OrderFilter, 'status' | 'limit' | 'offset'>>) {
    const limit = request.limit ?? debit_limits.list_limit_default
    const offset = request.offset ?? 0
    const owner = { partner_id: request.partner_id, entity_id: request.entity_id }
    const { rows, total } = await listOrders(this.db, owner, { status: request.status, limit,
      offset })
    return { debit_orders: rows.map((row) => ({ ...listItem(row), entity_id: row.entity_id })),
      total, limit, offset }
  }

  /** The order if it is this entity's (of this partner): another's is answered as unknown. */
  private async ownOrder(partnerId: string, entityId: string, id: string): Promise<OrderRow> {
    const order = await orderOf(this.db, id)
    if (!order || order.partner_id !== partnerId
      || order.entity_id !== entityId) throw new NotFound('debit order')
    return order
  }
}

/** Account holder names compare without regard to case or repeated spaces. */
function sameName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase()
}

function createdDescription(plan: CreatePlan, frequency: string): string {
  const moved = plan.collectionDate === plan.requested ? ''
    : ` (asked for ${plan.requested}, not a South African business day)`
  const until = frequency === 'once_off' ? 'once' : `${frequency} until ${plan.endDate}`
  return `scheduled: first collection on ${plan.collectionDate}${moved}, ${until}`
}

function orderRow(
  id: string, caller: Caller, entityId: string, accountId: string, mandate: MandateRow,
  request: DebitCreateRequest, plan: CreatePlan, now: Date,
) {
  return {
    id, partner_id: caller.partnerId as string, entity_id: entityId, account_id: accountId,
      mandate_id: mandate.id,
    mandate_reference: mandate.mandate_reference, client_tx_id: request.clientTxId,
      amount: BigInt(request.amount),
    account_holder_name: request.account_holder_name, account_number: request.account_number,
    account_type: request.account_type, branch_code: request.branch_code,
      reference: request.reference,
    frequency: request.frequency, requested_collection_date: plan.requested,
      collection_date: plan.collectionDate,
    next_collection_date: plan.collectionDate, end_date: plan.endDate,
      tracking_days: plan.trackingDays,
    notification_email: request.notification_email ?? null,
    metadata: request.metadata === undefined ? null : JSON.stringify(request.metadata),
    status: 'scheduled' as const, first_attempt_date: null, last_attempt_date: null,
      processed_at: null,
    bank_charges: null, net_amount: null, credit_tx_id: null, bank_reference: null,
      failure_reason: null,
    disputed_at: null, reversal_tx_id: null, cancelled_at: null, cancel_reason: null,
    added_by: caller.credentialId, created_at: now, updated_at: now,
  }
}
