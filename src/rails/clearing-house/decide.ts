import { magicRecipients } from './magic-recipients.ts'

// What the clearing-house simulator answers to each payment of the bank's pacs.008: the
// outcomes of the magic recipients (magic-recipients.ts, documented for partners in
// docs/guides/payments.md), as ISO 20022 statuses and reason codes (the table and what each
// code means for a payout: src/rails/iso20022/reason-codes.ts). The decision depends on the
// recipient alone, so the same payment is answered the same way every time.

/** A payment's recipient, as the bank's pacs.008 names it. */
export interface Recipient {
  account_number: string
  branch_code: string
}

/** A return the recipient's bank sends later (pacs.004) for a payment accepted now. */
export interface ReturnDecision {
  reason_code: 'AC04'
  additional_information: string
}

export type PaymentDecision =
  | { status: 'ACSC'; returned?: ReturnDecision }
  | { status: 'RJCT'; reason_code: 'AC01' | 'RC01' | 'AG01'; additional_information: string }

/**
 * The answer to one payment. The branch code is looked at first, as the clearing house routes
 * by it before the recipient's bank sees the account.
 */
export function decidePayment(recipient: Recipient): PaymentDecision {
  if (recipient.branch_code === magicRecipients.invalid_branch_code) {
    // RC01 (BankIdentifierIncorrect): no bank has this branch code → Invalid.
    return { status: 'RJCT', reason_code: 'RC01',
      additional_information: 'unknown branch code (simulated)' }
  }
  switch (recipient.account_number) {
    case magicRecipients.invalid_account_number:
      // AC01 (IncorrectAccountNumber): no such account → Invalid. The code the bank itself
      // returns an incoming payment to an unknown account with (docs/operators/rails.md).
      return { status: 'RJCT', reason_code: 'AC01',
        additional_information: 'recipient account does not exist (simulated)' }
    case magicRecipients.failed_account_number:
      // AG01 (TransactionForbidden): the account exists and its bank declines the credit →
      // Failed. Not AM04 (InsufficientFunds): in a credit transfer that speaks of the payer's
      // side, the bank's own settlement funds, which would tell a partner something false.
      return { status: 'RJCT', reason_code: 'AG01',
        additional_information: 'recipient bank declined the payment (simulated)' }
    case magicRecipients.returned_account_number:
      // Settled now, sent back later: AC04 (ClosedAccountNumber), the commonest return.
      return { status: 'ACSC', returned: { reason_code: 'AC04',
        additional_information: 'returned by the recipient bank: account closed (simulated)' } }
    default:
      return { status: 'ACSC' }
  }
}
