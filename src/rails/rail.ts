import type { PayoutInstruction } from '../ledger/ledger-store.ts'

// What the bank's rails answer of a payout. Payouts go out on the ISO 20022 rail (iso-rail.ts,
// files for EFT, a gateway for RTC); the sandbox's clearing house answers them there.

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

/**
 * Returns recorded by the simulated rail of earlier versions, booked until none is left
 * (simulated-rail.ts). Payouts go out on the ISO 20022 rail (iso-rail.ts).
 */
export interface Rail {
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
