import type { LedgerBatch } from '../ledger/ledger-batch.ts'
import type { RailOutcome } from '../rails/rail.ts'
import { newRowId } from '../ledger/row-id.ts'

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
  /** The Pending fee row written with the payment, by earlier versions; null for payouts taken since. */
  fee_tx_id: string | null
  account_id: string
  /** The credential that took the payment: its fee row names it too. */
  added_by: string
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
  if (payout.fee > 0n) {
    const feeTxId = payout.fee_tx_id ?? newRowId()
    batch.post([
      { account: payout.account_id, amount: -payout.fee, tx_id: feeTxId },
      { internal: 'fee_income', amount: payout.fee, tx_id: feeTxId },
    ])
    if (payout.fee_tx_id) batch.setStatus(feeTxId, payout.account_id, { status: 'Successful', posted: true })
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
