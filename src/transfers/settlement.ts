import type { LedgerBatch } from '../ledger/ledger-batch.ts'
import type { RailOutcome } from '../rails/rail.ts'
import { newRowId } from '../ledger/row-id.ts'

// Settling a pending payout once its rail has answered: the hold is released, and on
// acceptance the amount goes to the rail's settlement account and the fee to fee income,
// each as its own journal. Used for RTC at once and for EFT by the clearing cycle.

export interface PendingPayout {
  tx_id: string
  fee_tx_id: string | null
  account_id: string
  payment_type: 'EFT' | 'RTC'
  amount: bigint
  fee: bigint
  hold_amount: bigint
}

export type SettledStatus = 'Successful' | 'Failed' | 'Invalid'

export function settlePayout(batch: LedgerBatch, payout: PendingPayout, outcome: RailOutcome): SettledStatus {
  batch.releaseHold(payout.account_id, payout.hold_amount)
  if (outcome.status !== 'accepted') {
    const status = outcome.status === 'failed' ? 'Failed' : 'Invalid'
    batch.setStatus(payout.tx_id, payout.account_id, { status, reason: outcome.reason })
    if (payout.fee_tx_id) batch.setStatus(payout.fee_tx_id, payout.account_id, { status, reason: 'payment not made; no fee charged' })
    return status
  }
  batch.post([
    { account: payout.account_id, amount: -payout.amount, tx_id: payout.tx_id },
    { internal: `settlement:${payout.payment_type}`, amount: payout.amount, tx_id: payout.tx_id },
  ])
  batch.setStatus(payout.tx_id, payout.account_id, { status: 'Successful', posted: true })
  if (payout.fee_tx_id && payout.fee > 0n) {
    batch.post([
      { account: payout.account_id, amount: -payout.fee, tx_id: payout.fee_tx_id },
      { internal: 'fee_income', amount: payout.fee, tx_id: payout.fee_tx_id },
    ])
    batch.setStatus(payout.fee_tx_id, payout.account_id, { status: 'Successful', posted: true })
  }
  return 'Successful'
}

/** A payout the recipient's bank sent back after success: credited back as a `reversal`. */
export function reversePayout(
  batch: LedgerBatch,
  original: { tx_id: string; account_id: string; amount: bigint; payment_type: 'EFT' | 'RTC'; ref: string; recipient_name: string },
  reason: string,
): string {
  const reversalId = newRowId()
  batch.post([
    { internal: `settlement:${original.payment_type}`, amount: -original.amount, tx_id: reversalId },
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
