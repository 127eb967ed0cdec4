// The ISO 20022 reason codes the bank uses, with what a rejection with each means for a payout
// (docs/operators/rails.md: "rejected → Invalid when the reason says the recipient's
// details are wrong (AC01, AC03, RC01…; the docs list them), else Failed"). This table is that
// list. The codes and their names are those of ISO 20022's external code sets
// (ExternalStatusReason1Code for a pacs.002 rejection, ExternalReturnReason1Code for a
// pacs.004 return: the codes below mean the same in both).
//
// `Invalid` says the payment can never succeed as it was given: the recipient's account or
// bank does not exist, is not one, or is no longer one, and the partner must ask its customer
// for other details. `Failed` says the details name a real account and the payment was
// declined or could not be carried out (blocked, forbidden, a limit, funds, a technical
// fault): the same details may succeed later. A code not in the table, and a proprietary
// reason (`Rsn/Prtry`), is `Failed`: nothing is guessed, and only a code that says the
// details are wrong may tell a partner to change them.

/** What a rejected payout becomes (the transaction's status). */
export type RejectionOutcome = 'Invalid' | 'Failed'

export interface ReasonCode {
  /** The code's name in the ISO external code set, e.g. `IncorrectAccountNumber`. */
  name: string
  /** What it says, in words for operators and partners (at most Max105Text). */
  text: string
  /** What a payout rejected (pacs.002 RJCT) with it becomes. */
  rejection: RejectionOutcome
}

export const reason_codes = {
  AC01: { name: 'IncorrectAccountNumber', rejection: 'Invalid',
    text: 'The account number is not correct: no such account at the bank' },
  AC03: { name: 'InvalidCreditorAccountNumber', rejection: 'Invalid',
    text: "The creditor's account number is invalid or missing" },
  AC04: { name: 'ClosedAccountNumber', rejection: 'Invalid',
    text: 'The account number has been closed on the books of its bank' },
  AC06: { name: 'BlockedAccount', rejection: 'Failed',
    text: 'The account is blocked: no posting may be made to it' },
  AG01: { name: 'TransactionForbidden', rejection: 'Failed',
    text: 'The transaction is forbidden on this account: its bank declines it' },
  AG03: { name: 'TransactionNotSupported', rejection: 'Failed',
    text: 'The transaction type is not supported or authorised on this account' },
  AM02: { name: 'NotAllowedAmount', rejection: 'Failed',
    text: 'The amount is more than the largest allowed' },
  AM04: { name: 'InsufficientFunds', rejection: 'Failed',
    text: 'The funds available do not cover the amount' },
  AM05: { name: 'Duplication', rejection: 'Failed',
    text: 'The payment is a duplicate of one already received' },
  BE01: { name: 'InconsistentWithEndCustomer', rejection: 'Invalid',
    text: "The recipient's name does not match the account number" },
  FF01: { name: 'InvalidFileFormat', rejection: 'Failed',
    text: 'The message or file is not in a valid format' },
  MD07: { name: 'EndCustomerDeceased', rejection: 'Failed',
    text: 'The account holder is deceased' },
  MS03: { name: 'NotSpecifiedReasonAgentGenerated', rejection: 'Failed',
    text: 'The reason is not specified by the bank' },
  RC01: { name: 'BankIdentifierIncorrect', rejection: 'Invalid',
    text: 'The bank identifier (branch code) is not correct: no such bank or branch' },
} as const satisfies Record<string, ReasonCode>

export type ReasonCodeValue = keyof typeof reason_codes

/** The table's entry for a code, or undefined for a code the bank does not know. */
export function reasonCode(code: string): ReasonCode | undefined {
  return Object.hasOwn(reason_codes, code) ? reason_codes[code as ReasonCodeValue] : undefined
}

/**
 * What a payout rejected with this reason becomes: `Invalid` for a code of the table that says
 * the recipient's details are wrong, else `Failed` (an unknown code, a proprietary reason).
 */
export function rejectionOutcome(code: string, proprietary = false): RejectionOutcome {
  if (proprietary) return 'Failed'
  return reasonCode(code)?.rejection ?? 'Failed'
}

/**
 * The reason a gateway gives, in a status report of the whole message, for a message it never
 * received (a status request about it): the bank sends that message again.
 */
export const not_received = 'NOOR'
