import type { PayoutInstruction } from '../ledger/ledger-store.ts'

// The bank's payment rails (the outside world) behind one interface. The default is the
// simulated rail; a real adapter implements the same calls.

/** What a rail is told of a payout: the ledger's record of it (ledger-store.ts). */
export type RailPayment = PayoutInstruction

export type RailOutcome =
  | { status: 'accepted'; reference: string }
  /** The rail or the recipient's bank declined the payment: money stays with the payer. */
  | { status: 'failed'; reason: string }
  /** The recipient details are not a real account: no money moves. */
  | { status: 'invalid'; reason: string }

export interface RailReturn {
  tx_id: string
  reason: string
}

export interface Rail {
  /** Real-time clearing: the rail answers at once. Idempotent by tx_id. */
  payRealTime(payment: RailPayment): Promise<RailOutcome>
  /**
   * One EFT clearing cycle: the batch is submitted and each payment is answered. Idempotent by
   * tx_id.
   */
  submitEftBatch(payments: RailPayment[]): Promise<Map<string, RailOutcome>>
  /**
   * Payments that recipients' banks sent back after success and the bank has not yet
   * acknowledged, oldest first, a bounded batch. A return is handed out again until it is
   * acknowledged, so none is lost when the bank cannot book it yet (its payment still
   * settling, or a clearing run dying half-way).
   */
  collectReturns(): Promise<RailReturn[]>
  /**
   * The bank has dealt with these returns: reversed the payment, or found it already
   * reversed. They are not handed out again. Unknown ids are ignored.
   */
  acknowledgeReturns(txIds: readonly string[]): Promise<void>
}
