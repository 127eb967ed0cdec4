import { assert } from '../errors.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import { newRowId } from './row-id.ts'
import { goesUnclaimed, unclaimed_funds, unclaimedReason } from './unclaimed-funds.ts'

// The named journals of single payments: what moves for each, recorded on a Journal.
// Capabilities say which journal and with what (transfers/transfer-service.ts, the clearing
// kinds below); the ledger writer (ledger-writer.ts) decides how they are batched and committed.
//  - a payout to another bank (EFT or RTC) is held, with a Pending row (reservePayout), and
//    settled later when its rail answers (settlePayout), which writes its fee's row;
//  - an internal payment to another account of this bank is posted at once (payInternal):
//    one journal debits the payer and credits the payee, each side gets its own Successful
//    row, and the fee is a journal of its own;
//  - a payout the recipient's bank sent back after success is credited back (reversePayout);
//    for a closed account it is kept as unclaimed funds instead (unclaimed-funds.ts).

interface PaymentJobBase {
  partnerId: string
  /** The credential that sent the request: the payer's rows name it. */
  addedBy: string
  /** The paying account (the caller's partner's, checked under lock). */
  accountId: string
  clientTxId: string
  amount: bigint
  fee: bigint
  txId: string
  ref: string
  own_ref: string
  /** The recipient as the payer named them. */
  name: string
  account_number: string
}

export interface PayoutJob extends PaymentJobBase {
  kind: 'payout'
  paymentType: 'EFT' | 'RTC'
  branch_code: string
}

export interface InternalJob extends PaymentJobBase {
  kind: 'internal'
  /** The payee account, found by its account number before the batch. */
  payeeAccountId: string
  payeeTxId: string
  /** The fee's row, posted with the payment (none without a fee). */
  feeTxId: string | null
}

export type PaymentJob = PayoutJob | InternalJob

/** An internal payment, posted in full when its batch commits. */
export interface InternalPaid {
  payment_type: 'INTERNAL'
  tx_id: string
}

/** The accounts a job's batch must lock: the payer, and the payee of an internal payment. */
export function accountsOf(job: PaymentJob): string[] {
  return job.kind === 'internal' ? [job.accountId, job.payeeAccountId] : [job.accountId]
}

/**
 * Holds amount + fee and writes the payment's Pending row; undefined when available is
 * short. The fee's own row is written when the payment settles and the fee is posted
 * (settlePayout), so a payment that fails or is invalid leaves no fee row at all.
 */
export function reservePayout(batch: Journal, job: PayoutJob): PendingPayout | undefined {
  const total = job.amount + job.fee
  if (!batch.tryHold(job.accountId, total)) return undefined
  batch.append({
    id: job.txId,
    account_id: job.accountId,
    tx_type: 'transfer',
    tx_payment_type: job.paymentType,
    status: 'Pending',
    amount: job.amount,
    fee: job.fee,
    credit: 0n,
    debit: job.amount,
    hold_amount: total,
    added_by: job.addedBy,
    posted: false,
    ref: job.ref,
    own_ref: job.own_ref,
    recipient_name: job.name,
    recipient_account: job.account_number,
    recipient_branch: job.branch_code,
  })
  return {
    tx_id: job.txId,
    fee_tx_id: null,
    account_id: job.accountId,
    added_by: job.addedBy,
    payment_type: job.paymentType,
    amount: job.amount,
    fee: job.fee,
    hold_amount: total,
  }
}

/**
 * Posts an internal payment in full; undefined (and nothing changes) when the payer's
 * available balance does not cover amount + fee. The payee's row shows what the payee
 * may know: the amount and the payer's `ref`, added by `system` — never the payer's
 * credential, own reference or account, which may be another partner's.
 */
export function payInternal(batch: Journal, job: InternalJob): InternalPaid | undefined {
  assert(job.accountId !== job.payeeAccountId, 'an internal payment names two accounts')
  if (batch.available(job.accountId) < job.amount + job.fee) return undefined
  batch.post([
    { account: job.accountId, amount: -job.amount, tx_id: job.txId },
    { account: job.payeeAccountId, amount: job.amount, tx_id: job.payeeTxId },
  ])
  batch.append({
    id: job.txId,
    account_id: job.accountId,
    tx_type: 'transfer',
    tx_payment_type: 'INTERNAL',
    status: 'Successful',
    amount: job.amount,
    fee: job.fee,
    credit: 0n,
    debit: job.amount,
    added_by: job.addedBy,
    posted: true,
    ref: job.ref,
    own_ref: job.own_ref,
    recipient_name: job.name,
    recipient_account: job.account_number,
  })
  batch.append({
    id: job.payeeTxId,
    account_id: job.payeeAccountId,
    tx_type: 'transfer',
    tx_payment_type: 'INTERNAL',
    status: 'Successful',
    amount: job.amount,
    credit: job.amount,
    debit: 0n,
    added_by: 'system',
    posted: true,
    ref: job.ref,
  })
  if (job.feeTxId) chargeInternalFee(batch, job, job.feeTxId)
  return { payment_type: 'INTERNAL', tx_id: job.txId }
}

/** An internal payment's fee: its own journal to fee income and its own `fee` row. */
function chargeInternalFee(batch: Journal, job: InternalJob, feeTxId: string): void {
  batch.post([
    { account: job.accountId, amount: -job.fee, tx_id: feeTxId },
    { internal: 'fee_income', amount: job.fee, tx_id: feeTxId },
  ])
  batch.append({
    id: feeTxId,
    account_id: job.accountId,
    parent_tx_id: job.txId,
    tx_type: 'fee',
    tx_payment_type: 'INTERNAL',
    status: 'Successful',
    amount: job.fee,
    credit: 0n,
    debit: job.fee,
    added_by: job.addedBy,
    posted: true,
    ref: 'INTERNAL fee',
  })
}

// Settling a pending payout once its rail has answered: the hold is released, and on
// acceptance the amount goes to the rail's settlement account and the fee to fee income,
// each as its own journal, the fee with its own `fee` row, written now that it is posted.
// Used for RTC at once and for EFT by the clearing cycle. A payment that fails or is
// invalid charges no fee and gets no fee row.
//
// Payouts taken before fee rows were written at settlement have a Pending fee row from
// the start (`fee_tx_id`): it is settled with its payment as it always was.

export interface PendingPayout {
  tx_id: string
  /**
   * The Pending fee row written with the payment, by earlier versions; null for payouts taken
   * since.
   */
  fee_tx_id: string | null
  account_id: string
  /** The credential that took the payment: its fee row names it too. */
  added_by: string
  payment_type: 'EFT' | 'RTC'
  amount: bigint
  fee: bigint
  hold_amount: bigint
}

/**
 * A rail's answer to a payout, as the ledger needs it (rails/rail.ts RailOutcome has this shape).
 */
export type PayoutAnswer = { status: 'accepted' } | { status: 'failed' | 'invalid'; reason: string }

export type SettledStatus = 'Successful' | 'Failed' | 'Invalid'

export function settlePayout(batch: Journal, payout: PendingPayout,
    outcome: PayoutAnswer): SettledStatus {
  batch.releaseHold(payout.account_id, payout.hold_amount)
  if (outcome.status !== 'accepted') {
    const status = outcome.status === 'failed' ? 'Failed' : 'Invalid'
    batch.setStatus(payout.tx_id, payout.account_id, { status, reason: outcome.reason })
    if (payout.fee_tx_id) batch.setStatus(payout.fee_tx_id, payout.account_id,
      { status, reason: 'payment not made; no fee charged' })
    // The EFT that paid out a closing account's balance: the money stays at the bank.
    if (goesUnclaimed(batch, payout.account_id)) moveUnclaimed(batch, payout, outcome.reason)
    return status
  }
  batch.post([
    { account: payout.account_id, amount: -payout.amount, tx_id: payout.tx_id },
    { internal: `settlement:${payout.payment_type}`, amount: payout.amount, tx_id: payout.tx_id },
  ])
  batch.setStatus(payout.tx_id, payout.account_id, { status: 'Successful', posted: true })
  if (payout.fee > 0n) {
    const feeTxId = payout.fee_tx_id ?? newRowId()
    batch.post([
      { account: payout.account_id, amount: -payout.fee, tx_id: feeTxId },
      { internal: 'fee_income', amount: payout.fee, tx_id: feeTxId },
    ])
    if (payout.fee_tx_id) batch.setStatus(feeTxId, payout.account_id,
      { status: 'Successful', posted: true })
    else {
      batch.append({
        id: feeTxId,
        account_id: payout.account_id,
        parent_tx_id: payout.tx_id,
        tx_type: 'fee',
        tx_payment_type: payout.payment_type,
        status: 'Successful',
        amount: payout.fee,
        credit: 0n,
        debit: payout.fee,
        added_by: payout.added_by,
        posted: true,
        ref: `${payout.payment_type} fee`,
      })
    }
  }
  return 'Successful'
}

/**
 * A closed account's payout that failed (the EFT of its closing balance): what it held is
 * back in the account, which keeps nothing, so it leaves again at once for unclaimed funds,
 * with a row of its own (parent = the payout) that brings the balance back to 0.
 */
function moveUnclaimed(batch: Journal, payout: PendingPayout, reason: string): void {
  const amount = batch.account(payout.account_id).balance
  if (amount === 0n) return
  const movedId = newRowId()
  batch.post([
    { account: payout.account_id, amount: -amount, tx_id: movedId },
    { internal: unclaimed_funds, amount, tx_id: payout.tx_id },
  ])
  batch.append({
    id: movedId,
    account_id: payout.account_id,
    parent_tx_id: payout.tx_id,
    tx_type: 'transfer',
    tx_payment_type: 'INTERNAL',
    status: 'Successful',
    amount,
    credit: 0n,
    debit: amount,
    added_by: 'system',
    posted: true,
    ref: 'Unclaimed funds',
    recipient_name: 'Unclaimed funds (the bank)',
    status_reason: unclaimedReason(`the closing payout failed (${reason})`),
  })
}

/** A settled payout as a return from its rail names it (ledger-store.ts payoutsByIds). */
export interface ReturnedPayout {
  tx_id: string
  account_id: string
  amount: bigint
  payment_type: 'EFT' | 'RTC'
  ref: string
  recipient_name: string
}

/**
 * A payout the recipient's bank sent back after success: credited back as a `reversal`; for
 * a closed account, kept as unclaimed funds instead (unclaimed-funds.ts): the payout is
 * `Reversed` and the closed account has no new row. Answers the reversal's id, or undefined.
 */
export function reversePayout(batch: Journal, original: ReturnedPayout,
    reason: string): string | undefined {
  if (goesUnclaimed(batch, original.account_id)) {
    batch.post([
      { internal: `settlement:${original.payment_type}`, amount: -original.amount,
        tx_id: original.tx_id },
      { internal: unclaimed_funds, amount: original.amount, tx_id: original.tx_id },
    ])
    batch.setStatus(original.tx_id, original.account_id,
      { status: 'Reversed', reason: unclaimedReason(reason) })
    return undefined
  }
  const reversalId = newRowId()
  batch.post([
    { internal: `settlement:${original.payment_type}`, amount: -original.amount,
      tx_id: reversalId },
    { account: original.account_id, amount: original.amount, tx_id: reversalId },
  ])
  batch.setStatus(original.tx_id, original.account_id, { status: 'Reversed', reason })
  batch.append({
    id: reversalId,
    account_id: original.account_id,
    parent_tx_id: original.tx_id,
    tx_type: 'reversal',
    tx_payment_type: original.payment_type,
    status: 'Successful',
    amount: original.amount,
    credit: original.amount,
    debit: 0n,
    ref: original.ref,
    recipient_name: original.recipient_name,
    added_by: 'system',
    posted: true,
    status_reason: reason,
  })
  return reversalId
}

/** A payout of a clearing chunk with its rail's answer (none: the rail did not answer it). */
export interface AnsweredPayout {
  payout: PendingPayout
  outcome: PayoutAnswer | undefined
}

/**
 * A clearing chunk (transfers/clearing-service.ts): each payout still Pending under its
 * account's lock and answered by its rail is settled (settlePayout) with the hold it has
 * now; one another run settled meanwhile is left as it is, so nothing is settled twice.
 * Answers the status of each payout it settled, in the chunk's order.
 */
export const payoutSettlements: JournalKind<
  AnsweredPayout[],
  Array<{ tx_id: string; status: SettledStatus }>
> = {
  name: 'clearing.settle',
  accountsOf: (chunk) => chunk.map((c) => c.payout.account_id),
  transactionsOf: (chunk) => chunk.map((c) => c.payout.tx_id),
  record(journal, chunk, { transactions }) {
    const settled: Array<{ tx_id: string; status: SettledStatus }> = []
    for (const { payout, outcome } of chunk) {
      const row = transactions.get(payout.tx_id)
      if (row?.status !== 'Pending' || !outcome) continue
      const status = settlePayout(journal, { ...payout, hold_amount: row.hold_amount }, outcome)
      settled.push({ tx_id: payout.tx_id, status })
    }
    return settled
  },
}

/**
 * A rail's returns (transfers/clearing-service.ts): each payout still Successful under its
 * account's lock is reversed (reversePayout) with the reason its return gave. Answers how
 * many it reversed and the payouts still Pending, whose returns wait until they settle.
 */
export const payoutReturns: JournalKind<
  Array<{ payout: ReturnedPayout; reason: string }>,
  { reversed: number; waiting: string[] }
> = {
  name: 'clearing.returns',
  accountsOf: (returned) => returned.map((r) => r.payout.account_id),
  transactionsOf: (returned) => returned.map((r) => r.payout.tx_id),
  record(journal, returned, { transactions }) {
    let reversed = 0
    const waiting: string[] = []
    for (const { payout, reason } of returned) {
      const status = transactions.get(payout.tx_id)?.status
      if (status === 'Pending') waiting.push(payout.tx_id)
      if (status !== 'Successful') continue
      reversePayout(journal, payout, reason)
      reversed++
    }
    return { reversed, waiting }
  },
}
