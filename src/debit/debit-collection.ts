import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { fromSast, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'
import { clockPartner, type Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert, Conflict, Forbidden, Invalid, NotFound } from '../errors.ts'
import { formatTimestamp } from '../contract/format.ts'
import { JobGroupBusy, type JobContext, type JobRunner } from '../jobs/job-runner.ts'
import type { JobView } from '../jobs/jobs-contract.ts'
import { cents } from '../ledger/cents.ts'
import type { AccountStatus, Journal } from '../ledger/journal.ts'
import type { JournalKind } from '../ledger/journal-kind.ts'
import type { ComposedWriter } from '../ledger/ledger-writer.ts'
import type { PartnerDebts } from '../ledger/partner-debt.ts'
import { accountsRefusingCredits, collectDebit, reverseDebit } from '../ledger/debit-journals.ts'
import type { Logger } from '../logger.ts'
import { collectionKey, type DebitCollectionOutcome, type DebitCollectionRequest, type DebitDispute, type DebitRail } from '../rails/debit-rail.ts'
import { CollectionChunk } from './debit-collection-chunk.ts'
import {
  collectionsForUpdate,
  dueScheduledOrderIds,
  lastCollectedCollection,
  openCollections,
  inactiveMandates,
  ordersByIds,
  ordersForUpdate,
  type CollectionRow,
} from './debit-collection-store.ts'
import { nextCollectionDate, nextTrackingDate } from './debit-schedule.ts'
import { orderOf, type OrderRow } from './debit-store.ts'

// The report's shape is the `ops.debit.run` reply schema's.
import type { DebitRunReport } from './debit-collection-contract.ts'
import { debit_run_job_limits } from './debit-limits.ts'
export type { DebitRunReport }

// Debit-order collection runs (docs/guides/debit-orders.md), as jobs of the jobs module: one
// `debit.collection_run` job per SA business day, planned at 00:00 SAST (inside the
// 00:00–06:00 processing window; the sandbox's advance runs it as the clock passes), or
// made on demand by the operator (`runNow`). A run, for its date:
//  1. books the disputes the debit rail reports (successful → disputed, the credit reversed,
//     a shortfall owed by the partner) and acknowledges them after the commit;
//  2. takes the due `scheduled` orders (next collection date on or before the run's date) to
//     `processing`, one collection row each, in chunks of one transaction;
//  3. submits the collections waiting for an attempt to the rail in batches and books each
//     batch's answers in one transaction: `successful` credits the entity's account
//     `amount − bank_charges` (a `debit_order` transaction) with the status change, history
//     and event; insufficient funds is tried again on the next business day while the
//     order's tracking days last, then `failed`; other refusals are `failed`. A collection
//     into an account that takes no credits (blocked, closed) is not submitted: it fails
//     ("the account cannot receive payments"). A recurring order then goes back to
//     `scheduled` on its next date, until its end date (a closed account's order stops).
// Every step re-reads its rows under lock, and the rail answers the same attempt the same
// way, so a run cut short by a crash and run again books nothing twice.

export const debit_run_job_kind = 'debit.collection_run'
/** Disputes are honoured when the debtor raises them within this many days of the collection. */
export const dispute_window_days = 40

export interface DebitCollectionOptions {
  /** Bank charges per successful collection, unless the rail names its own. */
  feeCents: bigint
  /** Orders and collections per chunk: one rail batch, one transaction. */
  batchMax: number
  /** Plan a run on each business day (off: only runNow). */
  schedule: boolean
  /** Sandbox mode: an operator may raise a debtor's dispute (`ops.debit.dispute`). */
  sandbox: boolean
}

/**
 * What a collection came to: the rail's answer, or not asked, for want of an active mandate
 * or of an account that takes credits.
 */
type BookedOutcome = DebitCollectionOutcome | NotAsked
type NotAsked =
  | { status: 'mandate_inactive'; reason: string }
  | { status: 'account_refuses_credits'; account_status: AccountStatus; reason: string }

export class DebitCollection {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly ledger: ComposedWriter,
    private readonly calendar: SouthAfricanCalendar,
    private readonly rail: DebitRail,
    private readonly jobs: JobRunner,
    private readonly options: DebitCollectionOptions,
    private readonly log: Logger,
  ) {
    assert(options.batchMax >= 1, 'a debit run needs a batch size')
    jobs.register({
      kind: debit_run_job_kind,
      // One collection run at a time on any instance: overlapping runs would ask the debtors' banks
      // twice.
      exclusive: 'rail.debit',
      ...debit_run_job_limits,
      run: (job) => this.run(String(job.payload.run), String(job.payload.date), job),
      ...(options.schedule ? { plan: (now: Date) => this.plannedRuns(now) } : {}),
      per_partner: true,
    })
  }

  /** The disputes a run books: in a partner's own run, of its orders only (the rest wait). */
  private async partnersOwn<D extends { debit_order_id: string }>(disputes: D[]): Promise<D[]> {
    const partner = clockPartner()
    if (partner === undefined || disputes.length === 0) return disputes
    const orders = await ordersByIds(this.db, disputes.map((d) => d.debit_order_id))
    const mine = new Set([...orders.values()].filter((o) => o.partner_id === partner)
      .map((o) => o.id))
    return disputes.filter((d) => mine.has(d.debit_order_id))
  }

  /** Today's run, due at 00:00 SAST, when today is a business day (a late start catches up). */
  plannedRuns(now: Date) {
    const today = toSast(now).date
    if (!this.calendar.isBusinessDay(today)) return []
    return [{ key: today, due_at: fromSast(today), payload: { run: today, date: today } }]
  }

  /**
   * Runs a collection now for `date` (today in SAST by default), as a job of its own, here,
   * and answers its report; 409 when another run is still going after BANK_JOBS_EXCLUSIVE_WAIT_MS.
   */
  async runNow(date?: string): Promise<DebitRunReport> {
    const report = await this.jobs.runNew(this.manualRun(date)).catch((error: unknown) => {
      if (error instanceof JobGroupBusy) throw new Conflict('a debit-order collection run is in ' +
        'progress (here or on another instance); run again when it has ended')
      throw error
    })
    assert(report, 'a manual debit run has a key of its own')
    return report as unknown as DebitRunReport
  }

  /**
   * The same run, detached (`ops.debit.run` with `detach: true`, what `bank debit run`
   * sends): queued for any instance to run after a run still going, and answered at once;
   * its report becomes the job's `result` (`ops.jobs.get`).
   */
  start(date?: string): Promise<JobView> {
    return this.jobs.startNew(this.manualRun(date))
  }

  /** A manual run's job: a key of its own, for `date` (today in SAST by default). */
  private manualRun(date: string | undefined) {
    const now = this.clock.now()
    const day = date ?? toSast(now).date
    const run = `manual:${day}:${now.toISOString()}:${randomUUID().slice(0, 8)}`
    return { kind: debit_run_job_kind, key: run, payload: { run, date: day } }
  }

  /**
   * Sandbox: the debtor disputes the order's last collected collection now, at their bank
   * (the simulated debit rail); the next run books it. A collection disputed already is
   * named again and nothing changes. Production refuses (403).
   */
  async dispute(debitOrderId: string): Promise<{ debit_order_id: string; collection_date: string;
      bank_reference: string; disputed_at: string }> {
    if (!this.options.sandbox || !this.rail.raiseDispute) throw new Forbidden(
      'only the sandbox can raise a debtor\'s dispute; in production the debtor\'s bank reports it')
    if (!(await orderOf(this.db, debitOrderId))) throw new NotFound('debit order')
    const collection = await lastCollectedCollection(this.db, debitOrderId)
    if (!collection?.bank_reference) throw Invalid.field('debit_order_id',
      'has no collected collection to dispute')
    const raised = { debit_order_id: debitOrderId, collection_date: collection.collection_date,
      bank_reference: collection.bank_reference }
    await this.rail.raiseDispute(raised)
    return { ...raised, disputed_at: formatTimestamp(this.clock.now()) }
  }

  async run(
    run: string,
    date: string,
    job?: Pick<JobContext, 'attempt' | 'signal'>,
  ): Promise<DebitRunReport> {
    const report: DebitRunReport = { run, date, resumed: (job?.attempt ?? 1) > 1, submitted: 0,
      successful: 0, failed: 0, retrying: 0, rescheduled: 0, disputed: 0 }
    const stillOurs = () => {
      if (job?.signal.aborted) throw new Error(
        'debit run: the lease was lost; another instance goes on')
    }
    await this.bookDisputes(report)
    // Taking due orders to `processing` and asking the bank for their collections go side by
    // side: while one chunk of collections is asked for and booked, the next chunk of orders
    // is started (two transactions at once on PostgreSQL, one after the other on PGlite).
    // Each step is still its own transaction that re-reads its rows under lock, so the
    // overlap changes when the steps run, not what they book.
    const starts = new Progress()
    // In the sandbox, a partner's run by its own clock (`per_partner`) does its orders only.
    const partner = clockPartner()
    const starting = this.startAllDue({ date, partner }, report, starts, stillOurs)
    // Awaited below; until then its failure must not count as unhandled.
    starting.catch(() => {})
    try {
      for (;;) {
        stillOurs()
        // Read before the collections: a chunk started meanwhile is then not missed.
        const { count, ended } = starts
        const chunk = await openCollections(this.db, date, this.options.batchMax, partner)
        if (chunk.length === 0) {
          if (ended) break
          await starts.after(count)
          continue
        }
        const outcomes = await this.askForCollections(chunk)
        const booked = await this.bookOutcomes(chunk, outcomes, date, report)
        if (booked === 0) {
          // The rail answered none of them: they wait for the next run (as do those still
          // being started).
          this.log.warn({ run, open: chunk.length },
            'the debit rail left a chunk of collections unanswered')
          break
        }
      }
    } catch (error) {
      // As when the steps ran one after the other, every due order is started before the
      // run ends, failed or not: a run taken over finds them all `processing`.
      await starting.catch(() => {})
      throw error
    }
    await starting
    this.log.info(report, 'debit collection run finished')
    return report
  }

  /** Starts every due order in chunks, each chunk a tick of `starts`. */
  private async startAllDue(
    { date, partner }: { date: string; partner: string | undefined },
    report: DebitRunReport,
    starts: Progress,
    stillOurs: () => void,
  ): Promise<void> {
    try {
      for (;;) {
        stillOurs()
        const ids = await dueScheduledOrderIds(this.db, date, this.options.batchMax, partner)
        if (ids.length === 0) return
        await this.startCollections(ids, date, report)
        starts.tick()
      }
    } finally {
      starts.end()
    }
  }

  /**
   * Asks the debtors' banks for a chunk's collections; answers each outcome by collection.
   * Without an active mandate (the debtor or the partner cancelled it while a collection was
   * being retried), or into an account that takes no credits (blocked, closed), nothing is
   * asked of the debtor's bank: the collection fails.
   */
  private async askForCollections(chunk: CollectionRow[]): Promise<Map<string, BookedOutcome>> {
    const orders = await ordersByIds(this.db, chunk.map((c) => c.debit_order_id))
    const list = [...orders.values()]
    const revoked = await inactiveMandates(this.db, list.map((o) => o.mandate_id))
    const refusing = await accountsRefusingCredits(this.db, list.map((o) => o.account_id))
    const notAsked = new Map<string, NotAsked>()
    for (const c of chunk) {
      const why = notToAsk(orders.get(c.debit_order_id)!, revoked, refusing)
      if (why) notAsked.set(collectionKey(c), why)
    }
    const asked = chunk.filter((c) => !notAsked.has(collectionKey(c)))
    const requests = asked.map((c) => collectionRequest(c, orders.get(c.debit_order_id)!))
    const outcomes: Map<string, BookedOutcome> =
      asked.length > 0 ? await this.rail.submitCollections(requests) : new Map()
    for (const [key, why] of notAsked) outcomes.set(key, why)
    return outcomes
  }

  /** Takes due scheduled orders to `processing`, each with a collection row (one transaction). */
  private async startCollections(ids: string[], date: string,
      report: DebitRunReport): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const orders = await ordersForUpdate(trx, ids)
      const chunk = await CollectionChunk.open(trx, ids, this.clock.now())
      for (const order of orders.values()) {
        const collectionDate = order.next_collection_date
        if (order.status !== 'scheduled' || collectionDate === null
          || collectionDate > date) continue
        chunk.record(
          { ...order, attempts: 0, first_attempt_date: null, last_attempt_date: null },
          'processing',
          { description: `submitted to the debtor's bank for the collection of ${collectionDate}`,
            collection_date: collectionDate },
        )
        chunk.collection(newCollection(order, collectionDate, chunk.now))
        report.submitted++
      }
      await chunk.flush(trx)
    })
  }

  /**
   * Books the rail's answers to one batch; returns how many it booked. The ledger's rows
   * (debitCollections) are written first, then the chunk's orders, collections, history and
   * events, which the kind's record gathers in memory under the same locks.
   */
  private async bookOutcomes(sent: CollectionRow[], outcomes: Map<string, BookedOutcome>,
      date: string, report: DebitRunReport): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const orders = await ordersForUpdate(trx, sent.map((c) => c.debit_order_id))
      const current = await collectionsForUpdate(trx, sent)
      const chunk = await this.chunkOf(trx, orders)
      const rules = { calendar: this.calendar, feeCents: this.options.feeCents }
      const answers = { sent, outcomes, date, orders, current, chunk, report, ...rules }
      const booked = await this.ledger.write(trx, debitCollections, answers)
      await chunk.flush(trx)
      return booked
    })
  }

  /**
   * The chunk of the locked orders' changes, opened before the ledger's write: the kind's
   * record is synchronous, so the orders' histories (which their events carry) are read
   * now, and the orders' locks keep them as they are. The chunk's time (history, events)
   * is read just before the write reads the ledger's, on the same clock.
   */
  private chunkOf(trx: Kysely<Database>, orders: Map<string, OrderRow>): Promise<CollectionChunk> {
    return CollectionChunk.open(trx, [...orders.keys()], this.clock.now())
  }

  /**
   * Books the disputes the rail reports: a successful collection disputed within 40 days is
   * reversed; one disputed later, or disputed already, is refused and acknowledged. A
   * dispute of an order whose next collection is under way waits for that to end.
   */
  private async bookDisputes(report: DebitRunReport): Promise<void> {
    const disputes = await this.partnersOwn(await this.rail.collectDisputes())
    if (disputes.length === 0) return
    const settled = await this.db.transaction().execute(async (trx) => {
      const orders = await ordersForUpdate(trx, disputes.map((d) => d.debit_order_id))
      const current = await collectionsForUpdate(trx, disputes)
      const chunk = await this.chunkOf(trx, orders)
      const booking = { disputes, orders, current, chunk, report, log: this.log }
      // The ledger's rows first (debitDisputes), then the chunk's, as for the answers.
      const done = await this.ledger.write(trx, debitDisputes, booking)
      await chunk.flush(trx)
      return done
    })
    await this.rail.acknowledgeDisputes(settled)
  }
}

/**
 * Why a collection is not to be asked of the debtor's bank, if it is not: the mandate is no
 * longer active, or the account it credits takes no credits now. Read just before the rail
 * is asked, not under the account's lock: an account blocked while the debtor's bank pays
 * still has that collection booked (the money has come; only a payment could send it back).
 */
function notToAsk(order: OrderRow, revoked: Set<string>,
    refusing: Map<string, AccountStatus>): NotAsked | undefined {
  if (revoked.has(order.mandate_id)) {
    return { status: 'mandate_inactive',
      reason: 'the mandate is no longer active; no further collections' }
  }
  const status = refusing.get(order.account_id)
  if (status === undefined) return undefined
  return { status: 'account_refuses_credits', account_status: status,
    reason: `the account cannot receive payments (it is ${status}); not submitted to the ` +
      'debtor\'s bank' }
}

/** What booking a chunk of a run needs besides the ledger: its rows, report and rules. */
interface Booking {
  chunk: CollectionChunk
  report: DebitRunReport
  calendar: SouthAfricanCalendar
  /** Bank charges per successful collection, unless the rail names its own. */
  feeCents: bigint
}

/** The rail's answers to one batch of collections, and the rows locked for them. */
interface Answers extends Booking {
  sent: CollectionRow[]
  outcomes: Map<string, BookedOutcome>
  date: string
  orders: Map<string, OrderRow>
  current: Map<string, CollectionRow>
}

/**
 * A batch's answers (bookOutcomes): a collection credits the order's account (collectDebit:
 * a partner that owes the bank pays from the credit first, hence the debts); a refusal is
 * tried again or fails. Each order's and collection's change goes to the chunk. Answers how
 * many it booked.
 */
const debitCollections: JournalKind<Answers, number> = {
  name: 'debit.collections',
  accountsOf: (answers) => [...answers.orders.values()].map((o) => o.account_id),
  debts: true,
  record(journal, answers, { debts }) {
    const { sent, outcomes, date, orders, current } = answers
    let booked = 0
    for (const was of sent) {
      const key = collectionKey(was)
      const collection = current.get(key)
      const order = orders.get(was.debit_order_id)
      const outcome = outcomes.get(key)
      // Booked meanwhile (a run taken over after a crash), or not answered: leave it.
      if (!collection || !order || !outcome || collection.status !== 'processing'
        || collection.attempts !== was.attempts) continue
      if (collection.last_attempt_date !== null && collection.last_attempt_date >= date) continue
      // Not asked of the debtor's bank (no active mandate, an account that takes no
      // credits): no attempt to count.
      const asked = outcome.status !== 'mandate_inactive'
        && outcome.status !== 'account_refuses_credits'
      const attempt = asked ? { ...collection, attempts: collection.attempts + 1,
        first_attempt_date: collection.first_attempt_date ?? date, last_attempt_date: date }
        : collection
      const tried = asked ? { ...order, attempts: attempt.attempts,
        first_attempt_date: attempt.first_attempt_date, last_attempt_date: date } : order
      if (outcome.status === 'collected') collected(journal, debts!, answers, tried, attempt,
        outcome)
      else refused(answers, tried, attempt, outcome, date)
      booked++
    }
    return booked
  },
}

function collected(
  journal: Journal,
  debts: PartnerDebts,
  booking: Booking,
  order: OrderRow,
  collection: CollectionRow,
  outcome: Extract<DebitCollectionOutcome, { status: 'collected' }>,
): void {
  const { chunk, report } = booking
  const amount = cents(collection.amount)
  const wanted = outcome.bank_charges ?? booking.feeCents
  const charges = wanted < amount ? wanted : amount
  const net = amount - charges
  const txId = collectDebit(journal, debts, {
    ...bookingOf(order),
    amount,
    charges,
    own_ref: `debit order ${order.id} of ${collection.collection_date}`,
  })
  const now = journal.now
  chunk.collection({ ...collection, status: 'successful', bank_charges: charges, net_amount: net,
    credit_tx_id: txId, bank_reference: outcome.bank_reference, failure_reason: null,
    processed_at: now })
  const done = chunk.record(
    {
      ...order, processed_at: now, bank_charges: charges, net_amount: net, credit_tx_id: txId,
        bank_reference: outcome.bank_reference,
      failure_reason: null, collections_count: order.collections_count + 1, disputed_at: null,
        reversal_tx_id: null,
    },
    'successful',
    {
      description: `collected ${amount} cents from the debtor; ${net} credited after bank charges of ${charges}`,
      bank_reference: outcome.bank_reference,
      collection_date: collection.collection_date,
    },
  )
  report.successful++
  scheduleNext(booking, done, collection)
}

function refused(
  booking: Booking,
  order: OrderRow,
  collection: CollectionRow,
  outcome: Exclude<BookedOutcome, { status: 'collected' }>,
  date: string,
): void {
  const { chunk, report } = booking
  const now = chunk.now
  if (outcome.status === 'insufficient_funds') {
    const retry = nextTrackingDate(collection.collection_date, order.tracking_days, date,
      booking.calendar)
    if (retry !== null) {
      chunk.collection({ ...collection, failure_reason: outcome.reason })
      chunk.record({ ...order, failure_reason: outcome.reason }, 'processing', {
        description: `insufficient funds (attempt ${collection.attempts}); tried again on ${retry}`,
        collection_date: collection.collection_date,
      }, true)
      report.retrying++
      return
    }
  }
  const reason =
    outcome.status === 'insufficient_funds'
      ? `${outcome.reason}; tracking days ran out after ${collection.attempts} ` +
        `attempt${collection.attempts === 1 ? '' : 's'}`
      : outcome.reason
  chunk.collection({ ...collection, status: 'failed', failure_reason: reason, processed_at: now })
  const failed = chunk.record({ ...order, processed_at: now, failure_reason: reason,
      bank_charges: null, net_amount: null, credit_tx_id: null, bank_reference: null }, 'failed', {
    description: reason,
    collection_date: collection.collection_date,
  })
  report.failed++
  // A closed account (the debtor's, or ours it credits), or a mandate no longer active, is
  // never collected again; other failures (a blocked account too: it may be reactivated)
  // leave the schedule running.
  if (endsSchedule(outcome)) chunk.update({ ...failed, next_collection_date: null })
  else scheduleNext(booking, failed, collection)
}

function endsSchedule(outcome: Exclude<BookedOutcome, { status: 'collected' }>): boolean {
  return outcome.status === 'account_closed' || outcome.status === 'mandate_inactive'
    || (outcome.status === 'account_refuses_credits' && outcome.account_status === 'closed')
}

/**
 * After a collection ends: a recurring order's next date (back to `scheduled`), or none.
 * The next date comes after the day the collection ended: occurrences that fell while it
 * was still being retried (tracking days) are skipped, not collected late in a burst.
 */
function scheduleNext(booking: Booking, order: OrderRow, collection: CollectionRow): void {
  const { chunk, report } = booking
  const ended = collection.last_attempt_date ?? collection.collection_date
  const after = ended > collection.collection_date ? ended : collection.collection_date
  const next = nextCollectionDate(
    { anchor: order.requested_collection_date, frequency: order.frequency, after,
      end_date: order.end_date },
    booking.calendar,
  )
  if (next === null) {
    chunk.update({ ...order, next_collection_date: null })
    return
  }
  chunk.record({ ...order, next_collection_date: next, attempts: 0, first_attempt_date: null,
      last_attempt_date: null }, 'scheduled', {
    description: `next collection scheduled for ${next}`,
    collection_date: next,
  })
  report.rescheduled++
}

/** The disputes the rail reported, and the rows locked for them. */
interface Disputes {
  disputes: DebitDispute[]
  orders: Map<string, OrderRow>
  current: Map<string, CollectionRow>
  chunk: CollectionChunk
  report: DebitRunReport
  log: Logger
}

/**
 * The rail's disputes (bookDisputes): a successful collection disputed within its window is
 * reversed (reverseDebit: what the account cannot cover becomes its partner's debt, hence
 * the debts). Answers the disputes dealt with, to acknowledge once this commits.
 */
const debitDisputes: JournalKind<Disputes, string[]> = {
  name: 'debit.disputes',
  accountsOf: (booking) => [...booking.orders.values()].map((o) => o.account_id),
  debts: true,
  record(journal, { disputes, orders, current, chunk, report, log }, { debts }) {
    const done: string[] = []
    for (const dispute of disputes) {
      const order = orders.get(dispute.debit_order_id)
      const collection = current.get(collectionKey(dispute))
      if (order && collection && order.status === 'processing') continue
      if (order && collection?.status === 'successful' && withinWindow(collection, dispute)) {
        const updated = reverse(journal, debts!, chunk, order, collection, dispute)
        orders.set(order.id, updated)
        report.disputed++
      } else {
        log.warn({ dispute: collectionKey(dispute) },
          'a dispute of no successful collection within 40 days was refused')
      }
      done.push(collectionKey(dispute))
    }
    return done
  },
}

/** Reverses a disputed collection's credit; a shortfall becomes the partner's debt. */
function reverse(journal: Journal, debts: PartnerDebts, chunk: CollectionChunk, order: OrderRow,
    collection: CollectionRow, dispute: DebitDispute): OrderRow {
  const amount = cents(collection.amount)
  const charges = cents(collection.bank_charges ?? 0n)
  const net = cents(collection.net_amount ?? 0n)
  const creditTxId = collection.credit_tx_id
  assert(creditTxId, `successful collection ${collectionKey(collection)} has its credit`)
  // The debtor's bank takes the whole amount back; the bank gives up its charges.
  const { reversal_tx_id: reversalId, reason } = reverseDebit(journal, debts, {
    ...bookingOf(order),
    amount,
    charges,
    net,
    credit_tx_id: creditTxId,
    own_ref: `dispute of debit order ${order.id} of ${collection.collection_date}`,
  })
  const now = journal.now
  chunk.collection({ ...collection, status: 'disputed', disputed_at: now,
    reversal_tx_id: reversalId })
  const wasScheduled = order.status === 'scheduled'
  const disputed = chunk.record({ ...order, disputed_at: now, reversal_tx_id: reversalId },
      'disputed', {
    description: `${reason} (collection of ${collection.collection_date}, disputed ${dispute.disputed_at.toISOString()})`,
    bank_reference: collection.bank_reference,
    collection_date: collection.collection_date,
  })
  // A recurring order waiting for its next collection keeps that date.
  if (!wasScheduled || disputed.next_collection_date === null) return disputed
  return chunk.record(disputed, 'scheduled', {
    description: `next collection stays scheduled for ${disputed.next_collection_date}`, collection_date: disputed.next_collection_date })
}

/** What the ledger's debit journals name of an order: its account, reference and debtor. */
function bookingOf(order: OrderRow) {
  return {
    account_id: order.account_id,
    partner_id: order.partner_id,
    ref: order.reference,
    recipient_name: order.account_holder_name,
    recipient_account: order.account_number,
    recipient_branch: order.branch_code,
  }
}

function withinWindow(collection: CollectionRow, dispute: DebitDispute): boolean {
  const collectedAt = collection.processed_at ? new Date(collection.processed_at).getTime() : 0
  return dispute.disputed_at.getTime() - collectedAt <= dispute_window_days * 86_400_000
}

function newCollection(order: OrderRow, collectionDate: string, now: Date): CollectionRow {
  return {
    debit_order_id: order.id,
    collection_date: collectionDate,
    status: 'processing',
    attempts: 0,
    first_attempt_date: null,
    last_attempt_date: null,
    amount: order.amount,
    bank_charges: null,
    net_amount: null,
    credit_tx_id: null,
    reversal_tx_id: null,
    bank_reference: null,
    failure_reason: null,
    submitted_at: now,
    processed_at: null,
    disputed_at: null,
  }
}

function collectionRequest(collection: CollectionRow, order: OrderRow): DebitCollectionRequest {
  return {
    debit_order_id: order.id,
    collection_date: collection.collection_date,
    attempt: collection.attempts + 1,
    amount: cents(collection.amount),
    account_holder_name: order.account_holder_name,
    account_number: order.account_number,
    account_type: order.account_type,
    branch_code: order.branch_code,
    mandate_reference: order.mandate_reference,
    reference: order.reference,
  }
}

/** How many chunks of orders a run has started so far, and whether it has done starting them. */
class Progress {
  count = 0
  ended = false
  private waiting: Array<() => void> = []

  tick(): void {
    this.count++
    this.wake()
  }

  end(): void {
    this.ended = true
    this.wake()
  }

  /** Resolves once a chunk after the `seen`th has started, or starting has ended. */
  after(seen: number): Promise<void> {
    if (this.count > seen || this.ended) return Promise.resolve()
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  private wake(): void {
    const waiting = this.waiting
    this.waiting = []
    for (const resolve of waiting) resolve()
  }
}
