import { assert } from '../errors.ts'
import { takesCredits } from './account-status.ts'
import type { JournalKind } from './journal-kind.ts'

// Another bank's credits to the bank's accounts (rails: an incoming pacs.008): each moves
// money from the clearing house's settlement account of its payment type to the customer's
// account, as an `incoming` transaction, posted and Successful at once. The payer's name is
// the row's `recipient_name` and its reference the row's `ref` (the row's other party and
// words, as for a payout); the payer's full details stay with the incoming payment's record.

export interface IncomingCreditEntry {
  /** The transaction's id, chosen by the caller (its record names it). */
  txId: string
  accountId: string
  amount: bigint
  paymentType: 'EFT' | 'RTC'
  payerName: string
  reference: string
}

/**
 * Each credit booked: the account's partner, for its event; or, for an account that takes no
 * credits (blocked: AC06, closed: AC04), the reason it is sent back, nothing booked.
 */
export interface CreditedEntry {
  tx_id: string
  account_id: string
  partner_id: string
  created_at: Date
  returned?: 'AC04' | 'AC06'
}

export const incomingCredits: JournalKind<IncomingCreditEntry[], CreditedEntry[]> = {
  name: 'rails.incoming',
  accountsOf: (credits) => credits.map((c) => c.accountId),
  record(journal, credits) {
    return credits.map((c) => {
      assert(c.amount > 0n, 'an incoming credit is of a positive amount')
      assert(journal.has(c.accountId), `incoming credit ${c.txId}: its account is not locked`)
      const { status, partner_id } = journal.account(c.accountId)
      if (!takesCredits(status)) {
        return { tx_id: c.txId, account_id: c.accountId, partner_id, created_at: journal.now,
          returned: status === 'closed' ? 'AC04' as const : 'AC06' as const }
      }
      const before = journal.account(c.accountId).balance
      journal.post([
        { internal: `settlement:${c.paymentType}`, amount: -c.amount, tx_id: c.txId },
        { account: c.accountId, amount: c.amount, tx_id: c.txId },
      ])
      journal.append({
        id: c.txId,
        account_id: c.accountId,
        tx_type: 'incoming',
        tx_payment_type: c.paymentType,
        status: 'Successful',
        amount: c.amount,
        credit: c.amount,
        debit: 0n,
        ref: c.reference,
        recipient_name: c.payerName,
        added_by: 'system',
        posted: true,
      })
      assert(journal.account(c.accountId).balance === before + c.amount,
        'an incoming credit adds exactly its amount')
      return { tx_id: c.txId, account_id: c.accountId,
        partner_id: journal.account(c.accountId).partner_id, created_at: journal.now }
    })
  },
}
