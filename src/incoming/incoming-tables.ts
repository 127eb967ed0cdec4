import type { Cents, Timestamp } from '../db/column-types.ts'

// Kysely types of the incoming payments' table (src/schema.ts derives the bank's Database).

/**
 * Every credit another bank sent to an account of the bank (an incoming pacs.008), booked or
 * sent back: the payer's full details, which the transaction row does not carry.
 */
export interface IncomingPaymentsTable {
  id: string
  /** The account's partner; null for a payment sent back (no such account). */
  partner_id: string | null
  account_id: string | null
  /** The `incoming` transaction it became; null when sent back. */
  tx_id: string | null
  message_id: string
  end_to_end_id: string
  amount: Cents
  payment_type: 'EFT' | 'RTC'
  payer_name: string
  payer_account_number: string
  payer_branch_code: string
  /** The account number it named at the bank. */
  account_number: string
  reference: string | null
  settlement_date: string
  status: 'credited' | 'returned'
  /** Why it was sent back (AC01: no such account). */
  return_reason_code: string | null
  received_at: Timestamp
}

export interface IncomingTables {
  incoming_payments: IncomingPaymentsTable
}
