import { sql } from 'kysely'
import { takesCredits } from './account-status.ts'
import type { AccountStatus, Journal } from './journal.ts'
import type { LedgerExecutor } from './ledger-tables.ts'
import type { PartnerDebts } from './partner-debt.ts'
import { newRowId } from './row-id.ts'

// The named journals of debit orders (debit/ says which and when), all through LedgerBatch:
//  - a collection: the debtor's bank pays the amount into settlement:DEBIT_ORDER's side; the
//    creditor's account gets it less the bank's charges, which are fee income. A partner that
//    owes the bank (a disputed collection's shortfall) pays it from this credit first (not
//    from an account that is not active). An account that takes no credits (blocked,
//    closed) is not collected into at all: debit/ asks accountsRefusingCredits before it
//    submits a collection to the debtor's bank;
//  - a dispute: the debtor's bank takes the whole amount back and the bank gives up its
//    charges; what the account cannot cover becomes the partner's debt (partner-debt.ts).
//    The bank cannot refuse a dispute, but an account that is not active gives nothing to
//    it: the whole amount is the partner's debt.

/** A debit order's collection or its dispute, as the ledger books it. */
export interface DebitBooking {
  account_id: string
  partner_id: string
  /** What the debtor paid (or takes back), in cents. */
  amount: bigint
  /** The bank's charges on it (at most the amount). */
  charges: bigint
  ref: string
  own_ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
}

/** Books a collected debit order; returns its credit's transaction id. */
export function collectDebit(
  batch: Journal,
  debts: PartnerDebts,
  booking: DebitBooking,
): string {
  const { amount, charges } = booking
  const net = amount - charges
  const txId = newRowId()
  batch.post([
    { internal: 'settlement:DEBIT_ORDER', amount: -amount, tx_id: txId },
    { account: booking.account_id, amount: net, tx_id: txId },
    ...(charges > 0n ? [{ internal: 'fee_income' as const, amount: charges, tx_id: txId }] : []),
  ])
  batch.append({
    id: txId,
    account_id: booking.account_id,
    tx_type: 'debit_order',
    tx_payment_type: 'DEBIT_ORDER',
    status: 'Successful',
    amount,
    fee: charges,
    credit: net,
    debit: 0n,
    ...namesOf(booking),
    added_by: 'system',
    posted: true,
  })
  debts.recover(batch, booking.account_id, booking.partner_id, txId)
  return txId
}

/**
 * Reverses a disputed collection whose credit was `net` (`credit_tx_id`, marked Reversed);
 * returns the reversal's id and the reason written on it (naming any shortfall).
 */
export function reverseDebit(
  batch: Journal,
  debts: PartnerDebts,
  booking: DebitBooking & { net: bigint; credit_tx_id: string },
): { reversal_tx_id: string; reason: string } {
  const reversalId = newRowId()
  const { taken, shortfall } = debts.takeBack(batch, {
    account_id: booking.account_id,
    partner_id: booking.partner_id,
    amount: booking.net,
    tx_id: reversalId,
    counter: [
      { internal: 'settlement:DEBIT_ORDER', amount: booking.amount },
      ...(booking.charges > 0n
        ? [{ internal: 'fee_income' as const, amount: -booking.charges }]
        : []),
    ],
  })
  const reason = disputeReason(batch.account(booking.account_id).status, shortfall)
  batch.append({
    id: reversalId,
    account_id: booking.account_id,
    parent_tx_id: booking.credit_tx_id,
    tx_type: 'reversal',
    tx_payment_type: 'DEBIT_ORDER',
    status: 'Successful',
    amount: booking.net,
    credit: 0n,
    debit: taken,
    ...namesOf(booking),
    added_by: 'system',
    posted: true,
    status_reason: reason,
  })
  batch.setStatus(booking.credit_tx_id, booking.account_id, {
    status: 'Reversed',
    reason: 'disputed by the debtor',
  })
  return { reversal_tx_id: reversalId, reason }
}

/** What a dispute's reversal says: any shortfall, and why (the account's status). */
function disputeReason(status: AccountStatus, shortfall: bigint): string {
  if (shortfall === 0n) return 'disputed by the debtor'
  if (status !== 'active') {
    return `disputed by the debtor; the account is ${status}, so nothing is taken from it: ` +
      `its ${shortfall} cents are owed by the partner`
  }
  return `disputed by the debtor; ${shortfall} cents the account could not cover ` +
    'are owed by the partner'
}

/**
 * Which of these accounts take no credits now (blocked, closed), with their status: a
 * collection into one is not submitted to the debtor's bank. Read without a lock, right
 * before the rail is asked (as the orders' mandates are).
 */
export async function accountsRefusingCredits(db: LedgerExecutor,
    accountIds: readonly string[]): Promise<Map<string, AccountStatus>> {
  if (accountIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('accounts')
    .select(['id', 'status'])
    .where('id', '=', sql<string>`any(${[...new Set(accountIds)]}::uuid[])`)
    .where('status', '!=', 'active')
    .execute()
  return new Map(rows.filter((row) => !takesCredits(row.status))
    .map((row) => [row.id, row.status]))
}

/** What a debit order's rows say of it: its reference and the debtor's account. */
function namesOf(booking: DebitBooking) {
  const { ref, own_ref, recipient_name, recipient_account, recipient_branch } = booking
  return { ref, own_ref, recipient_name, recipient_account, recipient_branch }
}
