import assert from 'node:assert/strict'
import fc from 'fast-check'
import { addDays, fromSast, toSast, type SouthAfricanCalendar } from '../../src/calendar/sa-calendar.ts'
import { magicDebtors } from '../../src/rails/simulated-debit-rail.ts'

// The debit-order part of the ledger property's model (transfer-ledger-model.test.ts):
// mandates, debit orders and collection runs on the simulated debit rail's magic debtors,
// as the README ("Debit orders and mandates", "Debit-order collection runs", "The simulated
// debit rail") describes them, written from those rules rather than from src/debit.
//
// What it predicts exactly: each mandate's status; create's answer (201, 400 naming
// collection_date or mandate_reference, 422 naming amount / mandate_reference, nothing
// stored on a refusal); cancel's answer; each order's status, status_history (its statuses
// in order), next collection date, collection count, last net amount; every collection's
// attempts; every credit (amount − 350 bank charges, never below 0), every dispute's
// reversal, what the partner owes and its recovery from later credits (deposits and
// collections), and so each balance. It can, because it knows exactly which collection
// runs happen and when: the runs are bank-wide jobs keyed by their date (one per business
// day, due 00:00 SAST), planned for today by every "run due jobs" and for every day crossed
// by a sandbox advance, so the model keeps the set of dates whose run has been made
// (module state: one bank serves every run of the property), and the time each ran at
// (a dispute is booked by the first run at or after it, within 40 days of the collection).
//
// Where it stays at the level of invariants instead:
//  - which reversal rows take what when several disputes are booked in one run: only the
//    sums are compared (what the account gave back, what the partner owes);
//  - which recovery rows there are: their count and sum, not each one's parent;
//  - every successful collection has exactly one credit row (the collections' credit_tx_id
//    are the account's debit_order rows), each credit is reversed at most once, and every
//    reversed credit was taken back, is owed, or was owed and recovered (from the bank's
//    rows and its recorded debt alone); balances never go below zero;
//  - status transitions are also checked against a fixed list of allowed moves, in case
//    the model and the bank agree on something the rules do not allow.
//
// The retry dates of insufficient funds follow the rule as the README states it: a
// collection is tried at each run from its date on, and after a try that found
// insufficient funds it is tried again as long as the next business day is within
// `tracking_days` business days of its collection date. A recurring order's next date is
// the first occurrence after the day its collection ended (occurrences that fell during
// its retries are skipped). A collection whose mandate was cancelled while it was retried
// is not tried again: the order ends failed and stops.
//
// Due times never tie between a collection run (on the minute) and a bulk job (the clock
// keeps an offset within the minute that is never 0: Run.alignClock), so the order in
// which jobs run, which decides what a reversal can take back, is known.

export const bank_charges = 350n
const dispute_after_ms = 3 * 86_400_000
const dispute_window_ms = 40 * 86_400_000
const authentication_ms = 86_400_000
const cancel_notice_ms = 24 * 3600 * 1000

export type Debtor = 'normal' | 'rejected' | 'pending_day' | 'closed' | 'insufficient'
  | 'insufficient_1' | 'insufficient_2' | 'insufficient_3' | 'disputed'
export type Frequency = 'once_off' | 'weekly' | 'monthly'
export type OrderStatus =
  'scheduled' | 'processing' | 'successful' | 'failed' | 'disputed' | 'cancelled'
type MandateStatus = 'pending_authentication' | 'active' | 'rejected' | 'cancelled'

export type DebitAction =
  | { kind: 'mandate_create'; debtor: Debtor; frequency: Frequency; maxAmount: number }
  /** An order under one of the run's mandates (index modulo those; 3 in 4 pick an active one). */
  | { kind: 'order_create'; pick: number; amount: number; overMax: boolean; daysAhead: number;
    endDays: number; tracking: number }
  /**
   * Cancel an order now, or with the clock moved to just before / just after its cancel deadline.
   */
  | { kind: 'order_cancel'; pick: number; when: 'now' | 'before_deadline' | 'after_deadline' }
  /**
   * With `midRetry`, first to just past the run of an order whose first try finds insufficient
   * funds.
   */
  | { kind: 'mandate_cancel'; pick: number; midRetry: boolean }
  /** The sandbox clock moves forward (ops.sandbox.clock.advance), running what falls due. */
  | { kind: 'debit_advance'; minutes: number }
  /**
   * The sandbox operator's `bank debit dispute` of an order's last collected collection;
   * with `spendFirst`, after the partner paid out everything it had (spend_all, RTC).
   */
  | { kind: 'debit_dispute'; pick: number; spendFirst: boolean }
  /**
   * A payout of everything available (less its fee): a dispute after it finds too little to
   * take back. An EFT holds it (a dispute leaves held money alone), an RTC pays it at once.
   */
  | { kind: 'spend_all'; rtc: boolean }

// Mostly debtors that are collected (and disputed), so that credits, disputes and debt are common.
const debtor: fc.Arbitrary<Debtor> = fc.constantFrom(
  'normal', 'normal', 'normal', 'normal', 'rejected', 'pending_day', 'closed', 'insufficient',
    'insufficient_1', 'insufficient_2', 'insufficient_3',
  'disputed', 'disputed', 'disputed',
)

export const debitActions: Array<fc.WeightedArbitrary<DebitAction>> = [
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('mandate_create' as const),
      debtor,
      frequency: fc.constantFrom<Frequency>('once_off', 'weekly', 'weekly', 'monthly'),
      maxAmount: fc.integer({ min: 1_000, max: 30_000 }),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('order_create' as const),
      pick: fc.nat(),
      // Mostly above the bank charges; sometimes at or below them (a credit of 0 or a few cents).
      amount: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 351, max: 30_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 100, max: 400 }) }),
      overMax: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      // 0–2 days ahead is often too early (the second business day after today is the earliest).
      daysAhead: fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }) },
        { weight: 3, arbitrary: fc.integer({ min: 2, max: 20 }) }),
      endDays: fc.integer({ min: 0, max: 45 }),
      tracking: fc.integer({ min: 0, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('order_cancel' as const), pick: fc.nat(),
    when: fc.constantFrom('now' as const, 'before_deadline' as const,
    'after_deadline' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('mandate_cancel' as const), pick: fc.nat(),
    midRetry: fc.boolean() }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('debit_advance' as const),
      // Whole minutes (the clock keeps its offset within the minute: see Run.alignClock).
      minutes: fc.oneof(fc.integer({ min: 60, max: 24 * 60 }),
        fc.integer({ min: 24 * 60, max: 10 * 24 * 60 })),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('debit_dispute' as const), pick: fc.nat(),
    spendFirst: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('spend_all' as const),
    rtc: fc.boolean() }) },
]

export function accountNumberOf(d: Debtor): string {
  switch (d) {
    case 'normal':
      return magicDebtors.always_collects
    case 'rejected':
      return magicDebtors.mandate_rejected
    case 'pending_day':
      return magicDebtors.mandate_pending_a_day
    case 'closed':
      return magicDebtors.account_closed
    case 'insufficient':
      return magicDebtors.insufficient_funds
    case 'disputed':
      return magicDebtors.disputed
    case 'insufficient_1':
    case 'insufficient_2':
    case 'insufficient_3':
      return `${magicDebtors.insufficient_then_collects_prefix}0${d.slice(-1)}`
  }
}

/** The rail's answer to attempt `attempt` (1, 2, …) of a collection from this debtor. */
function railAnswer(d: Debtor, attempt: number): 'collected' | 'insufficient' | 'closed' {
  if (d === 'closed') return 'closed'
  if (d === 'insufficient') return 'insufficient'
  if (d.startsWith('insufficient_') && attempt <= Number(d.slice(-1))) return 'insufficient'
  return 'collected'
}

/** The account a debit order credits: the model's balance and available balance. */
export interface Money {
  balance: bigint
  available: bigint
}

export interface MandateModel {
  reference: string
  debtor: Debtor
  frequency: Frequency
  maxAmount: bigint
  status: MandateStatus
  createdAtMs: number
  /** A once_off mandate serves one order (a cancelled one still counts). */
  used: boolean
}

interface Dispute {
  atMs: number
  acknowledged: boolean
}

export interface CollectionModel {
  date: string
  status: 'processing' | 'successful' | 'failed' | 'disputed'
  attempts: number
  lastAttempt: string | null
  net: bigint
  processedAtMs: number
  dispute: Dispute | undefined
}

export interface OrderModel {
  id: string
  mandate: MandateModel
  amount: bigint
  frequency: Frequency
  /** The date the partner asked for (a monthly schedule keeps its day of month). */
  anchor: string
  collectionDate: string
  endDate: string | null
  tracking: number
  status: OrderStatus
  next: string | null
  count: number
  /** The last collection's net amount (null before one, and after a failure). */
  lastNet: bigint | null
  history: OrderStatus[]
  collections: CollectionModel[]
}

/** Moves along which an order's status may go (README; a recurring order returns to scheduled). */
const allowed: ReadonlySet<string> = new Set([
  'scheduled>processing', 'scheduled>cancelled',
  'processing>processing', 'processing>successful', 'processing>failed',
  'successful>scheduled', 'failed>scheduled',
  // A dispute of an earlier successful collection; a recurring order waiting for its next one stays
  // scheduled.
  'successful>disputed', 'scheduled>disputed', 'failed>disputed', 'cancelled>disputed',
    'disputed>scheduled', 'disputed>disputed',
])

export function assertAllowedTransitions(history: readonly string[], context: string): void {
  assert.equal(history[0], 'scheduled', `an order starts scheduled (${context})`)
  for (let i = 1; i < history.length; i++) {
    assert.ok(allowed.has(`${history[i - 1]}>${history[i]}`), `${history[i - 1]} → ${history[i]} ` +
      `is not an allowed move (${context}): ${history.join(' → ')}`)
  }
}

/**
 * Dates whose collection run has been made (the job is keyed by its date; one bank serves every
 * property run).
 */
const runDates = new Set<string>()

export class DebitModel {
  readonly mandates: MandateModel[] = []
  readonly orders: OrderModel[] = []
  debt = 0n
  /** Rows the debit orders wrote on the account: credits, dispute reversals, debt recoveries. */
  creditRows = 0
  disputeRows = 0
  recoveryRows = 0
  credited = 0n
  /** What the account gave back to disputes, and what it paid towards the debt. */
  disputeTaken = 0n
  recovered = 0n
  /** Every net amount a dispute reversed (taken back or owed). */
  disputedNet = 0n

  constructor(private readonly calendar: SouthAfricanCalendar) {}

  // ---- money ----

  /**
   * A credit to the account (a deposit; a collection): a partner that owes the bank pays it first.
   */
  credit(money: Money, amount: bigint): void {
    money.balance += amount
    money.available += amount
    this.recover(money)
  }

  private recover(money: Money): void {
    if (this.debt === 0n) return
    const recovered = money.available < this.debt ? money.available : this.debt
    if (recovered <= 0n) return
    money.balance -= recovered
    money.available -= recovered
    this.debt -= recovered
    this.recovered += recovered
    this.recoveryRows++
  }

  // ---- mandates ----

  addMandate(m: MandateModel): void {
    this.mandates.push(m)
  }

  /** The authentication jobs have run up to `atMs`. */
  authenticate(atMs: number): void {
    for (const m of this.mandates) {
      if (m.status !== 'pending_authentication') continue
      if (m.debtor === 'rejected') m.status = 'rejected'
      else if (m.debtor !== 'pending_day' || atMs >= m.createdAtMs + authentication_ms) m.status =
        'active'
    }
  }

  cancelMandate(m: MandateModel): boolean {
    if (m.status !== 'pending_authentication' && m.status !== 'active') return false
    m.status = 'cancelled'
    for (const o of this.orders) {
      if (o.mandate === m && o.status === 'scheduled') this.setStatus(o, 'cancelled', null)
    }
    return true
  }

  // ---- create ----

  /**
   * What create answers for this request, in the README's order of checks: the date (400
   * collection_date), end_date (400), the mandate (400 mandate_reference when not active),
   * then what the mandate does not cover (422).
   */
  createVerdict(m: MandateModel, req: { amount: bigint; requested: string; endDate: string | null },
      nowMs: number): { code: 400 | 422; field: string } | { code: 201; date: string } {
    const today = toSast(new Date(nowMs)).date
    const date = this.calendar.onOrAfter(req.requested)
    if (date < this.calendar.addBusinessDays(today, 2)) return { code: 400,
      field: 'collection_date' }
    if (req.endDate !== null && req.endDate < date) return { code: 400, field: 'end_date' }
    if (m.status !== 'active') return { code: 400, field: 'mandate_reference' }
    if (req.amount > m.maxAmount) return { code: 422, field: 'amount' }
    if (m.frequency === 'once_off' && m.used) return { code: 422, field: 'mandate_reference' }
    return { code: 201, date }
  }

  addOrder(o: OrderModel): void {
    this.orders.push(o)
    if (o.mandate.frequency === 'once_off') o.mandate.used = true
  }

  // ---- cancel ----

  cancelDeadlineMs(o: OrderModel): number {
    return fromSast(o.next ?? o.collectionDate).getTime() - cancel_notice_ms
  }

  cancelOrder(o: OrderModel, nowMs: number): boolean {
    if (o.status !== 'scheduled' || nowMs > this.cancelDeadlineMs(o)) return false
    this.setStatus(o, 'cancelled', null)
    return true
  }

  // ---- disputes raised by the sandbox operator ----

  /** The order's latest collected collection (successful or disputed), if any. */
  lastCollected(o: OrderModel): CollectionModel | undefined {
    return [...o.collections].filter((c) => c.status === 'successful' || c.status === 'disputed')
      .sort((a, b) => (a.date < b.date ? 1 : -1))[0]
  }

  /**
   * False when the order has nothing collected to dispute (400). A collection disputed already
   * keeps its first dispute.
   */
  raiseDispute(o: OrderModel, nowMs: number): boolean {
    const c = this.lastCollected(o)
    if (!c) return false
    c.dispute ??= { atMs: nowMs, acknowledged: false }
    return true
  }

  // ---- due work ----

  /**
   * The collection runs that a run of due jobs from `fromMs` to `toMs` makes, in time order:
   * for each business date among `dates` whose run has not been made, due at 00:00 SAST.
   */
  runsDue(dates: string[]): Array<{ atMs: number; date: string }> {
    return dates.filter((d) => this.calendar.isBusinessDay(d) && !runDates.has(d)).map(
      (d) => ({ atMs: fromSast(d).getTime(), date: d }))
  }

  /** One collection run for `date`, made at `atMs` (README, "Debit-order collection runs"). */
  run(date: string, atMs: number, money: Money): void {
    runDates.add(date)
    // 1. disputes raised by now, oldest first
    const disputes = this.orders
      .flatMap((o) => o.collections.map((c) => ({ o, c })))
      .filter(({ c }) => c.dispute && !c.dispute.acknowledged && c.dispute.atMs <= atMs)
      .sort((a, b) => a.c.dispute!.atMs - b.c.dispute!.atMs
        || (a.o.id < b.o.id ? -1 : a.o.id > b.o.id ? 1 : 0) || (a.c.date < b.c.date ? -1 : 1))
    for (const { o, c } of disputes) {
      // A dispute of an order whose next collection is under way waits for that to end.
      if (o.status === 'processing') continue
      c.dispute!.acknowledged = true
      if (c.status !== 'successful'
        || c.dispute!.atMs - c.processedAtMs > dispute_window_ms) continue
      const taken = money.available < c.net ? (money.available > 0n ? money.available : 0n) : c.net
      money.balance -= taken
      money.available -= taken
      this.debt += c.net - taken
      this.disputeTaken += taken
      this.disputedNet += c.net
      this.disputeRows++
      c.status = 'disputed'
      const wasScheduled = o.status === 'scheduled'
      this.setStatus(o, 'disputed', o.next)
      if (wasScheduled && o.next !== null) this.setStatus(o, 'scheduled', o.next)
    }
    // 2. scheduled orders due by the run's date go to processing
    const due = this.orders.filter((o) => o.status === 'scheduled' && o.next !== null
      && o.next <= date)
    for (const o of due) {
      // README: once its mandate is cancelled, nothing may be collected on it.
      assert.notEqual(o.mandate.status, 'cancelled', `order ${o.id} starts a collection ` +
        `on ${o.next} under its cancelled mandate ${o.mandate.reference}`)
      o.collections.push({ date: o.next!, status: 'processing', attempts: 0, lastAttempt: null,
        net: 0n, processedAtMs: 0, dispute: undefined })
      this.setStatus(o, 'processing', o.next)
    }
    // 3. every collection waiting for a try on this date, by collection date and order
    const open = this.orders
      .flatMap((o) => o.collections.map((c) => ({ o, c })))
      .filter(({ c }) => c.status === 'processing'
        && (c.lastAttempt === null || c.lastAttempt < date))
      .sort((a, b) => (a.c.date < b.c.date ? -1 : a.c.date > b.c.date ? 1 : a.o.id < b.o.id ? -1
        : 1))
    for (const { o, c } of open) this.attempt(o, c, date, atMs, money)
  }

  private attempt(o: OrderModel, c: CollectionModel, date: string, atMs: number,
      money: Money): void {
    if (o.mandate.status !== 'active') {
      // Its mandate was cancelled while the collection was being retried: the debtor's bank
      // is not asked again (no attempt), the order ends failed and a recurring one stops.
      c.status = 'failed'
      o.lastNet = null
      this.setStatus(o, 'failed', null)
      return
    }
    c.attempts++
    c.lastAttempt = date
    const answer = railAnswer(o.mandate.debtor, c.attempts)
    if (answer === 'collected') {
      const charges = bank_charges < o.amount ? bank_charges : o.amount
      c.net = o.amount - charges
      c.status = 'successful'
      c.processedAtMs = atMs
      if (o.mandate.debtor === 'disputed') c.dispute ??= { atMs: atMs + dispute_after_ms,
        acknowledged: false }
      this.creditRows++
      this.credited += c.net
      this.credit(money, c.net)
      o.count++
      o.lastNet = c.net
      this.setStatus(o, 'successful', o.next)
      this.scheduleNext(o, date)
      return
    }
    if (answer === 'insufficient') {
      const lastTry = o.tracking === 0 ? c.date : this.calendar.addBusinessDays(c.date, o.tracking)
      if (this.calendar.addBusinessDays(date, 1) <= lastTry) {
        // Tried again at the next run: a history entry, the order stays processing.
        this.setStatus(o, 'processing', o.next)
        return
      }
    }
    c.status = 'failed'
    o.lastNet = null
    this.setStatus(o, 'failed', o.next)
    // A closed account is never collected again; other failures leave the schedule running.
    if (answer === 'closed') o.next = null
    else this.scheduleNext(o, date)
  }

  /**
   * After a collection ends on `ended` (the run's date: its collection date, or a later
   * retry's): the next occurrence after that day, so occurrences that fell while it was
   * still being retried are skipped rather than collected late in a burst.
   */
  private scheduleNext(o: OrderModel, ended: string): void {
    const next = this.nextDate(o, ended)
    if (next === null) {
      o.next = null
      return
    }
    this.setStatus(o, 'scheduled', next)
  }

  /**
   * Weekly: 7 days on from the date asked for; monthly: its day of month, or the month's last
   * business day. Moved to a business day; none after end_date.
   */
  nextDate(o: OrderModel, after: string): string | null {
    if (o.frequency === 'once_off' || o.endDate === null) return null
    for (let n = 1; n < 1000; n++) {
      const scheduled = o.frequency === 'weekly' ? addDays(o.anchor, 7 * n)
        : this.monthly(o.anchor, n)
      if (scheduled > o.endDate) return null
      const date = this.calendar.onOrAfter(scheduled)
      if (date > after) return date
    }
    throw new Error('no next date')
  }

  private monthly(anchor: string, n: number): string {
    const year = Number(anchor.slice(0, 4))
    const month = Number(anchor.slice(5, 7)) - 1 + n
    const day = Number(anchor.slice(8, 10))
    const y = year + Math.floor(month / 12)
    const m = (month % 12) + 1
    const days = new Date(Date.UTC(y, m, 0)).getUTCDate()
    const ym = `${y}-${String(m).padStart(2, '0')}`
    if (day <= days) return `${ym}-${String(day).padStart(2, '0')}`
    let last = `${ym}-${String(days).padStart(2, '0')}`
    while (!this.calendar.isBusinessDay(last)) last = addDays(last, -1)
    return last
  }

  private setStatus(o: OrderModel, status: OrderStatus, next: string | null): void {
    o.status = status
    o.next = next
    o.history.push(status)
  }
}

/** Every SAST date from the one of `fromMs` to the one of `toMs`. */
export function sastDatesBetween(fromMs: number, toMs: number): string[] {
  const dates: string[] = []
  const last = toSast(new Date(toMs)).date
  for (let d = toSast(new Date(fromMs)).date; d <= last; d = addDays(d, 1)) dates.push(d)
  return dates
}
