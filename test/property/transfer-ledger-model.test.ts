import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { checkProperty } from './property-budget.ts'
import fc from 'fast-check'
import { sql } from 'kysely'
import type { TxStatus } from '../../src/ledger/ledger-tables.ts'
import { magicRecipients } from '../../src/rails/clearing-house/magic-recipients.ts'
import type { TransactionView } from '../../src/transfers/transfer-contract.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { outcome, type Outcome } from '../support/assertions.ts'
import { wrongOtp } from '../bulk/helpers.ts'
import { magic } from '../transfers/helpers.ts'
import { addDays, fromSast, toSast } from '../../src/calendar/sa-calendar.ts'
import {
  accountNumberOf as debtorAccountOf,
  assertAllowedTransitions,
  debitActions,
  DebitModel,
  sastDatesBetween,
  type DebitAction,
  type MandateModel,
  type OrderModel,
} from './debit-model.ts'
import {
  debitView,
  isLifecycleKind,
  Lifecycle,
  lifecycleActions,
  type LifecycleAction,
} from './lifecycle-model.ts'

// A model-based property of the ledger, run against the real service (NATS, SDK, storage):
// random sequences of deposits, EFT and RTC transfers to ordinary and magic recipients,
// repeated clientTxIds, clearing runs and clock moves (and bulk batches, debit orders, legal
// holds, freezes and closure: below), each compared step by step with a small model of the
// account's balance and available balance (docs/guides/payments.md: available = balance −
// holds; EFT held at once and posted by clearing; RTC at once; fees separate, covered by the
// funds check; a duplicate key within the window is 409 naming the original tx_id; a
// returned payment is credited back as a reversal).
//
// The clearing run collects returns FIRST and then settles pending EFTs
// (src/transfers/clearing-service.ts), so an EFT to the "returned" account is settled in
// run k and reversed in run k+1, and an RTC to it is reversed by the first run after it.
// Fees are not returned with a reversal. A payout's Pending `transfer` row holds amount and
// fee; its `fee` row is appended only when it settles Successful (RTC at once, EFT by the
// clearing run, in the order the run settles them), right after the payment turns
// Successful, in the same batch: a payout that fails or is invalid has no fee row. The
// model counts the account's rows as they are written, so it knows each fee row's place in
// the account's sequence, its date and its running balance (within a burst, only the
// burst's rows it is among).
//
// Bulk batches (README "Bulk payments") join the same account: initiate holds total plus
// fees at once (or is refused with 400 and holds nothing); the right PIN, read as a sandbox
// operator, turns the hold into one debit; a cancel, the PIN's expiry (the expiry job, or
// a verify or cancel after it) and the third wrong PIN release it; the `bulk.process` job
// pays the RTC payments, the EFT cycle after a clearing run the EFT ones; a payment the
// rail declines or rejects is refunded with its fee, one to the "returned" recipient is
// reversed by a later clearing run like a single payout. The bank's job loop is stopped, so
// jobs run only when the model says: the "jobs" action, and around each clearing run
// (jobs due, the run, its cycle event handed over, jobs due again: so a batch verified
// before a run has its EFTs paid by it). The entity's limits (README "Limits per entity")
// hold too: after 10 wrong PINs within a rolling hour every verify is 429 and counts
// nothing, and with 20 batches waiting for their PIN (not yet expired) initiate is 429.
//
// Debit orders (debit-model.ts, which says what it predicts exactly and where it checks
// invariants instead) join the same account: each run registers one to three mandates for
// the simulated debit rail's magic debtors and maybe orders under them, then mixes in order
// creates (some refused: too early, inactive mandate, over max_amount), cancels inside and
// outside the window, mandate cancels, operator disputes (some after paying everything
// out, so that the account cannot cover the reversal and the partner owes the rest),
// payouts of everything available, and sandbox clock advances of an hour to ten days,
// which run the daily collection runs (and the bulk jobs) as they fall due; a last advance
// of 3 to 21 days ends each run. The "jobs" action makes today's collection run too, when
// it has not been made yet. Collections credit amount − 350; disputes reverse; a deposit or
// collection pays the partner's debt first (from an active account only).
//
// The account's lifecycle (lifecycle-model.ts, which states the rules it models) joins the
// same account: operators' legal holds (some larger than what is available, some released
// twice; with a probe payout one cent over what the hold leaves), the partner's freezes
// (each with a few actions while frozen, mostly unfrozen after them), unfreezes, and close
// attempts (half of them right after a clearing run), each refused with exactly the
// obstacles the model names or paying the whole balance to the entity's second account in
// the same request; about half the runs make one more close attempt (holds released first
// or not; mostly after a clearing run and an RTC payout to the "returned" recipient, whose
// return then comes for the closed account), at the very end or right after the actions (before the
// draining clearing runs, the last advance and the finale), and, once closed, a payout, a
// batch, a hold, a freeze and an operator's deposit that must all be refused. After a
// closure the remaining steps go on against the closed account (new debit orders are not
// made: they would collect into the second account). The status, the holds, the second
// account's balance and the closed account's unclaimed funds are compared with the model's
// with the ledger; `ledger verify` checks that an account's held money is its pending
// payments and its holds together.
//
// Close attempts come at any point: while a verified batch is not yet paid (refused: it is a
// pending transaction) and while a successful payout to the "returned" recipient is still to
// be returned (taken: the return then comes for a closed account, which it does not credit;
// the payout turns Reversed and the money is the bank's unclaimed funds, compared with the
// model's). BANK_PROPERTY_KNOWN_BUGS, which once let these cases in, is no longer read.
//
// One bank serves the whole property; each run uses a fresh partner and account, so the
// model starts from zero. Clearing runs are bank-wide: they also settle what earlier runs
// left pending, which touches only those runs' accounts. Reproduce a failure with
// BANK_PROPERTY_SEED=<seed> (fast-check prints the seed and the shrunk sequence), and with
// BANK_PROPERTY_PATH=<path> (printed beside it) replay only the shrunk sequence; search
// longer with BANK_PROPERTY_RUNS=<runs> (8 by default, to keep a pass within seconds of CPU)
// and BANK_PROPERTY_SECONDS=<seconds> (the time budget, 180 s by default: property-budget.ts);
// BANK_PROPERTY_DEBUG=1 prints what each run's debit orders and lifecycle actions came to.

type Recipient = 'normal' | 'failed' | 'invalid' | 'invalid_branch' | 'returned'

type Action =
  | { kind: 'deposit'; amount: number }
  | { kind: 'transfer'; rtc: boolean; amount: number; recipient: Recipient }
  /**
   * A transfer with the clientTxId of an earlier request (index modulo those sent), its body
   * repeated or changed.
   */
  | { kind: 'repeat'; pick: number; sameBody: boolean; rtc: boolean; amount: number;
    recipient: Recipient }
  /**
   * Transfers sent at once, all of one rail and amount to recipients the rail accepts, so
   * that exactly min(count, available / (amount + fee)) of them are accepted, in any order.
   */
  | { kind: 'burst'; count: number; rtc: boolean; amount: number; returned: boolean }
  | { kind: 'clearing' }
  | { kind: 'advance'; minutes: number }
  /**
   * A batch of 1–5 payments; `overFunds` makes its first payment one cent more than is available.
   */
  | { kind: 'bulk_initiate'; payments: BulkPaymentSpec[]; overFunds: boolean }
  /** The right PIN for one of this run's batches (index modulo those initiated). */
  | { kind: 'bulk_verify'; pick: number }
  /** Wrong PINs, one after the other: the third locks the batch out. */
  | { kind: 'bulk_wrong_otp'; pick: number; times: number }
  | { kind: 'bulk_cancel'; pick: number }
  /**
   * The clock moves to a batch's PIN expiry (1 ms before, at, 1 ms after, well after; never
   * back), then due jobs run, or the right PIN or a cancel meets a PIN expired before its job ran.
   */
  | { kind: 'bulk_expire'; pick: number; offsetMs: number; then: 'jobs' | 'verify' | 'cancel'
    | 'nothing' }
  /** Due jobs run: PIN expiries, and the processing of verified batches (RTC payments paid). */
  | { kind: 'jobs' }
  | DebitAction
  | LifecycleAction
  /**
   * The partner freezes the account, the actions `during` run while it is frozen, and with
   * `unfreeze` the partner unfreezes it after them.
   */
  | { kind: 'freeze'; during: Action[]; unfreeze: boolean }

type FreezeAction = Extract<Action, { kind: 'freeze' }>

function isLifecycle(a: Action): a is LifecycleAction | FreezeAction {
  return isLifecycleKind(a.kind)
}

/** A hold's expires_at, when it has one: ten years on, never reached by a run. */
const hold_expiry_ms = 10 * 365 * 86_400_000

interface BulkPaymentSpec {
  rtc: boolean
  amount: number
  recipient: Recipient
}

const recipient: fc.Arbitrary<Recipient> = fc.constantFrom('normal', 'normal', 'normal', 'failed',
  'invalid', 'invalid_branch', 'returned')
const amount = fc.integer({ min: 100, max: 50_000 })
const otp_ttl_ms = 5 * 60_000
const otp_attempts_max = 3
const wrong_pins_per_entity_max = 10
const wrong_pin_window_ms = 60 * 60_000
const pending_batches_per_entity_max = 20
const bulkPayment: fc.Arbitrary<BulkPaymentSpec> =
  fc.record({ rtc: fc.boolean(), amount: fc.integer({ min: 100, max: 10_000 }), recipient })

const baseActions: Array<fc.WeightedArbitrary<Action>> = [
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deposit' as const),
    amount: fc.integer({ min: 1_000, max: 150_000 }) }) },
  { weight: 7, arbitrary: fc.record({ kind: fc.constant('transfer' as const), rtc: fc.boolean(),
    amount, recipient }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(),
      sameBody: fc.boolean(), rtc: fc.boolean(), amount, recipient }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('burst' as const),
      count: fc.integer({ min: 2, max: 8 }), rtc: fc.boolean(), amount, returned: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'clearing' as const }) },
  // Mostly minutes; sometimes exactly the 24-hour duplicate window, or just past it.
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const),
      minutes: fc.oneof(fc.integer({ min: 1, max: 180 }), fc.constantFrom(24 * 60, 24 * 60 + 1)) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('bulk_initiate' as const),
      payments: fc.array(bulkPayment, { minLength: 1, maxLength: 5 }),
      overFunds: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('bulk_verify' as const),
    pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bulk_wrong_otp' as const), pick: fc.nat(),
    times: fc.integer({ min: 1, max: otp_attempts_max }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bulk_cancel' as const),
    pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('bulk_expire' as const),
      pick: fc.nat(),
      offsetMs: fc.constantFrom(-1, 0, 1, 90_000),
      then: fc.constantFrom('jobs' as const, 'verify' as const, 'cancel' as const,
        'nothing' as const),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'jobs' as const }) },
  ...debitActions,
]
/** A freeze, up to four actions while frozen (a close among them, perhaps), mostly an unfreeze. */
const freeze: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant('freeze' as const),
  during: fc.array(fc.oneof(...baseActions, ...lifecycleActions), { maxLength: 4 }),
  unfreeze: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
})
const action: fc.Arbitrary<Action> = fc.oneof(...baseActions, ...lifecycleActions,
  { weight: 2, arbitrary: freeze })
const mandateCreate = debitActions[0]!.arbitrary as fc.Arbitrary<Extract<DebitAction,
  { kind: 'mandate_create' }>>
const orderCreate = debitActions[1]!.arbitrary as fc.Arbitrary<Extract<DebitAction,
  { kind: 'order_create' }>>

const scenario = fc.record({
  // Often nothing: an account that lives on its collections cannot always cover a dispute.
  opening: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300_000 })),
  /**
   * Mandates registered (and their authentication run) before the actions, so that orders have some
   * to go on.
   */
  mandates: fc.array(mandateCreate, { minLength: 1, maxLength: 3 }),
  /** Orders under them, made right after. */
  orders: fc.array(orderCreate, { minLength: 0, maxLength: 2 }),
  // Up to 40 (35 before the lifecycle actions came, which take about a seventh of them).
  actions: fc.array(action, { minLength: 10, maxLength: 40 }),
  /**
   * A last sandbox advance after the actions, so that orders still scheduled are collected (or not)
   * and disputes booked.
   */
  finalDays: fc.integer({ min: 3, max: 21 }),
  /**
   * Then, mostly: everything paid out, a dispute of one of the orders (collected by then,
   * most likely) booked by the next run, so the partner may owe the rest, and a deposit
   * (which pays that debt first).
   */
  finale: fc.option(fc.record({ pick: fc.nat(), deposit: fc.integer({ min: 100, max: 20_000 }) }),
    { freq: 4 }),
  /**
   * In about half the runs, a last close attempt (its holds released first, or not; the second
   * account named, mostly) and, once closed, debits that must all be refused: at the very end,
   * or (`early`) right after the actions, so that the clearing runs, the advance and the
   * finale then meet the closed account. Mostly (`returned`) an RTC payout to the "returned"
   * recipient goes first, so that (early) its return comes for the closed account.
   */
  closing: fc.option(fc.record({ payTo: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
    releaseHolds: fc.boolean(), early: fc.boolean(),
    returned: fc.integer({ min: 0, max: 3 }).map((n) => n > 0) }), { freq: 2 }),
})

function accountNumberOf(r: Recipient): { account_number: string; branch_code: string } {
  switch (r) {
    case 'failed':
      return { account_number: magicRecipients.failed_account_number, branch_code: '250655' }
    case 'invalid':
      return { account_number: magicRecipients.invalid_account_number, branch_code: '250655' }
    case 'invalid_branch':
      return { account_number: '62000000017', branch_code: magicRecipients.invalid_branch_code }
    case 'returned':
      return { account_number: magicRecipients.returned_account_number, branch_code: '250655' }
    case 'normal':
      return { account_number: '62000000017', branch_code: '250655' }
  }
}

/** What the rail does with a payment to this recipient. */
function railOutcome(r: Recipient): 'Successful' | 'Failed' | 'Invalid' {
  if (r === 'failed') return 'Failed'
  if (r === 'invalid' || r === 'invalid_branch') return 'Invalid'
  return 'Successful'
}

interface TransferBody {
  account_id: string
  clientTxId: string
  amount: number
  ref: string
  own_ref: string
  pay_and_clear: boolean
  account_number: string
  branch_code: string
  name: string
}

/**
 * The simulated rail's magic recipients as test/transfers/helpers.ts spells them, for bulk
 * payments.
 */
function bulkRecipientOf(r: Recipient): { account_number: string; branch_code: string } {
  switch (r) {
    case 'failed':
      return { account_number: magic.failed, branch_code: '250655' }
    case 'invalid':
      return { account_number: magic.invalid, branch_code: '250655' }
    case 'invalid_branch':
      return { account_number: '62000000017', branch_code: magic.invalidBranch }
    case 'returned':
      return { account_number: magic.returned, branch_code: '250655' }
    case 'normal':
      return { account_number: '62000000017', branch_code: '250655' }
  }
}

interface Payout {
  txId: string
  amount: bigint
  total: bigint
  recipient: Recipient
  /** Set for a bulk payment, whose tx_id the model learns only from the batch's status. */
  bulk?: BulkPaymentModel
}

/** A single payout as the model took it (INTERNAL: a closure's payment of the balance). */
interface SinglePayout extends Payout {
  paymentType: 'EFT' | 'RTC' | 'INTERNAL'
  fee: bigint
  /** When it was taken: a clearing run settles pending EFTs oldest first, then by tx_id. */
  atMs: number
}

/**
 * The `fee` row of a single payout, written when (and only if) the payout settles
 * Successful, in the same batch and right after the payment's own status change: a
 * payout that ends Failed or Invalid has none.
 */
interface FeeRowModel {
  parentTxId: string
  paymentType: SinglePayout['paymentType']
  fee: bigint
  /** When the payout settled: the row's date. */
  atMs: number
  /** Its place in the account's sequence (1 = the oldest row), when the model knows it exactly. */
  seq: number | undefined
  /** The balance after the fee, when the model knows it exactly. */
  runningBalance: bigint | undefined
  /**
   * Else (an RTC of a burst, whose requests are taken and settled by concurrent batches) the
   * places of the burst's rows, among which it comes somewhere after its payment's row.
   */
  within: { from: number; to: number } | undefined
}

type BatchStatus = 'pending_otp' | 'processing' | 'completed' | 'cancelled' | 'failed'

interface BulkPaymentModel {
  paymentId: string
  rtc: boolean
  amount: bigint
  fee: bigint
  recipient: Recipient
  status: 'pending' | 'processing' | 'success' | 'failed'
  /** The payment's own ledger row, once the processing job has written it. */
  row: TxStatus | undefined
}

interface BatchModel {
  bulkPaymentId: string
  payments: BulkPaymentModel[]
  /** Total plus fees: what initiate holds and verify debits. */
  hold: bigint
  expiresAtMs: number
  status: BatchStatus
  /** When the right PIN came: the batch's processing job is due then. */
  verifiedAtMs?: number
  failureReason: 'otp_expired' | 'otp_locked' | undefined
  attempts: number
}

/** The expected state of one account. */
class Model {
  balance = 0n
  available = 0n
  /** EFTs held, settled by the next clearing run. */
  pendingEft: SinglePayout[] = []
  /** Successful payments to the "returned" account, reversed by the next clearing run. */
  returnsDue: Payout[] = []
  readonly status = new Map<string, TxStatus>()
  /** Every single payout taken, by tx_id (its row is the `transfer` row). */
  readonly payouts = new Map<string, SinglePayout>()
  /** The fee rows written, by their payment's tx_id. */
  readonly feeRows = new Map<string, FeeRowModel>()
  /** clientTxId → the transfer that claimed it and when (keys of refused requests are released). */
  readonly keys = new Map<string, { txId: string; atMs: number }>()
  readonly sent: TransferBody[] = []
  deposits = 0
  reversals = 0
  /** Batches initiate accepted, in order (a refused one stores nothing). */
  readonly batches: BatchModel[] = []
  refunds = 0
  /** When each wrong PIN was given: the entity's budget counts those of the last hour. */
  readonly wrongPinsAtMs: number[] = []
  /** Status, legal holds, closure. */
  readonly lifecycle = new Lifecycle()

  constructor(readonly debit: DebitModel) {}

  /**
   * A deposit; a partner that owes the bank (a disputed debit order's shortfall) is paid first,
   * from an active account.
   */
  deposit(amount: bigint): void {
    this.deposits++
    this.debit.credit(debitView(this, this.lifecycle), amount)
  }

  /**
   * What a close counts as pending transactions: a payout held, a batch waiting for its PIN,
   * a verified batch not yet completed (its payments not yet written, or waiting for their
   * rail: a refund may still come back), and a debit order's collection into the account
   * under way with the debtor's bank (its money may still come in).
   */
  hasPending(): boolean {
    return this.pendingEft.length > 0 || this.batches.some((b) => b.status === 'pending_otp'
      || b.status === 'processing') || this.debit.orders.some((o) => o.status === 'processing')
  }

  /**
   * Closed: the whole balance (all of it available: nothing held) paid to the entity's second
   * account as an INTERNAL transfer row without a fee, `txId` (none for a balance of 0).
   */
  close(txId: string | undefined, nowMs: number): void {
    const amount = this.balance
    assert.equal(this.available, amount, 'an account that may close holds nothing')
    if (txId !== undefined) {
      this.payouts.set(txId, { txId, amount, total: amount, recipient: 'normal',
        paymentType: 'INTERNAL', fee: 0n, atMs: nowMs })
      this.status.set(txId, 'Successful')
    }
    this.balance = 0n
    this.available = 0n
    this.lifecycle.closed(amount, this.debit)
  }

  /**
   * The rows the account has now, as the model counts them: the count checkLedger compares,
   * and (plus one) the place in the account's sequence of the next row written.
   */
  rowCount(): number {
    const bulkPaymentRows =
      this.batches.reduce((n, b) => n + b.payments.filter((p) => p.row !== undefined).length, 0)
    // Per accepted batch one funding row, one row per payment once processed, one refund per
    // payment not made.
    const bulkRows = this.batches.length + bulkPaymentRows + this.refunds
    const debitRows = this.debit.creditRows + this.debit.disputeRows + this.debit.recoveryRows
    return this.deposits + this.status.size + this.feeRows.size + this.reversals + bulkRows
      + debitRows
  }

  /**
   * A single payout taken: its Pending `transfer` row (holding amount + fee) is written; an
   * RTC is then settled at once, in a batch of its own.
   */
  accept(txId: string, body: TransferBody, fee: bigint, recipient: Recipient,
      nowMs: number): TxStatus {
    const paymentType = body.pay_and_clear ? 'RTC' : 'EFT'
    const payout: SinglePayout = { txId, amount: BigInt(body.amount),
      total: BigInt(body.amount) + fee, recipient, paymentType, fee, atMs: nowMs }
    this.keys.set(body.clientTxId, { txId, atMs: nowMs })
    this.payouts.set(txId, payout)
    this.status.set(txId, 'Pending')
    this.available -= payout.total
    if (paymentType === 'EFT') this.pendingEft.push(payout)
    else this.settlePayout(payout, nowMs)
    return this.status.get(txId)!
  }

  /**
   * The rail's answer for a pending single payout: the hold is released; accepted, amount and
   * fee are posted, the payment turns Successful and then its fee row is appended (posted,
   * so its running balance is the balance after the fee); otherwise it turns Failed or
   * Invalid and no fee row is written.
   */
  private settlePayout(payout: SinglePayout, nowMs: number): void {
    const status = railOutcome(payout.recipient)
    this.status.set(payout.txId, status)
    if (status !== 'Successful') {
      this.available += payout.total
      return
    }
    this.balance -= payout.total
    if (payout.recipient === 'returned') this.returnsDue.push(payout)
    if (payout.fee > 0n) {
      this.feeRows.set(payout.txId, {
        parentTxId: payout.txId, paymentType: payout.paymentType, fee: payout.fee, atMs: nowMs,
        seq: this.rowCount() + 1, runningBalance: this.balance, within: undefined,
      })
    }
  }

  /**
   * Returns collected first (each a `reversal` row, in one batch), then every pending EFT
   * settled, oldest first and then by tx_id (src/ledger/ledger-store.ts, pendingPayouts):
   * the order their fee rows are appended in.
   */
  clearingRun(nowMs: number): void {
    for (const r of this.returnsDue) {
      if (this.lifecycle.status === 'closed') {
        // A return for a closed account: the payout is Reversed, the account untouched.
        this.lifecycle.returnedUnclaimed(r.amount)
        if (r.bulk) r.bulk.row = 'Reversed'
        else this.status.set(r.txId, 'Reversed')
        continue
      }
      this.balance += r.amount
      this.available += r.amount
      if (r.bulk) r.bulk.row = 'Reversed'
      else this.status.set(r.txId, 'Reversed')
      this.reversals++
    }
    this.returnsDue = []
    const pending = [...this.pendingEft].sort((a, b) => a.atMs - b.atMs
      || (a.txId < b.txId ? -1 : a.txId > b.txId ? 1 : 0))
    this.pendingEft = []
    for (const e of pending) this.settlePayout(e, nowMs)
  }

  /** The entity has given its 10 wrong PINs within the hour before `nowMs`: every verify is 429. */
  pinBudgetSpent(nowMs: number): boolean {
    return this.wrongPinsAtMs.filter((atMs) => atMs > nowMs - wrong_pin_window_ms)
      .length >= wrong_pins_per_entity_max
  }

  /** 20 batches wait for a PIN that has not expired: initiate is 429. */
  pendingFull(nowMs: number): boolean {
    return this.batches.filter((b) => b.status === 'pending_otp' && nowMs < b.expiresAtMs)
      .length >= pending_batches_per_entity_max
  }

  /** Initiate: one hold of total plus fees, or a refusal that holds nothing. */
  initiate(batch: BatchModel): boolean {
    if (this.available < batch.hold) return false
    this.available -= batch.hold
    this.batches.push(batch)
    return true
  }

  /** Cancel, expiry or lock-out: the hold is released, nothing is paid. */
  endUnpaid(batch: BatchModel, status: 'cancelled' | 'failed',
      reason?: 'otp_expired' | 'otp_locked'): void {
    assert.equal(batch.status, 'pending_otp')
    batch.status = status
    batch.failureReason = reason
    this.available += batch.hold
  }

  /** The right PIN in time: the hold becomes one debit; available does not move. */
  fund(batch: BatchModel): void {
    batch.status = 'processing'
    this.balance -= batch.hold
    for (const p of batch.payments) p.status = 'processing'
  }

  /**
   * Bulk jobs due by `nowMs`, each with its due time (the order jobs run in): expired PINs
   * end their batches; verified batches get their rows and RTC answers.
   */
  bulkJobsDue(nowMs: number): Array<{ atMs: number; apply: () => void }> {
    const jobs: Array<{ atMs: number; apply: () => void }> = []
    for (const batch of this.batches) {
      if (batch.status === 'pending_otp' && nowMs >= batch.expiresAtMs) {
        jobs.push({ atMs: batch.expiresAtMs, apply: () => this.endUnpaid(batch, 'failed',
          'otp_expired') })
      }
      if (batch.status !== 'processing' || batch.payments.some((p) => p.row !== undefined)) continue
      jobs.push({
        atMs: batch.verifiedAtMs ?? nowMs,
        apply: () => {
          for (const p of batch.payments) p.row = 'Pending'
          this.settle(batch, batch.payments.filter((p) => p.rtc))
        },
      })
    }
    return jobs
  }

  /**
   * The EFT cycle after a clearing run: the EFTs of every batch verified (and processed) before it.
   */
  eftCycle(): void {
    for (const batch of this.batches) {
      if (batch.status !== 'processing') continue
      this.settle(batch, batch.payments.filter((p) => !p.rtc && p.row === 'Pending'))
    }
  }

  private settle(batch: BatchModel, payments: BulkPaymentModel[]): void {
    for (const p of payments) {
      p.row = railOutcome(p.recipient)
      p.status = p.row === 'Successful' ? 'success' : 'failed'
      if (p.row === 'Successful') {
        if (p.recipient === 'returned') this.returnsDue.push(
          { txId: '', amount: p.amount, total: p.amount + p.fee, recipient: p.recipient, bulk: p })
      } else {
        // A payment not made costs no fee: amount and fee come back in one refund.
        this.balance += p.amount + p.fee
        this.available += p.amount + p.fee
        this.refunds++
      }
    }
    if (batch.payments.every((p) => p.status === 'success' || p.status === 'failed')) batch.status =
      'completed'
  }
}

const tb = useTestBank()
let fees: { EFT: bigint; RTC: bigint }

before(async () => {
  await tb.ready
  // Jobs run only when an action says so, so each step knows what ran (as test/bulk does).
  await tb.bank.services.jobRunner.stop()
  fees = tb.config.fees
})

/** The `ref` of a recovery of partner debt from a credit (src/ledger/partner-debt.ts). */
const recovery_ref = 'partner debt recovered'

const runJobs = () => tb.bank.services.jobRunner.runDue()

/**
 * Hands every pending event to its subscribers (the clearing run's cycle event enqueues the bulk
 * EFT cycle).
 */
async function dispatchEvents(): Promise<void> {
  for (let round = 0; round < 100; round++) {
    if ((await tb.bank.services.events.dispatchPending()) === 0) return
  }
  assert.fail('events still pending after 100 dispatch rounds')
}

class Run {
  readonly model = new Model(new DebitModel(tb.bank.services.calendar))
  readonly log: string[] = []
  /** What the lifecycle actions came to, for BANK_PROPERTY_DEBUG. */
  readonly notes: string[] = []

  constructor(
    readonly partner: TestPartner,
    readonly accountId: string,
  ) {}

  async apply(a: Action): Promise<void> {
    this.log.push(JSON.stringify(a))
    switch (a.kind) {
      case 'deposit':
        return this.deposit(a.amount)
      case 'transfer':
        return this.transfer(this.body(randomUUID(), a))
      case 'repeat': {
        const earlier = this.model.sent[a.pick % Math.max(1, this.model.sent.length)]
        if (!earlier) return this.transfer(this.body(randomUUID(), a))
        return this.transfer(a.sameBody ? { ...earlier } : this.body(earlier.clientTxId, a))
      }
      case 'burst':
        return this.burst(a)
      case 'clearing':
        return this.clearing()
      case 'advance':
        tb.clock.advance(a.minutes * 60_000)
        return
      case 'spend_all': {
        const amount = this.model.available - (a.rtc ? fees.RTC : fees.EFT)
        if (amount < 100n) return
        return this.transfer(this.body(randomUUID(), { rtc: a.rtc, amount: Number(amount),
          recipient: 'normal' }))
      }
      case 'jobs':
        return this.jobs()
      case 'bulk_initiate':
      case 'bulk_verify':
      case 'bulk_wrong_otp':
      case 'bulk_cancel':
      case 'bulk_expire':
        return this.applyBulk(a)
      default:
        return isLifecycle(a) ? this.applyLifecycle(a) : this.applyDebit(a)
    }
  }

  /** An operator's deposit; to a closed account it is refused and changes nothing. */
  private async deposit(amount: number): Promise<void> {
    const reply = await outcome(tb.operator.accounts.deposit({ account_id: this.accountId,
      amount, ref: 'property deposit' }))
    if (this.model.lifecycle.status === 'closed') {
      return this.expectNotActive(reply, 'a deposit', 'credited')
    }
    assert.ok(reply.ok, `the deposit should be taken: ${reply.ok ? '' : reply.error.message}`)
    this.model.deposit(BigInt(amount))
  }

  private async applyLifecycle(a: LifecycleAction | FreezeAction): Promise<void> {
    switch (a.kind) {
      case 'hold_place':
        return this.holdPlace(a)
      case 'hold_release':
        return this.holdRelease(a.pick, a.again)
      case 'freeze': {
        await this.changeStatus('freeze')
        for (const [i, inner] of a.during.entries()) {
          await this.apply(inner)
          await this.checkBalances(`after action ${i} while frozen`)
        }
        if (a.unfreeze) await this.changeStatus('unfreeze')
        return
      }
      case 'unfreeze':
        return this.changeStatus('unfreeze')
      case 'close':
        if (a.settle) await this.clearing()
        return this.close(a.payTo)
    }
  }

  /**
   * The partner freezes or unfreezes the account: asking for the status it has changes nothing;
   * a closed account's status cannot change (422).
   */
  private async changeStatus(action: 'freeze' | 'unfreeze'): Promise<void> {
    const lifecycle = this.model.lifecycle
    const request = { account_id: this.accountId, reason: `property ${action}` }
    const accounts = this.partner.client.accounts
    const reply = await outcome(action === 'freeze' ? accounts.freeze(request)
      : accounts.unfreeze(request))
    if (lifecycle.status === 'closed') {
      assert.ok(!reply.ok, `a closed account cannot be ${action === 'freeze' ? 'frozen'
        : 'unfrozen'}`)
      assert.equal(reply.error.code, 422, reply.error.message)
      return
    }
    assert.ok(reply.ok, `${action} should succeed: ${reply.ok ? '' : reply.error.message}`)
    this.notes.push(`${action} ${lifecycle.status}`)
    lifecycle.status = action === 'freeze' ? 'frozen' : 'active'
    assert.equal(reply.value.status, lifecycle.status)
    assert.deepEqual(reply.value.holds.map((h) => h.hold_id).sort(),
      lifecycle.activeHolds().map((h) => h.holdId).sort(), 'the status lists the holds')
  }

  /**
   * A legal hold (after a deposit, with `fund`): refused (422, nothing changes) on a closed
   * account or beyond what is available; then, with a probe, a payout of one cent more than
   * is left available.
   */
  private async holdPlace(a: Extract<LifecycleAction, { kind: 'hold_place' }>): Promise<void> {
    const model = this.model
    if (a.fund > 0) await this.deposit(a.fund)
    const amount = Lifecycle.holdAmount(a, model.available)
    const nowMs = tb.clock.now().getTime()
    // Years past the run's end: the field is kept and shown, and never reached.
    const expiresAt = a.expires ? new Date(Math.floor(nowMs / 1000) * 1000 + hold_expiry_ms)
      .toISOString() : undefined
    const reference = `Order ${model.lifecycle.holds.length + 1}`
    const reply = await outcome(tb.operator.accounts.placeHold({ account_id: this.accountId,
      amount: Number(amount), reference, ...(expiresAt ? { expires_at: expiresAt } : {}) }))
    if (model.lifecycle.status === 'closed' || amount > model.available) {
      assert.ok(!reply.ok, `a hold of ${amount} with ${model.available} available on a ` +
        `${model.lifecycle.status} account must be refused`)
      assert.equal(reply.error.code, 422, reply.error.message)
      this.notes.push('hold refused')
      return
    }
    assert.ok(reply.ok, `the hold should be placed: ${reply.ok ? '' : reply.error.message}`)
    this.notes.push(`hold ${amount}`)
    assert.deepEqual([reply.value.amount, reply.value.reference, reply.value.released_at,
      reply.value.expires_at === null ? null : Date.parse(reply.value.expires_at)],
    [String(amount), reference, null, expiresAt ? Date.parse(expiresAt) : null])
    model.lifecycle.place(model, reply.value.hold_id, amount)
    if (a.probe === 'none') return
    const rtc = a.probe === 'RTC'
    const over = model.available + 1n - (rtc ? fees.RTC : fees.EFT)
    // A payment is at least 100 cents.
    if (over >= 100n) await this.transfer(this.body(randomUUID(), { rtc, amount: Number(over),
      recipient: 'normal' }))
  }

  private async holdRelease(pick: number, again: boolean): Promise<void> {
    const lifecycle = this.model.lifecycle
    const released = lifecycle.holds.filter((h) => h.released)
    const from = again && released.length > 0 ? released : lifecycle.activeHolds()
    const hold = from[pick % Math.max(1, from.length)]
    if (!hold) return
    const reply = await outcome(tb.operator.accounts.releaseHold({ hold_id: hold.holdId,
      reason: hold.released ? 'property release again' : 'property release' }))
    assert.ok(reply.ok, `the release should be answered: ${reply.ok ? '' : reply.error.message}`)
    // No dual-control threshold in this bank; a hold released already is answered as it is.
    assert.deepEqual([reply.value.status, reply.value.hold.release_reason],
      ['released', 'property release'])
    assert.notEqual(reply.value.hold.released_at, null)
    if (!hold.released) lifecycle.release(this.model, hold)
  }

  /** What the run's debit orders and lifecycle actions came to (BANK_PROPERTY_DEBUG). */
  printSummary(): void {
    const d = this.model.debit
    console.error(JSON.stringify({
      mandates: d.mandates.map((m) => `${m.debtor}/${m.frequency}/${m.status}`),
      orders: d.orders.map((o) => `${o.mandate.debtor}/${o.mandate.status}:${o.history.join('>')}`),
      credits: d.creditRows, disputes: d.disputeRows, recoveries: d.recoveryRows,
      debt: String(d.debt), actions: this.log.length, lifecycle: this.notes,
    }))
  }

  /** The entity's second account, made once: a closure pays the balance into it. */
  private async payee(): Promise<string> {
    const lifecycle = this.model.lifecycle
    if (!lifecycle.payee) {
      const made = await this.partner.client.accounts.create(
        { entity_id: this.partner.rootEntityId })
      lifecycle.payee = { accountId: made.account_id, balance: 0n }
    }
    return lifecycle.payee.accountId
  }

  /**
   * The partner closes the account: refused naming exactly the model's obstacles, or closed
   * with its whole balance paid to the second account in the same request.
   */
  private async close(payTo: boolean): Promise<void> {
    const model = this.model
    const lifecycle = model.lifecycle
    const payee = await this.payee()
    const reply = await outcome(this.partner.client.accounts.close({ account_id: this.accountId,
      reason: 'property close', ...(payTo ? { pay_to_account_id: payee } : {}) }))
    if (lifecycle.status === 'closed') {
      assert.ok(reply.ok, `closing a closed account answers its status: ${reply.ok ? ''
        : reply.error.message}`)
      assert.deepEqual([reply.value.status, reply.value.payout], ['closed', null])
      return
    }
    const obstacles = lifecycle.obstacles(model.hasPending(), model.balance, payTo)
    if (obstacles.length > 0) {
      assert.ok(!reply.ok, `a close must be refused for ${obstacles.join(', ')}`)
      assert.deepEqual([reply.error.code, reply.error.type], [422, 'account_not_closable'],
        reply.error.message)
      assert.deepEqual(reply.error.details.map((d) => (d as { obstacle?: string }).obstacle),
        obstacles, reply.error.message)
      this.notes.push(`close refused: ${obstacles.join(' ')}`)
      return
    }
    assert.ok(reply.ok, `the close should be taken: ${reply.ok ? '' : reply.error.message}`)
    assert.equal(reply.value.status, 'closed')
    const payout = reply.value.payout
    assert.deepEqual(payout && [payout.amount, payout.payment_type, payout.status],
      model.balance > 0n ? [String(model.balance), 'INTERNAL', 'Successful'] : null)
    this.notes.push(`closed from ${lifecycle.status}, paid ${model.balance}` +
      (model.returnsDue.length > 0 ? `, ${model.returnsDue.length} return(s) due` : ''))
    model.close(payout?.tx_id, tb.clock.now().getTime())
    await this.checkPayee('after the close')
  }

  /** The second account has what closures paid into it, all of it available. */
  private async checkPayee(when: string): Promise<void> {
    const payee = this.model.lifecycle.payee
    if (!payee) return
    const d = await this.partner.client.accounts.getDetails({ account_id: payee.accountId })
    assert.deepEqual([BigInt(d.balance), BigInt(d.available_balance)],
      [payee.balance, payee.balance], `the second account (${when})`)
  }

  /**
   * Before a close: a clearing run (pending EFTs settled, returns due collected), a deposit
   * when little is available, and an RTC payout to the "returned" recipient, whose return
   * the next clearing run brings (refused while the account is frozen).
   */
  private async returnDue(): Promise<void> {
    await this.apply({ kind: 'clearing' })
    if (this.model.available < 1_000n + fees.RTC) {
      await this.apply({ kind: 'deposit', amount: 10_000 })
    }
    const amount = this.model.available - fees.RTC
    if (amount < 100n) return
    await this.apply({ kind: 'transfer', rtc: true, recipient: 'returned',
      amount: Number(amount > 5_000n ? 5_000n : amount) })
  }

  /**
   * The run's last close attempt (holds released first, or not; with `returned`, after a
   * payout whose return is due); once closed, a payout, a batch, a hold, a freeze and a
   * deposit, all refused.
   */
  async closeAtEnd(closing: { payTo: boolean; releaseHolds: boolean;
      returned: boolean }): Promise<void> {
    if (closing.returned && this.model.lifecycle.status !== 'closed') await this.returnDue()
    if (closing.releaseHolds) {
      while (this.model.lifecycle.activeHolds().length > 0) {
        await this.apply({ kind: 'hold_release', pick: 0, again: false })
      }
    }
    await this.apply({ kind: 'close', payTo: closing.payTo, settle: false })
    await this.checkBalances('after the last close attempt')
    if (this.model.lifecycle.status !== 'closed') return
    const probes: Action[] = [
      { kind: 'transfer', rtc: true, amount: 100, recipient: 'normal' },
      { kind: 'bulk_initiate', payments: [{ rtc: false, amount: 100, recipient: 'normal' }],
        overFunds: false },
      { kind: 'hold_place', fund: 0, amount: 100, size: 'fixed', expires: false, probe: 'none' },
      { kind: 'freeze', during: [], unfreeze: false },
      { kind: 'deposit', amount: 100 },
    ]
    for (const probe of probes) await this.apply(probe)
    await this.checkBalances('after the probes of the closed account')
  }

  private async applyBulk(a: Extract<Action, { kind: `bulk_${string}` }>): Promise<void> {
    switch (a.kind) {
      case 'bulk_initiate':
        return this.bulkInitiate(a.payments, a.overFunds)
      case 'bulk_verify':
        return this.bulkVerify(this.pickBatch(a.pick))
      case 'bulk_wrong_otp':
        return this.bulkWrongOtp(a.pick, a.times)
      case 'bulk_cancel':
        return this.bulkCancel(this.pickBatch(a.pick))
      case 'bulk_expire':
        return this.bulkExpire(a)
    }
  }

  private async applyDebit(a: Extract<Action, { kind: 'mandate_create' | 'order_create'
    | 'order_cancel' | 'mandate_cancel' | 'debit_advance' | 'debit_dispute' }>): Promise<void> {
    switch (a.kind) {
      case 'mandate_create':
        return this.mandateCreate(a)
      case 'order_create':
        return this.orderCreate(a)
      case 'order_cancel':
        return this.orderCancel(a)
      case 'mandate_cancel':
        return this.mandateCancel(a.pick, a.midRetry)
      case 'debit_advance':
        return this.debitAdvance(a.minutes)
      case 'debit_dispute': {
        if (!a.spendFirst) return this.debitDispute(a.pick)
        // Everything paid out, the dispute raised, and the clock advanced past the next run, which
        // books it.
        await this.apply({ kind: 'spend_all', rtc: true })
        await this.debitDispute(a.pick)
        const nowMs = tb.clock.now().getTime()
        const nextRun = fromSast(tb.bank.services.calendar.addBusinessDays(
          toSast(new Date(nowMs)).date, 1)).getTime()
        return this.debitAdvance(Math.ceil((nextRun - nowMs) / 60_000))
      }
    }
  }

  /**
   * Due jobs run now: the bulk jobs due, today's debit-order collection run (if not made yet),
   * mandate authentications.
   */
  private async jobs(): Promise<void> {
    const nowMs = tb.clock.now().getTime()
    await runJobs()
    this.dueWork(nowMs, nowMs, [toSast(new Date(nowMs)).date])
  }

  /**
   * What a run of due jobs from `fromMs` to `toMs` did, in the order the jobs ran (due
   * time): bulk jobs, and the collection runs of `dates` not made yet (each due 00:00 SAST,
   * made at that time or at `fromMs` when it was due before). Due times never tie: the
   * clock keeps an offset within the minute that is never 0 (alignClock), and runs are due
   * on the minute. Mandates' authentication jobs move no money, so they are applied last.
   */
  private dueWork(fromMs: number, toMs: number, dates: string[]): void {
    const model = this.model
    const { debit, lifecycle } = model
    // A collection run sees the account as lifecycle-model.ts says (its status decides).
    const run = (date: string, atMs: number) => lifecycle.collectingInto(debit,
      () => debit.run(date, atMs, debitView(model, lifecycle)))
    const work = [
      ...model.bulkJobsDue(toMs),
      ...debit.runsDue(dates).map((r) => (
        { atMs: r.atMs, apply: () => run(r.date, Math.max(fromMs, r.atMs)) })),
    ].sort((a, b) => a.atMs - b.atMs)
    for (const w of work) w.apply()
    model.debit.authenticate(toMs)
  }

  /**
   * Sets the clock's offset within the minute to 17.777 s (moves of whole minutes keep it; see
   * dueWork).
   */
  alignClock(): void {
    const offset = tb.clock.now().getTime() % 60_000
    tb.clock.advance((17_777 - offset + 60_000) % 60_000)
  }

  private async debitAdvance(minutes: number): Promise<void> {
    const fromMs = tb.clock.now().getTime()
    const reply = await tb.operator.sandbox.advance({ seconds: minutes * 60 })
    const toMs = tb.clock.now().getTime()
    assert.equal(toMs, fromMs + minutes * 60_000)
    assert.equal(Date.parse(reply.now), toMs)
    this.dueWork(fromMs, toMs, sastDatesBetween(fromMs, toMs))
    await this.checkDebit(`after advancing ${minutes} minutes`)
  }

  private async mandateCreate(a: Extract<DebitAction, { kind: 'mandate_create' }>): Promise<void> {
    const reference = `PM-${randomUUID().slice(0, 13)}`
    const mandate: MandateModel = {
      reference, debtor: a.debtor, frequency: a.frequency, maxAmount: BigInt(a.maxAmount),
      status: 'pending_authentication', createdAtMs: tb.clock.now().getTime(), used: false,
    }
    const reply = await this.partner.client.mandates.create({
      entity_id: this.partner.rootEntityId, mandate_reference: reference,
        account_holder_name: 'Property Debtor',
      account_number: debtorAccountOf(a.debtor), account_type: 'cheque', branch_code: '250655',
        max_amount: a.maxAmount, frequency: a.frequency,
    })
    assert.equal(reply.status, 'pending_authentication')
    this.model.debit.addMandate(mandate)
  }

  private pickMandate(pick: number): MandateModel | undefined {
    const all = this.model.debit.mandates
    const active = all.filter((m) => m.status === 'active')
    const from = pick % 4 !== 0 && active.length > 0 ? active : all
    return from[Math.floor(pick / 4) % Math.max(1, from.length)]
  }

  /** One of this run's orders: two picks in three take a scheduled one (when there is one). */
  private pickOrder(pick: number, prefer: (o: OrderModel) => boolean): OrderModel | undefined {
    const all = this.model.debit.orders
    const preferred = all.filter(prefer)
    const from = pick % 3 !== 0 && preferred.length > 0 ? preferred : all
    return from[Math.floor(pick / 3) % Math.max(1, from.length)]
  }

  private async orderCreate(a: Extract<DebitAction, { kind: 'order_create' }>): Promise<void> {
    const mandate = this.pickMandate(a.pick)
    // Once the account is closed a new order would collect into the second account.
    if (!mandate || this.model.lifecycle.status === 'closed') return
    const debit = this.model.debit
    const nowMs = tb.clock.now().getTime()
    const requested = addDays(toSast(new Date(nowMs)).date, a.daysAhead)
    const amount = a.overMax ? Number(mandate.maxAmount) + 1 + (a.amount % 1_000)
      : Math.min(a.amount, Number(mandate.maxAmount))
    const endDate = mandate.frequency === 'once_off' ? null : addDays(requested, a.endDays)
    const verdict = debit.createVerdict(mandate, { amount: BigInt(amount), requested, endDate },
      nowMs)
    const reply = await outcome(this.partner.client.debitOrders.create({
      entity_id: this.partner.rootEntityId, clientTxId: randomUUID(),
        mandate_reference: mandate.reference, amount,
      collection_date: requested, account_holder_name: 'Property Debtor',
        account_number: debtorAccountOf(mandate.debtor),
      account_type: 'cheque', branch_code: '250655', reference: 'property',
        frequency: mandate.frequency,
      ...(endDate !== null ? { end_date: endDate } : {}), tracking_days: a.tracking,
    }))
    if (verdict.code !== 201) {
      assert.ok(!reply.ok, `an order of ${amount} on ${requested} under ` +
        `a ${mandate.status} ${mandate.frequency} mandate (max ${mandate.maxAmount}) must be ` +
        `refused with ${verdict.code} ${verdict.field}`)
      assert.equal(reply.error.code, verdict.code, reply.error.message)
      const fields = reply.error.details.map((d) => (d as { field?: string }).field)
      assert.ok(fields.includes(verdict.field),
        `${reply.error.message} names ${verdict.field}: ${JSON.stringify(fields)}`)
      // Nothing was stored.
      const { total } = await this.partner.client.debitOrders.list(
        { entity_id: this.partner.rootEntityId, limit: 1 })
      assert.equal(total, debit.orders.length, 'a refused order is not stored')
      return
    }
    assert.ok(reply.ok, `the order should be ` +
      `accepted: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'scheduled')
    assert.equal(reply.value.collection_date, verdict.date)
    assert.equal(reply.value.amount, String(amount))
    debit.addOrder({
      id: reply.value.debit_order_id, mandate, amount: BigInt(amount), frequency: mandate.frequency,
        anchor: requested,
      collectionDate: verdict.date, endDate, tracking: a.tracking, status: 'scheduled',
        next: verdict.date, count: 0,
      lastNet: null, history: ['scheduled'], collections: [],
    })
  }

  /**
   * Cancel now, or with the clock moved (without running due work) to just before or just
   * after the order's cancel deadline, keeping the clock's offset within the minute.
   */
  private async orderCancel(a: Extract<DebitAction, { kind: 'order_cancel' }>): Promise<void> {
    const order = this.pickOrder(a.pick, (o) => o.status === 'scheduled')
    if (!order) return
    const debit = this.model.debit
    if (a.when !== 'now' && order.status === 'scheduled') {
      const deadline = debit.cancelDeadlineMs(order)
      const nowMs = tb.clock.now().getTime()
      const offset = nowMs % 60_000
      const target = a.when === 'before_deadline' ? deadline - 60_000 + offset : deadline + offset
      if (target > nowMs) tb.clock.advance(target - nowMs)
    }
    const reply = await outcome(this.partner.client.debitOrders.cancel(
      { entity_id: this.partner.rootEntityId, debit_order_id: order.id, reason: 'property' }))
    const wasStatus = order.status
    if (!debit.cancelOrder(order, tb.clock.now().getTime())) {
      assert.ok(!reply.ok, `cancel of a ${wasStatus} order ` +
        `(deadline ${new Date(debit.cancelDeadlineMs(order)).toISOString()}) must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      return
    }
    assert.ok(reply.ok,
      `cancel should succeed: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'cancelled')
  }

  private async mandateCancel(pick: number, midRetry: boolean): Promise<void> {
    const debit = this.model.debit
    if (midRetry) {
      // The sandbox clock first moves just past the run of an order whose debtor lacks the
      // funds at the first try, so that its collection is being retried when the mandate goes.
      const order = debit.orders.find((o) => o.status === 'scheduled' && o.next !== null
        && o.tracking > 0 && o.mandate.status === 'active' && o.mandate.debtor.startsWith(
        'insufficient'))
      if (order) {
        const minutes = Math.ceil((fromSast(order.next!).getTime() - tb.clock.now().getTime())
          / 60_000)
        if (minutes > 0) await this.debitAdvance(minutes)
      }
    }
    // Half the picks take a mandate with an order being retried (processing), when there is one.
    const retrying = debit.mandates.filter((m) => debit.orders.some((o) => o.mandate === m
      && o.status === 'processing'))
    const from = pick % 2 === 0 && retrying.length > 0 ? retrying : debit.mandates
    const mandate = from[Math.floor(pick / 2) % Math.max(1, from.length)]
    if (!mandate) return
    const was = mandate.status
    const reply = await outcome(this.partner.client.mandates.cancel(
      { entity_id: this.partner.rootEntityId, mandate_reference: mandate.reference }))
    if (!this.model.debit.cancelMandate(mandate)) {
      assert.ok(!reply.ok, `cancel of a ${was} mandate must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      return
    }
    assert.ok(reply.ok, `mandate cancel should ` +
      `succeed: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'cancelled')
  }

  private async debitDispute(pick: number): Promise<void> {
    const debit = this.model.debit
    const order = this.pickOrder(pick, (o) => debit.lastCollected(o) !== undefined)
    if (!order) return
    const reply = await outcome(tb.operator.debit.dispute({ debit_order_id: order.id }))
    if (!debit.raiseDispute(order, tb.clock.now().getTime())) {
      assert.ok(!reply.ok, 'an order with nothing collected cannot be disputed')
      assert.equal(reply.error.code, 400, reply.error.message)
      return
    }
    assert.ok(reply.ok,
      `dispute should be taken: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.collection_date, debit.lastCollected(order)!.date)
  }

  /**
   * Mandates, orders (status, next date, collections, count) and the partner's debt as the model
   * has them.
   */
  async checkDebit(when: string): Promise<void> {
    const debit = this.model.debit
    const context = `${when}; actions so far:\n${this.log.join('\n')}`
    const entity_id = this.partner.rootEntityId
    const db = tb.bank.database.db
    const debt = await db.selectFrom('partner_debts').select('owed').where('partner_id', '=',
      this.partner.partnerId).executeTakeFirst()
    assert.equal(BigInt(debt?.owed ?? 0), debit.debt, `partner debt: ${context}`)
    if (debit.mandates.length > 0) {
      const { mandates } = await this.partner.client.mandates.list({ entity_id, limit: 1000 })
      const statusOf = new Map(mandates.map((m) => [m.mandate_reference, m.status]))
      for (const m of debit.mandates) assert.equal(statusOf.get(m.reference), m.status,
        `mandate ${m.reference} of ${m.debtor} (${context})`)
    }
    const { debit_orders, total } = await this.partner.client.debitOrders.list(
      { entity_id, limit: 1000 })
    assert.equal(total, debit.orders.length, `orders stored: ${context}`)
    if (debit.orders.length === 0) return
    const listed = new Map(debit_orders.map((o) => [o.debit_order_id, o]))
    const ids = debit.orders.map((o) => o.id)
    const rows = await db.selectFrom('debit_orders').select(['id', 'collections_count']).where('id',
      'in', ids).execute()
    const countOf = new Map(rows.map((r) => [r.id, Number(r.collections_count)]))
    const collections = await db
      .selectFrom('debit_collections')
      .select(['debit_order_id', 'collection_date', 'status', 'attempts'])
      .where('debit_order_id', 'in', ids)
      .orderBy('collection_date')
      .execute()
    for (const o of debit.orders) {
      const where = `order ${o.id} ` +
        `(${o.mandate.debtor} ${o.frequency}, ${o.collectionDate}..${o.endDate}, ` +
        `tracking ${o.tracking}, amount ${o.amount}): ${context}`
      const item = listed.get(o.id)
      assert.ok(item, where)
      assert.equal(item.status, o.status, `status of ${where}`)
      assert.equal(item.next_collection_date, o.next, `next collection date of ${where}`)
      assert.equal(countOf.get(o.id), o.count, `collections count of ${where}`)
      const got = collections.filter((c) => c.debit_order_id === o.id).map(
        (c) => [c.collection_date, c.status, Number(c.attempts)])
      assert.deepEqual(got, o.collections.map((c) => [c.date, c.status, c.attempts]),
        `collections of ${where}`)
    }
  }

  /**
   * checkDebit, and every order's status_history and last net amount; the debit-order rows of the
   * ledger.
   */
  private async checkDebitLedger(transactions: Array<{ tx_id: string; tx_type: string;
      tx_payment_type: string; status: string; credit: string; debit: string; parent_tx_id: string;
      ref: string }>, when: string): Promise<void> {
    await this.checkDebit(when)
    const debit = this.model.debit
    for (const o of debit.orders) {
      const status = await this.partner.client.debitOrders.status(
        { entity_id: this.partner.rootEntityId, debit_order_id: o.id })
      const history = status.status_history.map((h) => h.status)
      assert.deepEqual(history, o.history,
        `history of order ${o.id} (${o.mandate.debtor} ${o.frequency}) ${when}`)
      assertAllowedTransitions(history, `order ${o.id}, ${when}`)
      assert.equal(history.filter((s) => s === 'successful').length, o.count)
      assert.equal(status.net_amount, String(o.lastNet ?? 0n),
        `net_amount of order ${o.id} (${when})`)
    }
    const rows = transactions.filter((t) => t.tx_payment_type === 'DEBIT_ORDER')
    const credits = rows.filter((t) => t.tx_type === 'debit_order')
    const recoveries = rows.filter((t) => t.tx_type === 'reversal' && t.ref === recovery_ref)
    const reversals = rows.filter((t) => t.tx_type === 'reversal' && t.ref !== recovery_ref)
    assert.equal(rows.length, credits.length + recoveries.length + reversals.length, when)
    const sum = (ts: typeof rows, side: 'credit' | 'debit') => ts.reduce(
      (s, t) => s + BigInt(t[side]), 0n)
    assert.equal(credits.length, debit.creditRows, `debit-order credits (${when})`)
    assert.equal(sum(credits, 'credit'), debit.credited, `debit-order credits (${when})`)
    assert.equal(reversals.length, debit.disputeRows, `dispute reversals (${when})`)
    assert.equal(sum(reversals, 'debit'), debit.disputeTaken, `what disputes took back (${when})`)
    assert.equal(recoveries.length, debit.recoveryRows, `debt recoveries (${when})`)
    assert.equal(sum(recoveries, 'debit'), debit.recovered, `debt recovered (${when})`)
    const disputedCredits = new Set(reversals.map((t) => t.parent_tx_id))
    for (const t of credits) assert.equal(t.status, disputedCredits.has(t.tx_id) ? 'Reversed'
      : 'Successful', `credit ${t.tx_id} (${when})`)
    assert.equal(disputedCredits.size, reversals.length, 'each credit is reversed at most once')
    // Every reversed credit was taken back from the account, or is owed by the partner, or
    // was owed and has been recovered from a later credit (the bank's rows and debt alone).
    const owed = await tb.bank.database.db.selectFrom('partner_debts').select('owed').where(
      'partner_id', '=', this.partner.partnerId).executeTakeFirst()
    assert.equal(sum(credits.filter((t) => t.status === 'Reversed'), 'credit'),
      sum(reversals, 'debit') + BigInt(owed?.owed ?? 0) + sum(recoveries, 'debit'), when)
    assert.equal(debit.disputedNet, debit.disputeTaken + debit.debt + debit.recovered, when)
    // Every successful collection credited exactly once: the collections' credits are the credit
    // rows.
    const collected = await tb.bank.database.db
      .selectFrom('debit_collections')
      .select('credit_tx_id')
      .where('debit_order_id', 'in', debit.orders.length > 0 ? debit.orders.map((o) => o.id)
        : ['00000000-0000-0000-0000-000000000000'])
      .where('status', 'in', ['successful', 'disputed'])
      .execute()
    assert.deepEqual(collected.map((c) => c.credit_tx_id).sort(),
      credits.map((t) => t.tx_id).sort(), `each collection has its one credit (${when})`)
  }

  /**
   * Jobs due first (so every verified batch has its payment rows), then the clearing run,
   * then its cycle event handed over and the bulk EFT cycle it enqueued run.
   */
  private async clearing(): Promise<void> {
    await this.jobs()
    await tb.operator.clearing.run()
    this.model.clearingRun(tb.clock.now().getTime())
    await dispatchEvents()
    await runJobs()
    this.model.eftCycle()
  }

  /**
   * One of this run's batches: two picks in three take one still waiting for its PIN (when
   * there is one), where verify, cancel and expiry have most to decide; the rest take any.
   */
  private pickBatch(pick: number): BatchModel | undefined {
    const pending = this.model.batches.filter((b) => b.status === 'pending_otp')
    const from = pick % 3 !== 0 && pending.length > 0 ? pending : this.model.batches
    return from[Math.floor(pick / 3) % Math.max(1, from.length)]
  }

  private refOf(batch: BatchModel): { entity_id: string; bulk_payment_id: string } {
    return { entity_id: this.partner.rootEntityId, bulk_payment_id: batch.bulkPaymentId }
  }

  private async bulkInitiate(specs: BulkPaymentSpec[], overFunds: boolean): Promise<void> {
    const model = this.model
    const nowMs = tb.clock.now().getTime()
    // The over-funds payment is an EFT, whose per-payment limit is far above any balance here.
    const sized = overFunds
      ? specs.map((p, i) => (i === 0
        ? { ...p, rtc: false, amount: Math.max(100, Number(model.available) + 1) } : p))
      : specs
    const payments = sized.map((p, i) => ({
      payment_id: `p-${i}`,
      amount: p.amount,
      ref: `bulk ${p.recipient}`,
      own_ref: 'model test',
      ...bulkRecipientOf(p.recipient),
      name: 'Recipient',
      real_time: p.rtc,
    }))
    const batch = batchModelOf(sized, nowMs)
    const total = sized.reduce((sum, p) => sum + p.amount, 0)
    const request = {
      entity_id: this.partner.rootEntityId, account_id: this.accountId,
        bulk_payment_id: batch.bulkPaymentId,
      total_amount: total, payment_count: payments.length, description: 'property batch', payments,
    }
    const availableBefore = model.available
    const reply = await outcome(this.partner.client.bulkPayments.initiate(request))
    if (model.pendingFull(nowMs)) {
      assert.ok(!reply.ok, 'a 21st batch waiting for its PIN must be refused')
      assert.equal(reply.error.code, 429, reply.error.message)
      assert.equal(reply.error.type, 'too_many_attempts')
      return
    }
    if (!model.lifecycle.debitable) return this.expectNotActive(reply, 'a batch')
    if (!model.initiate(batch)) {
      assert.ok(!reply.ok,
        `a batch holding ${batch.hold} with ${availableBefore} available must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      assert.match(reply.error.message, /insufficient funds/)
      // Nothing was stored: the id is unknown.
      const status = await outcome(this.partner.client.bulkPayments.status(
        { entity_id: this.partner.rootEntityId, bulk_payment_id: batch.bulkPaymentId }))
      assert.ok(!status.ok && status.error.code === 404, 'a refused batch is not stored')
      return
    }
    assert.ok(reply.ok, `the batch should be ` +
      `accepted: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'pending_otp')
    assert.equal(reply.value.total_amount, String(total))
    assert.equal(reply.value.payment_count, payments.length)
    assert.equal(Date.parse(reply.value.expires_at), batch.expiresAtMs)
  }

  private async bulkExpire(a: { pick: number; offsetMs: number; then: 'jobs' | 'verify' | 'cancel'
      | 'nothing' }): Promise<void> {
    const batch = this.pickBatch(a.pick)
    const target = (batch?.expiresAtMs ?? tb.clock.now().getTime() + otp_ttl_ms) + a.offsetMs
    const ms = target - tb.clock.now().getTime()
    if (ms > 0) tb.clock.advance(ms)
    if (a.then === 'jobs') return this.jobs()
    if (a.then === 'verify') return this.bulkVerify(batch)
    if (a.then === 'cancel') return this.bulkCancel(batch)
  }

  private async otpOf(bulkPaymentId: string): Promise<string> {
    return (await tb.operator.sandbox.otp({ bulk_payment_id: bulkPaymentId,
      partner_id: this.partner.partnerId })).otp
  }

  /**
   * What verify answers before it looks at the PIN (README, Verify: in this order), or undefined.
   */
  private verifyRefusal(batch: BatchModel, nowMs: number): {
      code: number; type?: string } | undefined {
    // The entity's budget comes first, and a 429 changes nothing (an expired batch stays for its
    // job).
    if (this.model.pinBudgetSpent(nowMs)) return { code: 429, type: 'too_many_attempts' }
    if (batch.attempts >= otp_attempts_max) return { code: 429, type: 'too_many_attempts' }
    if (batch.status === 'failed' && batch.failureReason === 'otp_expired') return { code: 400,
      type: 'otp_expired' }
    if (batch.status !== 'pending_otp') return { code: 400 }
    if (nowMs >= batch.expiresAtMs) {
      this.model.endUnpaid(batch, 'failed', 'otp_expired')
      return { code: 400, type: 'otp_expired' }
    }
    return undefined
  }

  private async bulkVerify(batch: BatchModel | undefined): Promise<void> {
    if (!batch) return
    const ref = this.refOf(batch)
    const otp = await this.otpOf(ref.bulk_payment_id)
    const reply = await outcome(this.partner.client.bulkPayments.verify({ ...ref, otp }))
    const refusal = this.verifyRefusal(batch, tb.clock.now().getTime())
    if (refusal) {
      assert.ok(!reply.ok, `verify of a ${batch.status} batch must be refused`)
      assert.equal(reply.error.code, refusal.code, reply.error.message)
      if (refusal.type) assert.equal(reply.error.type, refusal.type)
      return
    }
    assert.ok(reply.ok,
      `verify should succeed: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'processing')
    assert.deepEqual(reply.value.payments.map((p) => [p.payment_id, p.status, p.tx_id]),
      batch.payments.map((p) => [p.paymentId, 'processing', null]))
    this.model.fund(batch)
    batch.verifiedAtMs = tb.clock.now().getTime()
  }

  private async bulkWrongOtp(pick: number, times: number): Promise<void> {
    const batch = this.pickBatch(pick)
    if (!batch) return
    const ref = this.refOf(batch)
    const otp = wrongOtp(await this.otpOf(ref.bulk_payment_id))
    for (let i = 0; i < times; i++) {
      const reply: Outcome<unknown> =
        await outcome(this.partner.client.bulkPayments.verify({ ...ref, otp }))
      assert.ok(!reply.ok, 'a wrong PIN is refused')
      const refusal = this.verifyRefusal(batch, tb.clock.now().getTime())
      if (refusal) {
        assert.equal(reply.error.code, refusal.code, reply.error.message)
        if (refusal.type) assert.equal(reply.error.type, refusal.type)
        continue
      }
      batch.attempts++
      this.model.wrongPinsAtMs.push(tb.clock.now().getTime())
      const left: number = otp_attempts_max - batch.attempts
      assert.equal(reply.error.code, 400, reply.error.message)
      assert.equal(reply.error.type, 'otp_invalid')
      assert.equal((reply.error.details[0] as { attempts_left?: number }).attempts_left, left)
      if (left === 0) this.model.endUnpaid(batch, 'failed', 'otp_locked')
    }
  }

  private async bulkCancel(batch: BatchModel | undefined): Promise<void> {
    if (!batch) return
    const ref = this.refOf(batch)
    const reply =
      await outcome(this.partner.client.bulkPayments.cancel({ ...ref, reason: 'property' }))
    if (batch.status !== 'pending_otp' || tb.clock.now().getTime() >= batch.expiresAtMs) {
      // A batch whose PIN expired before the job ran ends failed here, as the job would end it.
      if (batch.status === 'pending_otp') this.model.endUnpaid(batch, 'failed', 'otp_expired')
      assert.ok(!reply.ok, `cancel of a ${batch.status} batch must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      return
    }
    assert.ok(reply.ok,
      `cancel should succeed: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'cancelled')
    this.model.endUnpaid(batch, 'cancelled')
  }

  private body(clientTxId: string,
      a: { rtc: boolean; amount: number; recipient: Recipient }): TransferBody {
    return {
      account_id: this.accountId,
      clientTxId,
      amount: a.amount,
      ref: `property ${a.recipient}`,
      own_ref: 'model test',
      pay_and_clear: a.rtc,
      ...accountNumberOf(a.recipient),
      name: 'Recipient',
    }
  }

  private async transfer(body: TransferBody): Promise<void> {
    const model = this.model
    model.sent.push(body)
    const fee = body.pay_and_clear ? fees.RTC : fees.EFT
    const nowMs = tb.clock.now().getTime()
    const claim = model.keys.get(body.clientTxId)
    const reply = await outcome(this.partner.client.accounts.transfer(body))
    // The status is looked at first: a refused request claims no key and holds nothing.
    if (!model.lifecycle.debitable) return this.expectNotActive(reply, 'a transfer')
    if (claim && nowMs - claim.atMs <= tb.config.transferKeyWindowMs) {
      assert.ok(!reply.ok, `a repeated clientTxId within the window must be refused`)
      assert.equal(reply.error.code, 409, reply.error.message)
      assert.equal((reply.error.details[0] as { tx_id?: string }).tx_id, claim.txId)
      return
    }
    if (model.available < BigInt(body.amount) + fee) {
      assert.ok(!reply.ok,
        `a transfer of ${body.amount} + ${fee} with ${model.available} available must be refused`)
      assert.equal(reply.error.code, 400, reply.error.message)
      assert.match(reply.error.message, /insufficient funds/)
      return
    }
    assert.ok(reply.ok, `the transfer should be ` +
      `accepted: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    const recipient = this.recipientOf(body)
    const status = model.accept(reply.value.tx_id, body, fee, recipient, nowMs)
    assert.equal(reply.value.status, status)
    assert.equal(reply.value.amount, String(body.amount))
  }

  /**
   * A debit (or a deposit) refused because of the account's status: 422 naming the account and
   * its status.
   */
  private expectNotActive(reply: Outcome<unknown>, what: string, verb = 'debited'): void {
    const status = this.model.lifecycle.status
    assert.ok(!reply.ok, `${what}: a ${status} account cannot be ${verb}`)
    assert.deepEqual([reply.error.code, reply.error.type], [422, 'account_not_active'],
      reply.error.message)
    assert.match(reply.error.message, new RegExp(`is ${status} and cannot be ${verb}`))
    const [detail] = reply.error.details as Array<{ account_id?: string; status?: string }>
    assert.deepEqual([detail?.account_id, detail?.status], [this.accountId, status])
  }

  private async burst(
      a: { count: number; rtc: boolean; amount: number; returned: boolean }): Promise<void> {
    const model = this.model
    const recipient: Recipient = a.returned ? 'returned' : 'normal'
    const bodies = Array.from({ length: a.count }, () => this.body(randomUUID(),
      { ...a, recipient }))
    model.sent.push(...bodies)
    const total = BigInt(a.amount) + (a.rtc ? fees.RTC : fees.EFT)
    const affordable = model.lifecycle.debitable
      ? Math.min(a.count, Number(model.available / total)) : 0
    const nowMs = tb.clock.now().getTime()
    const replies =
      await Promise.all(bodies.map((body) => outcome(this.partner.client.accounts.transfer(body))))
    const from = model.rowCount() + 1
    const taken: string[] = []
    replies.forEach((reply, i) => {
      if (!model.lifecycle.debitable) return this.expectNotActive(reply, 'a transfer of a burst')
      if (!reply.ok) {
        assert.equal(reply.error.code, 400, reply.error.message)
        assert.match(reply.error.message, /insufficient funds/)
        return
      }
      taken.push(reply.value.tx_id)
      const status = model.accept(reply.value.tx_id, bodies[i]!, total - BigInt(a.amount),
        recipient, nowMs)
      assert.equal(reply.value.status, status)
    })
    const accepted = taken.length
    assert.equal(accepted, affordable, `${a.count} transfers of ${total} at once ` +
      `with ${model.available + BigInt(accepted) * total} available`)
    // The burst's requests were taken, and its RTCs settled, by concurrent batches in an order
    // the model does not know: its rows are the account's next ones, each fee row somewhere
    // after its payment's row, with the balance of that moment.
    const within = { from, to: model.rowCount() }
    for (const txId of taken) {
      const fee = model.feeRows.get(txId)
      if (fee) Object.assign(fee, { seq: undefined, runningBalance: undefined, within })
    }
  }

  private recipientOf(body: TransferBody): Recipient {
    if (body.branch_code === magicRecipients.invalid_branch_code) return 'invalid_branch'
    if (body.account_number === magicRecipients.failed_account_number) return 'failed'
    if (body.account_number === magicRecipients.invalid_account_number) return 'invalid'
    if (body.account_number === magicRecipients.returned_account_number) return 'returned'
    return 'normal'
  }

  async checkBalances(when: string): Promise<void> {
    const d = await this.partner.client.accounts.getDetails({ account_id: this.accountId })
    const balance = BigInt(d.balance)
    const available = BigInt(d.available_balance)
    const context = `${when} (${this.model.lifecycle.status}); actions so far:\n` +
      this.log.join('\n')
    assert.ok(balance >= 0n && available >= 0n && available <= balance,
      `balance ${balance}, available ${available}: ${context}`)
    assert.equal(balance, this.model.balance, `balance: ${context}`)
    assert.equal(available, this.model.available, `available: ${context}`)
  }

  /**
   * The whole picture: ledger verification, every row's status and chain link, running balances.
   */
  async checkLedger(when: string): Promise<void> {
    await this.checkBalances(when)
    await this.checkLifecycle(when)
    const report = await tb.operator.ledger.verify()
    assert.deepEqual(report.problems, [], when)
    assert.equal(report.ok, true)
    assert.equal(report.postings_total, '0')

    const { transactions, next_cursor } = await this.partner.client.accounts.listTransactions(
      { account_id: this.accountId, limit: 1000 })
    assert.equal(next_cursor, undefined)
    const model = this.model
    const bulkRows = await this.checkBatches(when)
    assert.equal(transactions.length, model.rowCount(), when)
    // Newest first, every row of the account: the row at index i is the (length − i)th written.
    const seqOf = new Map(transactions.map((t, i) => [t.tx_id, transactions.length - i]))
    const byId = new Map(transactions.map((t) => [t.tx_id, t]))
    const feesSeen = new Set<string>()
    for (const t of transactions) {
      this.checkBulkRow(t, bulkRows, when)
      assert.equal(t.verified, true, `${t.tx_id} fails its chain check (${when})`)
      if (t.tx_type === 'transfer') this.checkTransferRow(t, when)
      if (t.tx_type === 'fee') this.checkFeeRow(t, seqOf.get(t.tx_id)!, byId.get(t.parent_tx_id),
        seqOf.get(t.parent_tx_id), feesSeen, when)
      if (t.tx_type === 'reversal' && t.tx_payment_type !== 'DEBIT_ORDER') {
        const bulkPayment = bulkRows.get(t.parent_tx_id)
        assert.equal(bulkPayment ? bulkPayment.row : model.status.get(t.parent_tx_id), 'Reversed')
        assert.equal(BigInt(t.amount), bulkPayment ? bulkPayment.amount
          : model.payouts.get(t.parent_tx_id)?.amount)
      }
    }
    // Every payout settled Successful (and maybe reversed since) has its one fee row; no other has
    // any.
    assert.deepEqual([...feesSeen].sort(), [...model.feeRows.keys()].sort(), `fee rows (${when})`)
    await this.checkRunningBalances(transactions, when)
    await this.checkDebitLedger(transactions, when)
    assert.equal(report.internal_balances[`partner_debt:${this.partner.partnerId}`] ?? '0',
      String(-model.debit.debt), `partner_debt in the ledger (${when})`)
  }

  /** The account's status and the holds it lists, and the second account's balance. */
  private async checkLifecycle(when: string): Promise<void> {
    const lifecycle = this.model.lifecycle
    const status = await this.partner.client.accounts.status({ account_id: this.accountId })
    assert.equal(status.status, lifecycle.status, `status (${when})`)
    assert.deepEqual(status.holds.map((h) => [h.hold_id, h.amount]).sort(),
      lifecycle.activeHolds().map((h) => [h.holdId, String(h.amount)]).sort(), `holds (${when})`)
    await this.checkPayee(when)
    await this.checkUnclaimed(when)
  }

  /**
   * What came back for the account once closed is the bank's unclaimed funds: the postings to
   * `unclaimed_funds` that name its payments.
   */
  private async checkUnclaimed(when: string): Promise<void> {
    const { rows } = await sql<{ total: string }>`
      select coalesce(sum(p.amount), 0)::text as total from postings p
      join transactions t on t.id = p.tx_id
      where p.internal_account = 'unclaimed_funds' and t.account_id = ${this.accountId}
    `.execute(tb.bank.database.db)
    assert.equal(BigInt(rows[0]!.total), this.model.lifecycle.unclaimed,
      `unclaimed funds of the closed account (${when})`)
  }

  /** A bulk batch's funding row, a bulk payment's row or a refund, as the model has them. */
  private checkBulkRow(t: TransactionView, bulkRows: Map<string, BulkPaymentModel>,
      when: string): void {
    const model = this.model
    if (t.tx_type === 'bulk_payment' && t.parent_tx_id === '') {
      const batch = model.batches.find((b) => t.ref === `Bulk ${b.bulkPaymentId}`)
      assert.ok(batch, `funding row ${t.tx_id} belongs to a batch of the model (${when})`)
      assert.equal(t.status, funding_status[batch.status],
        `funding row of ${batch.bulkPaymentId} (${batch.status}, ${when})`)
      assert.equal(BigInt(t.debit), batch.hold)
    }
    if (t.tx_type === 'bulk_payment' && t.parent_tx_id !== '') {
      const p = bulkRows.get(t.tx_id)
      assert.ok(p, `bulk payment row ${t.tx_id} is a processed payment of the model (${when})`)
      assert.equal(t.status, p.row, `bulk payment ${t.tx_id} (${when})`)
      assert.equal(BigInt(t.amount), p.amount)
      assert.equal(BigInt(t.debit), 0n)
    }
    if (t.tx_type === 'refund') {
      const p = bulkRows.get(t.parent_tx_id)
      assert.ok(p && (p.row === 'Failed' || p.row === 'Invalid'),
        `refund ${t.tx_id} of a payment not made (${when})`)
      assert.equal(BigInt(t.credit), p.amount + p.fee)
    }
  }

  /** A transfer's row: its status, and its amounts as the model paid them out. */
  private checkTransferRow(t: TransactionView, when: string): void {
    assert.equal(t.status, this.model.status.get(t.tx_id), `transfer ${t.tx_id} (${when})`)
    const p = this.model.payouts.get(t.tx_id)!
    // The payment's row carries its fee, whether or not a fee row has been written yet.
    assert.deepEqual(
      { tx_payment_type: t.tx_payment_type, amount: BigInt(t.amount), fee: BigInt(t.fee),
        debit: BigInt(t.debit), credit: BigInt(t.credit) },
      { tx_payment_type: p.paymentType, amount: p.amount, fee: p.fee, debit: p.amount,
        credit: 0n },
      `transfer ${t.tx_id} (${when})`,
    )
  }

  /**
   * A fee row as the model predicts it: written only for a payout settled Successful, when
   * it settled (its date), right after the payment's own posting (its running balance is the
   * payment's less the fee), at the place in the account's sequence the model counted, with
   * the payer's credential and no user.
   */
  private checkFeeRow(t: TransactionView, seq: number, parent: TransactionView | undefined,
      parentSeq: number | undefined, seen: Set<string>, when: string): void {
    const context = `fee row ${t.tx_id} of ${t.parent_tx_id} (${when})`
    const f = this.model.feeRows.get(t.parent_tx_id)
    assert.ok(f, `${context}: the payment is not one the model charged a fee for ` +
      `(${this.model.status.get(t.parent_tx_id)})`)
    assert.ok(!seen.has(t.parent_tx_id), `${context}: a second fee row of the same payment`)
    seen.add(t.parent_tx_id)
    assert.ok(['Successful', 'Reversed'].includes(this.model.status.get(f.parentTxId)!), context)
    assert.deepEqual(
      {
        status: t.status, tx_payment_type: t.tx_payment_type, ref: t.ref, amount: BigInt(t.amount),
          fee: BigInt(t.fee),
        credit: BigInt(t.credit), debit: BigInt(t.debit), added_by: t.added_by, user_id: t.user_id,
          recipient_name: t.recipient_name,
        date: Date.parse(t.date),
      },
      {
        status: 'Successful', tx_payment_type: f.paymentType, ref: `${f.paymentType} fee`,
          amount: f.fee, fee: 0n,
        credit: 0n, debit: f.fee, added_by: this.partner.credentialId, user_id: '',
          recipient_name: '',
        date: f.atMs,
      },
      context,
    )
    assert.ok(parent && parentSeq !== undefined, `${context}: its payment's row is listed`)
    assert.equal(parent.added_by, t.added_by, context)
    assert.ok(seq > parentSeq,
      `${context}: written after its payment's row (${seq} after ${parentSeq})`)
    if (f.seq !== undefined) assert.equal(seq, f.seq,
      `${context}: its place in the account's sequence`)
    else {
      assert.ok(f.within, context)
      assert.ok(seq >= f.within.from && seq <= f.within.to,
        `${context}: ${seq} among its burst's rows ${f.within.from}..${f.within.to}`)
    }
    assert.equal(BigInt(t.running_balance), BigInt(parent.running_balance) - f.fee,
      `${context}: posted right after its payment`)
    if (f.runningBalance !== undefined) assert.equal(BigInt(t.running_balance), f.runningBalance,
      `${context}: the balance after the fee`)
  }

  /**
   * Every batch's status and payments as the model has them; returns the processed payments by
   * tx_id.
   */
  private async checkBatches(when: string): Promise<Map<string, BulkPaymentModel>> {
    const rows = new Map<string, BulkPaymentModel>()
    for (const batch of this.model.batches) {
      const status = await this.partner.client.bulkPayments.status(
        { entity_id: this.partner.rootEntityId, bulk_payment_id: batch.bulkPaymentId })
      const context = `batch ${batch.bulkPaymentId} (${when})`
      assert.equal(status.status, batch.status, context)
      assert.deepEqual(status.payments.map((p) => [p.payment_id, p.status]),
        batch.payments.map((p) => [p.paymentId, p.status]), context)
      status.payments.forEach((p, i) => {
        const expected = batch.payments[i]!
        assert.equal(p.tx_id !== null, expected.row !== undefined,
          `${context}: payment ${p.payment_id} has a row once processed`)
        if (p.tx_id) rows.set(p.tx_id, expected)
      })
      if (batch.status === 'completed') {
        const paid = batch.payments.filter((p) => p.status === 'success').reduce(
          (sum, p) => sum + p.amount, 0n)
        assert.equal(BigInt(status.successful_amount), paid, context)
        assert.equal(BigInt(status.successful_amount) + BigInt(status.failed_amount),
          BigInt(status.total_amount), context)
      }
    }
    return rows
  }

  /** Posted rows, in the order they were posted, each carry the balance after it. */
  private async checkRunningBalances(transactions: Array<{
      tx_id: string; credit: string; debit: string; running_balance: string }>, when: string) {
    const posted = await tb.bank.database.db
      .selectFrom('transactions')
      .select(['id', 'posted_order'])
      .where('account_id', '=', this.accountId)
      .where('posted_order', 'is not', null)
      .execute()
    const byId = new Map(transactions.map((t) => [t.tx_id, t]))
    const ordered = posted.map((p) => ({ id: p.id, order: BigInt(p.posted_order!) })).sort(
      (a, b) => (a.order < b.order ? -1 : 1))
    let running = 0n
    ordered.forEach((p, i) => {
      assert.equal(p.order, BigInt(i + 1), `posted_order has no gaps (${when})`)
      const t = byId.get(p.id)
      assert.ok(t, `posted row ${p.id} is listed`)
      running += BigInt(t.credit) - BigInt(t.debit)
      assert.equal(BigInt(t.running_balance), running, `running balance of ${p.id} (${when})`)
    })
    assert.equal(running, this.model.balance, `the last running balance is the balance (${when})`)
  }
}

test('ledger - random deposits, EFT/RTC transfers, repeated keys, bulk batches, debit orders, legal holds, freezes, closure, clearing and time agree with a model of the account', async (t) => {
  const seed = process.env.BANK_PROPERTY_SEED
  await checkProperty(t, 
    fc.asyncProperty(scenario,
        async ({ opening, mandates, orders, actions, finalDays, finale, closing }) => {
      const partner = await onboardPartner(tb, { approve: true })
      const { accounts } = await partner.client.accounts.getByEntity(
        { entity_id: partner.rootEntityId })
      const run = new Run(partner, accounts[0]!.account_id)
      run.alignClock()
      if (opening > 0) await run.apply({ kind: 'deposit', amount: opening })
      for (const m of mandates) await run.apply(m)
      await run.apply({ kind: 'jobs' })
      for (const o of orders) await run.apply(o)
      for (const [i, a] of actions.entries()) {
        await run.apply(a)
        await run.checkBalances(`after action ${i}`)
      }
      if (closing?.early) await run.closeAtEnd(closing)
      await run.checkLedger('at the end of the sequence')
      // Two more runs settle every pending EFT and collect every return, so the final
      // statuses (Successful, Failed, Invalid, Reversed) are checked too.
      await run.apply({ kind: 'clearing' })
      await run.apply({ kind: 'clearing' })
      assert.equal(run.model.pendingEft.length + run.model.returnsDue.length, 0)
      // Every verified batch has been paid out in full; others wait for a PIN or ended unpaid.
      assert.ok(run.model.batches.every((b) => b.status !== 'processing'))
      await run.checkLedger('after draining clearing runs')
      await run.apply({ kind: 'debit_advance', minutes: finalDays * 24 * 60 })
      if (finale) {
        await run.apply({ kind: 'debit_dispute', pick: finale.pick, spendFirst: true })
        await run.apply({ kind: 'deposit', amount: finale.deposit })
      }
      if (closing && !closing.early) await run.closeAtEnd(closing)
      await run.checkLedger(`after a last advance of ${finalDays} days`)
      if (process.env.BANK_PROPERTY_DEBUG) run.printSummary()
    }),
    { numRuns: Number(process.env.BANK_PROPERTY_RUNS ?? 8), includeErrorInReport: true,
      ...(seed ? { seed: Number(seed) } : {}),
      ...(process.env.BANK_PROPERTY_PATH ? { path: process.env.BANK_PROPERTY_PATH } : {}) },
  )
})

/** The model of a batch just initiated with these payments: waiting for its PIN, held whole. */
function batchModelOf(sized: BulkPaymentSpec[], nowMs: number): BatchModel {
  const batch: BatchModel = {
    bulkPaymentId: `batch-${randomUUID()}`,
    payments: sized.map((p, i) => ({
      paymentId: `p-${i}`, rtc: p.rtc, amount: BigInt(p.amount), fee: p.rtc ? fees.RTC : fees.EFT,
      recipient: p.recipient, status: 'pending', row: undefined,
    })),
    hold: 0n,
    expiresAtMs: nowMs + otp_ttl_ms,
    status: 'pending_otp',
    failureReason: undefined,
    attempts: 0,
  }
  batch.hold = batch.payments.reduce((sum, p) => sum + p.amount + p.fee, 0n)
  return batch
}

/** The status of a batch's funding row, by the batch's status. */
const funding_status: Record<BatchStatus, TxStatus> = { pending_otp: 'Pending',
  processing: 'Successful', completed: 'Successful', cancelled: 'Failed', failed: 'Failed' }
