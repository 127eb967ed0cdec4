import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { assert, Unavailable } from '../errors.ts'
import { appendEvents, type EventDispatcher, type NewEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { eft_submission_group } from '../transfers/clearing-service.ts'
import { cents } from '../ledger/cents.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { RailOutcome, RailPayment } from '../rails/rail.ts'
import type { IsoRail, OutgoingTransfer, PayoutStatus, SettledCounts } from '../rails/iso-rail.ts'
import { toSast } from '../calendar/sa-calendar.ts'
import type { PaymentAdvices } from '../transfers/payment-advice.ts'
import { paymentRows, paymentSettlements, type PaymentRow } from '../ledger/bulk-journals.ts'
import {
  batchByUuid, batchByUuidForUpdate, batchesWithOpenEfts, finishItems, itemByTxId, itemsOf,
  setItemTxIds, updateBatch, type BatchCursor, type BatchRow, type ItemRow,
} from './bulk-store.ts'
import { batchView, paymentView } from './bulk-view.ts'
import { newRowId } from '../ledger/row-id.ts'
import { bulk_process_job_limits, bulk_eft_cycle_job_limits } from './bulk-limits.ts'
import { screening_failed_reason, type PayoutScreening } from '../transfers/payout-screening.ts'
import type { CheckedSubject } from '../screening/screening-reviews.ts'

// Paying out a verified batch, as jobs (src/jobs):
//  - `bulk.process` (one per batch, enqueued by verify): gives every payment its own
//    ledger row in one transaction, then sends the RTC payments to the rail and books the
//    answers in chunks;
//  - `bulk.eft_cycle` (one per clearing cycle): when a clearing cycle has run (its
//    `clearing.cycle_completed` event), the EFT payments of batches verified before it go
//    out on the ISO 20022 rail as that cycle's bulk share (a pacs.008 file of their own), and
//    the clearing house's answers are booked as its status reports arrive (the rail's
//    handler of `bulk` payouts; in the sandbox before the job ends).
// Every booking re-reads the batch's payments under the batch's row lock and books only
// those still `processing`, and the rail is idempotent by tx_id, so a run cut short and
// run again from the start pays nothing twice. The batch is `completed` in the
// transaction that books its last payment.
//
// Each payment's recipient is screened against the sanctions lists as a single payout's is
// (transfers/payout-screening.ts), when the payment becomes a payout: `bulk.process` gives
// the payments their transaction ids and screens their names before the transaction that
// writes their rows (outside it: the screening reads the lists on its own connection), and
// a hit's review is written in that transaction. A payment in an undecided review stays
// `processing` (its row `Pending`) and is neither paid (RTC) nor sent with a cycle (EFT);
// the rest of the batch goes on. Cleared, an EFT goes with the next cycle and an RTC with
// a `bulk.process` run the clearing enqueues; confirmed, it fails in the decision's
// transaction (refunded as a payment the rail refused), and the account-status module
// freezes the paying entity's accounts.

export const bulk_process_job_kind = 'bulk.process'
export const bulk_eft_cycle_job_kind = 'bulk.eft_cycle'

/** Payments booked per transaction, and batches taken per EFT cycle query. */
export const bulk_settle_chunk_max = 200
const eft_cycle_batches_max = 100

export class BulkProcessing {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: ComposedWriter,
    private readonly jobs: JobRunner,
    private readonly advices: PaymentAdvices,
    events: EventDispatcher,
    private readonly iso: IsoRail,
    /** The payers' account numbers and names, by account id (a pacs.008's debtors). */
    private readonly payersOf: (accountIds: readonly string[]) => Promise<Map<string,
      { account_number: string; name: string }>>,
    /** Pays an RTC through the gateway (clearing-service.ts payRealTime). */
    private readonly payRealTime: (accountId: string, payment: RailPayment,
      batchId: string) => Promise<RailOutcome | undefined>,
    /** The recipients' sanctions screening (transfers/payout-screening.ts). */
    private readonly screening: Pick<PayoutScreening, 'checkAll' | 'hold' | 'heldOf'
      | 'onDecided'>,
  ) {
    screening.onDecided(async (trx, change) => {
      const item = await itemByTxId(trx, change.review.subject_id)
      if (!item || item.status !== 'processing') return
      if (change.to === 'confirmed') {
        await this.bookIn(trx, item.batch_id, new Map([[item.tx_id!, { status: 'failed',
          reason: screening_failed_reason }]]))
      } else if (item.real_time) {
        // An RTC waits for no cycle: a run of the batch's processing pays it.
        await jobs.enqueue(trx, { kind: bulk_process_job_kind,
          key: `${item.batch_id}:cleared:${change.review.id}`,
          payload: { batch_id: item.batch_id } })
      }
    })
    iso.handleStatuses('bulk', (trx, statuses) => this.bookAnswers(trx, statuses))
    jobs.register({
      kind: bulk_process_job_kind,
      ...bulk_process_job_limits,
      run: (job) => this.process(String(job.payload.batch_id)),
    })
    jobs.register({
      kind: bulk_eft_cycle_job_kind,
      // Never beside another EFT submission (a clearing cycle or another cycle's bulk share).
      exclusive: eft_submission_group,
      ...bulk_eft_cycle_job_limits,
      run: (job) => this.eftCycle(new Date(String(job.payload.cutoff))),
    })
    // A clearing cycle (scheduled or an operator's `bank clearing run`) takes the bulk EFTs too.
    events.subscribe('clearing.cycle_completed', async (event, trx) => {
      await jobs.enqueue(trx, { kind: bulk_eft_cycle_job_kind, key: event.resource_id,
        payload: { cutoff: event.occurred_at.toISOString() } })
    })
  }

  async process(batchId: string): Promise<Record<string, unknown>> {
    const screened = await this.screen(batchId)
    const batch = await this.createPaymentRows(batchId, screened)
    if (!batch) return { skipped: true }
    const open = await this.unheld((await itemsOf(this.db, batchId)).filter((i) => i.real_time
      && i.status === 'processing' && i.tx_id))
    let paid = 0
    for (let start = 0; start < open.length; start += bulk_settle_chunk_max) {
      const chunk = open.slice(start, start + bulk_settle_chunk_max)
      const outcomes = new Map<string, RailOutcome>()
      for (const item of chunk) {
        const outcome = await this.payRealTime(batch.account_id, railPayment(item), batchId)
        if (outcome) outcomes.set(item.tx_id!, outcome)
      }
      if (outcomes.size > 0) paid += await this.book(batchId, outcomes)
    }
    // An RTC the clearing house has not answered stays processing: the job is tried again
    // (later attempts ask the gateway its status; nothing is sent twice).
    const unanswered = open.length - paid
    if (unanswered > 0) {
      throw new Unavailable(`${unanswered} RTC payments of batch ${batchId} have no answer yet`)
    }
    return { rtc_booked: paid }
  }

  /**
   * Before the payments' rows are written: each payment still without one is given its
   * transaction id, and its recipient screened (outside any transaction).
   */
  private async screen(batchId: string): Promise<Screened> {
    const batch = await batchByUuid(this.db, batchId)
    if (batch?.status !== 'processing') return { txIds: new Map(), checked: [] }
    const items = (await itemsOf(this.db, batchId)).filter((i) => i.status === 'processing'
      && i.tx_id === null)
    const txIds = new Map(items.map((item) => [item.position, newRowId()]))
    const checked = await this.screening.checkAll(batch.partner_id, batch.account_id,
      items.map((item) => ({ txId: txIds.get(item.position)!, name: item.name })))
    return { txIds, checked }
  }

  /** The payments among these not held in a screening review. */
  private async unheld(items: ItemRow[]): Promise<ItemRow[]> {
    const held = await this.screening.heldOf(this.db, items.map((i) => i.tx_id!))
    return held.size === 0 ? items : items.filter((i) => !held.has(i.tx_id!))
  }

  /**
   * One transaction: every payment still without a ledger row gets one (idempotent), with
   * the id it was screened under, and the reviews of its hits.
   */
  private async createPaymentRows(batchId: string,
      screened: Screened): Promise<BatchRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const batch = await batchByUuidForUpdate(trx, batchId)
      assert(batch, `processing job for missing batch ${batchId}`)
      if (batch.status !== 'processing') return undefined
      const items = (await itemsOf(trx, batchId)).filter((i) => i.status === 'processing'
        && i.tx_id === null)
      if (items.length === 0) return batch
      const given = items.map((item) => {
        const txId = screened.txIds.get(item.position)
        // Read before this transaction, and a payment never loses its row: never missing.
        assert(txId, `batch ${batchId}: payment ${item.position} was not screened`)
        return { item, tx_id: txId }
      })
      const rows = given.map(({ item, tx_id }) => paymentRow(batch, item, tx_id))
      const now = await this.ledger.write(trx, paymentRows, rows)
      // A run cut short after screening wrote some rows: only this write's payments are held.
      const written = new Set(given.map((g) => g.tx_id))
      await this.screening.hold(trx, screened.checked.filter((c) =>
        written.has(c.subject.subjectId)))
      await setItemTxIds(trx, batchId,
        given.map(({ item, tx_id }) => ({ position: item.position, tx_id })))
      const advised = given.filter(({ item }) => item.notification_email)
      await this.advices.record(trx,
        advised.map(({ item, tx_id }) => ({ tx_id, partner_id: batch.partner_id,
        email: item.notification_email!, name: item.name, created_at: now })))
      return batch
    })
  }

  /**
   * The EFT share of a clearing cycle: the open EFT payments of batches verified by `cutoff`
   * not sent before, each batch's in pacs.008 files of their own; in the sandbox their
   * answers are booked before it returns.
   */
  async eftCycle(cutoff: Date): Promise<Record<string, unknown>> {
    let sent = 0
    let after: BatchCursor | undefined
    await this.iso.writeUnwritten()
    for (;;) {
      const page = await batchesWithOpenEfts(this.db, cutoff, eft_cycle_batches_max, after)
      const last = page.at(-1)
      if (!last) break
      for (const { id } of page) sent += await this.sendEfts(id, toSast(cutoff).date)
      after = last
    }
    const answered = this.iso.answersAtOnce && sent > 0 ? await this.iso.exchange() : undefined
    return { eft_sent: sent, ...(answered ? { eft_booked: answered.settled + answered.failed
      + answered.invalid } : {}) }
  }

  /** Sends a batch's open EFT payments not sent before; answers how many it sent. */
  private async sendEfts(batchId: string, settlementDate: string): Promise<number> {
    const batch = await batchByUuid(this.db, batchId)
    if (!batch || batch.status !== 'processing') return 0
    const open = await this.unheld((await itemsOf(this.db, batchId)).filter((i) => !i.real_time
      && i.status === 'processing' && i.tx_id))
    const already = await this.iso.submitted(open.map((i) => i.tx_id!))
    const fresh = open.filter((i) => !already.has(i.tx_id!))
    if (fresh.length === 0) return 0
    const payer = (await this.payersOf([batch.account_id])).get(batch.account_id)
    assert(payer, `batch ${batchId}: its account ${batch.account_id} has no payer`)
    const transfers: OutgoingTransfer[] = fresh.map((item) => ({
      tx_id: item.tx_id!, source: 'bulk', source_ref: batchId, amount: cents(item.amount),
      ref: item.ref, debtor: payer,
      creditor: { name: item.name, account_number: item.account_number,
        branch_code: item.branch_code },
    }))
    const unsendable = new Map<string, RailOutcome>()
    for (const t of transfers) {
      const why = this.iso.unsendable(t)
      if (why !== undefined) unsendable.set(t.tx_id, { status: 'failed',
        reason: `the payment cannot be sent on the rail: ${why}` })
    }
    if (unsendable.size > 0) await this.book(batchId, unsendable)
    const sendable = transfers.filter((t) => !unsendable.has(t.tx_id))
    for (let start = 0; start < sendable.length; start += bulk_settle_chunk_max) {
      await this.iso.submitEft(sendable.slice(start, start + bulk_settle_chunk_max),
        settlementDate)
    }
    return sendable.length
  }

  /** Books a status report's answers to bulk payments (the ISO rail's handler). */
  private async bookAnswers(trx: Kysely<Database>,
      statuses: PayoutStatus[]): Promise<SettledCounts> {
    const byBatch = new Map<string, Map<string, RailOutcome>>()
    for (const status of statuses) {
      assert(status.source_ref, `bulk payout ${status.tx_id} was sent without its batch`)
      if (!status.outcome) continue
      let outcomes = byBatch.get(status.source_ref)
      if (!outcomes) byBatch.set(status.source_ref, outcomes = new Map())
      outcomes.set(status.tx_id, status.outcome)
    }
    const counts = { settled: 0, failed: 0, invalid: 0 }
    for (const [batchId, outcomes] of byBatch) {
      const booked = await this.bookIn(trx, batchId, outcomes)
      counts.settled += booked.paid
      counts.failed += booked.failed
    }
    return counts
  }

  /** Books rail answers for one batch's payments still processing; returns how many. */
  private async book(batchId: string, outcomes: Map<string, RailOutcome>): Promise<number> {
    const booked = await this.db.transaction().execute((trx) => this.bookIn(trx, batchId,
      outcomes))
    return booked.paid + booked.failed
  }

  /** Books answers for one batch's payments still processing, in the caller's transaction. */
  private async bookIn(trx: Kysely<Database>, batchId: string,
      outcomes: Map<string, RailOutcome>): Promise<{ paid: number; failed: number }> {
    const batch = await batchByUuidForUpdate(trx, batchId)
    assert(batch, `batch ${batchId} vanished`)
    if (batch.status !== 'processing') return { paid: 0, failed: 0 }
    const items = await itemsOf(trx, batchId)
    const answered = items.flatMap((item) => {
      const outcome = item.tx_id ? outcomes.get(item.tx_id) : undefined
      return item.status === 'processing' && outcome ? [{ item, outcome }] : []
    })
    // Nothing of this batch answered: nothing to book, nothing written.
    if (answered.length === 0) return { paid: 0, failed: 0 }
    // The ledger first: the payments' rows and events that commit with it carry its time.
    const settlements = answered.map(({ item, outcome }) => {
      return { payment: paymentRow(batch, item, item.tx_id!), outcome }
    })
    const written = await this.ledger.write(trx, paymentSettlements, settlements)
    const now = written.now
    const finished: Array<{ position: number; status: 'success' | 'failed'; error_message: string
      | null; processed_at: Date }> = []
    const paidTxIds: string[] = []
    const events: NewEvent[] = []
    answered.forEach(({ item, outcome }, i) => {
      const paid = written.paid[i]
      if (paid) paidTxIds.push(item.tx_id!)
      const change = { position: item.position, status: paid ? ('success' as const)
        : ('failed' as const), error_message: paid ? null : outcome.status === 'accepted' ? null
        : outcome.reason, processed_at: now }
      finished.push(change)
      Object.assign(item, change)
      events.push({
        type: paid ? 'payment.success' : 'payment.failed', partner_id: batch.partner_id,
          resource_id: batch.id,
        data: { ...paymentView(item), bulk_payment_id: batch.bulk_payment_id,
          reason_code: paid ? null : reasonCodeIn(outcome) }, occurred_at: now,
          endpoint_url: batch.callback_url,
      })
    })
    await finishItems(trx, batchId, finished)
    await this.advices.paid(trx, paidTxIds)
    if (items.every((i) => i.status === 'success' || i.status === 'failed')) {
      await updateBatch(trx, batchId, { status: 'completed', completed_at: now })
      const view = batchView({ ...batch, status: 'completed', completed_at: now }, items)
      assert(BigInt(view.successful_amount) + BigInt(view.failed_amount) === cents(
        batch.total_amount), `batch ${batchId} completed with amounts that do not add up`)
      events.push({ type: 'bulk_payment.completed', partner_id: batch.partner_id,
        resource_id: batch.id, data: view, occurred_at: now, endpoint_url: batch.callback_url })
    }
    await appendEvents(trx, events)
    return { paid: paidTxIds.length, failed: finished.length - paidTxIds.length }
  }
}

/**
 * What `bulk.process` screened before writing the payments' rows: the transaction id given
 * to each payment (by position) and the subjects with a hit.
 */
interface Screened {
  txIds: Map<number, string>
  checked: CheckedSubject[]
}

/** A payment of a batch as the ledger writes its own row (its money left in the funding row). */
function paymentRow(batch: BatchRow, item: ItemRow, txId: string): PaymentRow {
  return {
    tx_id: txId,
    account_id: batch.account_id,
    funding_tx_id: batch.funding_tx_id,
    real_time: item.real_time,
    amount: cents(item.amount),
    fee: cents(item.fee),
    ref: item.ref,
    own_ref: item.own_ref,
    name: item.name,
    account_number: item.account_number,
    branch_code: item.branch_code,
    added_by: batch.added_by,
  }
}

/**
 * The ISO reason code of a rail's refusal (`AC01: …`, as the rail words it), or null when its
 * reason carries none (a payment the rail could not carry, an older answer).
 */
function reasonCodeIn(outcome: RailOutcome): string | null {
  if (outcome.status === 'accepted') return null
  return /^([A-Z0-9]{4}): /.exec(outcome.reason)?.[1] ?? null
}

function railPayment(item: ItemRow): RailPayment {
  return {
    tx_id: item.tx_id!,
    payment_type: item.real_time ? 'RTC' : 'EFT',
    amount: cents(item.amount),
    account_number: item.account_number,
    branch_code: item.branch_code,
    name: item.name,
    ref: item.ref,
  }
}
