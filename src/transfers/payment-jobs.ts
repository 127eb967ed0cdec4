import { assert } from '../errors.ts'
import type { LedgerBatch } from '../ledger/ledger-batch.ts'
import type { PendingPayout } from './settlement.ts'

// A payment request as the ledger takes it inside a grouped batch (transfer-service.ts),
// and the two ways of taking one:
//  - a payout to another bank (EFT or RTC) is held, with a Pending row, and settled later
//    when its rail answers (settlement.ts), which writes its fee's row;
//  - an internal payment to another account of this bank is posted at once: one journal
//    debits the payer and credits the payee, each side gets its own Successful row, and
//    the fee is a journal of its own.

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
  /** The payment advice the request asked for, if any. */
  advice: { email: string; name: string } | undefined
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
 * (settlement.ts), so a payment that fails or is invalid leaves no fee row at all.
 */
export function reservePayout(batch: LedgerBatch, job: PayoutJob): PendingPayout | undefined {
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
export function payInternal(batch: LedgerBatch, job: InternalJob): InternalPaid | undefined {
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
  if (job.feeTxId) {
    batch.post([
      { account: job.accountId, amount: -job.fee, tx_id: job.feeTxId },
      { internal: 'fee_income', amount: job.fee, tx_id: job.feeTxId },
    ])
    batch.append({
      id: job.feeTxId,
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
  return { payment_type: 'INTERNAL', tx_id: job.txId }
}
