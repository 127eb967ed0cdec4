// An account's statement for a range of days (South African dates, both included): what
// the PDF (statement-pdf.ts) and the ISO 20022 camt.053 renderings are made from. Money is
// integer cents. Built by the statements service from the ledger's posted transactions.

/** One posted movement of the account, in the order the ledger posted it. */
export interface StatementLine {
  tx_id: string
  /** When it was posted (the ledger's time; shown in SAST). */
  posted_at: Date
  /** The ledger's tx_type (transfer, fee, deposit, incoming, card, …). */
  tx_type: string
  /** EFT, RTC, INTERNAL, DEBIT_ORDER, CARD. */
  payment_type: string
  /** What the customer reads: the reference, and the other party's name where there is one. */
  description: string
  /** Money in (cents, ≥ 0) and out (cents, ≥ 0); one of them is 0. */
  credit: bigint
  debit: bigint
  /** The balance after this line (cents; may be negative only for an account that may be). */
  running_balance: bigint
}

export interface AccountStatement {
  account_id: string
  account_number: string
  /** The bank's branch code (BANK_BRANCH_CODE). */
  branch_code: string
  /** The account holder's name (its entity's name). */
  holder_name: string
  /** `YYYY-MM-DD` (SAST), both included. */
  from: string
  to: string
  /** The balance before the first day's first posting, and after the last day's last. */
  opening_balance: bigint
  closing_balance: bigint
  credits: { count: number; sum: bigint }
  debits: { count: number; sum: bigint }
  /** The fees among the debits (tx_type `fee`, and fees charged with a payment). */
  fees: bigint
  /** What was held (pending payments, holds) at the end of the last day. */
  held_at_end: bigint
  lines: StatementLine[]
  generated_at: Date
}
