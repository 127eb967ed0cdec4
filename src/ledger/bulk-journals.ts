import type { Journal, JournalEntry } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import type { PayoutAnswer } from './payment-journals.ts'
import { newRowId } from './row-id.ts'
import { goesUnclaimed, unclaimed_funds, unclaimedReason } from './unclaimed-funds.ts'

// The named journals of a bulk batch (bulk/ says which and when), and the kinds that record
// them through the ledger writer's composed door (ledger-writer.ts `write`; initiate's hold
// is bulk/'s own kind, since its refusals name the request's fields):
//  - initiate: one `bulk_payment` funding row, Pending, holding total plus fees;
//  - verify: the hold is captured by one journal: the account pays total plus fees, the
//    EFT and RTC shares go to their rails' settlement accounts and the fees to fee income;
//    the funding row becomes Successful (this is the batch's one debit);
//  - processing: each payment is a `bulk_payment` row of its own (parent = the funding
//    row) with the payment's amount and fee but no debit of its own, since its money left
//    in the funding row. It ends Successful, or Failed/Invalid with a `refund` row (parent
//    = the payment) that credits the amount and its fee back: a payment not made costs no
//    fee, as for single transfers;
//  - cancel, OTP expiry or lock-out: the hold is released and the funding row ends Failed.

export interface FundingPlan {
  funding_tx_id: string
  account_id: string
  bulk_payment_id: string
  description: string
  payment_count: number
  total: bigint
  fees: bigint
  eft_total: bigint
  rtc_total: bigint
  added_by: string
}

export interface PaymentRow {
  tx_id: string
  account_id: string
  funding_tx_id: string
  real_time: boolean
  amount: bigint
  fee: bigint
  ref: string
  own_ref: string
  name: string
  account_number: string
  branch_code: string
  added_by: string
}

/** A payment as its rail's answer settles it (settlePayment). */
export type PaymentToSettle = Omit<PaymentRow, 'own_ref' | 'account_number' | 'branch_code'>

/** The funding of a batch as cancel, expiry or lock-out release it. */
export type BatchFunding = Pick<FundingPlan, 'funding_tx_id' | 'account_id' | 'total' | 'fees'>

const payment_type = (realTime: boolean) => (realTime ? ('RTC' as const) : ('EFT' as const))

/** Holds total plus fees and writes the Pending funding row; false when available is short. */
export function holdFunding(batch: Journal, plan: FundingPlan): boolean {
  const hold = plan.total + plan.fees
  if (!batch.tryHold(plan.account_id, hold)) return false
  batch.append({
    id: plan.funding_tx_id,
    account_id: plan.account_id,
    tx_type: 'bulk_payment',
    // A mixed batch is shown as EFT, the slower of its rails; an all-RTC batch as RTC.
    tx_payment_type: plan.eft_total > 0n ? 'EFT' : 'RTC',
    status: 'Pending',
    amount: plan.total,
    fee: plan.fees,
    credit: 0n,
    debit: hold,
    hold_amount: hold,
    ref: `Bulk ${plan.bulk_payment_id}`.slice(0, 100),
    own_ref: plan.description,
    recipient_name: `${plan.payment_count} payment(s)`,
    added_by: plan.added_by,
    posted: false,
  })
  return true
}

/** Verify: the hold becomes the batch's one debit (a batch is funded whole or not at all). */
export function captureFunding(batch: Journal, plan: FundingPlan): void {
  const hold = plan.total + plan.fees
  batch.releaseHold(plan.account_id, hold)
  const entries: JournalEntry[] =
    [{ account: plan.account_id, amount: -hold, tx_id: plan.funding_tx_id }]
  if (plan.eft_total > 0n) entries.push({ internal: 'settlement:EFT', amount: plan.eft_total,
    tx_id: plan.funding_tx_id })
  if (plan.rtc_total > 0n) entries.push({ internal: 'settlement:RTC', amount: plan.rtc_total,
    tx_id: plan.funding_tx_id })
  if (plan.fees > 0n) entries.push({ internal: 'fee_income', amount: plan.fees,
    tx_id: plan.funding_tx_id })
  batch.post(entries)
  batch.setStatus(plan.funding_tx_id, plan.account_id, { status: 'Successful', posted: true })
}

/** Cancel, expiry or lock-out before verify: nothing is paid. */
export function releaseFunding(batch: Journal, plan: BatchFunding, reason: string): void {
  batch.releaseHold(plan.account_id, plan.total + plan.fees)
  batch.setStatus(plan.funding_tx_id, plan.account_id, { status: 'Failed', reason })
}

/** A payment's own row, Pending until its rail answers. */
export function appendPayment(batch: Journal, payment: PaymentRow): void {
  batch.append({
    id: payment.tx_id,
    account_id: payment.account_id,
    parent_tx_id: payment.funding_tx_id,
    tx_type: 'bulk_payment',
    tx_payment_type: payment_type(payment.real_time),
    status: 'Pending',
    amount: payment.amount,
    fee: payment.fee,
    // Its money left the account in the funding row.
    credit: 0n,
    debit: 0n,
    ref: payment.ref,
    own_ref: payment.own_ref,
    recipient_name: payment.name,
    recipient_account: payment.account_number,
    recipient_branch: payment.branch_code,
    added_by: payment.added_by,
    posted: false,
  })
}

/** Books the rail's answer for one payment; returns whether it was paid. */
export function settlePayment(
  batch: Journal,
  payment: PaymentToSettle,
  outcome: PayoutAnswer,
): boolean {
  if (outcome.status === 'accepted') {
    batch.setStatus(payment.tx_id, payment.account_id, { status: 'Successful', posted: true })
    return true
  }
  const type = payment_type(payment.real_time)
  const status = outcome.status === 'failed' ? 'Failed' : 'Invalid'
  const back = payment.amount + payment.fee
  if (goesUnclaimed(batch, payment.account_id)) {
    // Not expected (a verified batch not completed keeps its account from closing), and
    // never credited to a closed account: kept as unclaimed funds (unclaimed-funds.ts).
    batch.post(refundEntries(payment, type, payment.tx_id,
      { internal: unclaimed_funds, amount: back, tx_id: payment.tx_id }))
    batch.setStatus(payment.tx_id, payment.account_id,
      { status, reason: unclaimedReason(outcome.reason) })
    return false
  }
  batch.setStatus(payment.tx_id, payment.account_id, { status, reason: outcome.reason })
  const refundId = newRowId()
  batch.post(refundEntries(payment, type, refundId,
    { account: payment.account_id, amount: back, tx_id: refundId }))
  batch.append({
    id: refundId,
    account_id: payment.account_id,
    parent_tx_id: payment.tx_id,
    tx_type: 'refund',
    tx_payment_type: type,
    status: 'Successful',
    amount: payment.amount,
    fee: payment.fee,
    credit: back,
    debit: 0n,
    ref: payment.ref,
    recipient_name: payment.name,
    added_by: 'system',
    posted: true,
    status_reason: outcome.reason,
  })
  return false
}

/** A refund's journal: amount and fee back from the rail and fee income, to `to`. */
function refundEntries(payment: PaymentToSettle, type: 'EFT' | 'RTC', txId: string,
    to: JournalEntry): JournalEntry[] {
  const entries: JournalEntry[] = [
    { internal: `settlement:${type}`, amount: -payment.amount, tx_id: txId }, to]
  if (payment.fee > 0n) entries.push({ internal: 'fee_income', amount: -payment.fee,
    tx_id: txId })
  return entries
}

/** Verify: the batch's hold becomes its one debit (captureFunding). */
export const fundingCapture: JournalKind<FundingPlan, void> = {
  name: 'bulk.capture',
  accountsOf: (plan) => [plan.account_id],
  record: (journal, plan) => captureFunding(journal, plan),
}

/** Cancel, expiry or lock-out before verify: the hold released (releaseFunding). */
export const fundingRelease: JournalKind<{ funding: BatchFunding; reason: string }, void> = {
  name: 'bulk.release',
  accountsOf: ({ funding }) => [funding.account_id],
  record: (journal, { funding, reason }) => releaseFunding(journal, funding, reason),
}

/**
 * Processing: each payment of a batch gets its own Pending row (appendPayment). Answers the
 * time of the write, which the rows that commit with it (payment advices) carry too.
 */
export const paymentRows: JournalKind<PaymentRow[], Date> = {
  name: 'bulk.payments',
  accountsOf: (payments) => payments.map((p) => p.account_id),
  record(journal, payments) {
    for (const payment of payments) appendPayment(journal, payment)
    return journal.now
  },
}

/**
 * Processing: the rails' answers to a batch's payments, each booked (settlePayment). Answers
 * whether each was paid, in the order given, and the time of the write, which the batch's
 * rows and events that commit with it carry too.
 */
export const paymentSettlements: JournalKind<
  Array<{ payment: PaymentToSettle; outcome: PayoutAnswer }>,
  { now: Date; paid: boolean[] }
> = {
  name: 'bulk.settle',
  accountsOf: (answered) => answered.map((a) => a.payment.account_id),
  record(journal, answered) {
    const paid = answered.map(({ payment, outcome }) => settlePayment(journal, payment, outcome))
    return { now: journal.now, paid }
  },
}
