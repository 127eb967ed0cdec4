import type { Generated } from 'kysely'
import type { Cents, Timestamp, NullableTimestamp } from '../db/column-types.ts'
import type { DebitRailTables } from './debit-rail-tables.ts'

// Kysely types of the simulated rails' tables (src/schema.ts's Database extends RailTables):
// the payments the simulated rail will send back, and the simulated debit rail's own.

/** Owned by the simulated rail (src/rails/simulated-rail.ts): payments it will send back. */
export interface SimulatedRailReturnsTable {
  tx_id: string
  reason: string
  created_at: Timestamp
  collected_at: NullableTimestamp
}

/**
 * Every ISO 20022 message the bank wrote to the clearing house or applied from it (rail-store.ts):
 * an outbound message is recorded before its file is written, so a restart writes the same
 * file again; an inbound one is recorded in the transaction that applies it, so it is
 * applied once.
 */
export interface RailMessagesTable {
  direction: 'out' | 'in'
  message_id: string
  /** The message's name and version, e.g. `pacs.008.001.09`. */
  kind: string
  file_name: string
  /** EFT or RTC for an outbound pacs.008; null otherwise. */
  payment_type: 'EFT' | 'RTC' | null
  transaction_count: number
  control_sum: Cents
  /** Outbound: its CreDtTm. Inbound: when it was applied. */
  created_at: Timestamp
  /** Outbound: the interbank settlement day it asks for (`YYYY-MM-DD`). */
  settlement_date: string | null
  /** Outbound: when its file was last written whole into outbound/. */
  written_at: NullableTimestamp
  /** Inbound: the SHA-256 of the file as applied. */
  sha256: string | null
  /** Outbound messages kept whole (a return the bank sends, small): its text. */
  body: string | null
}

/** Whose payouts the rail carries: each books the answers to its own. */
export type PayoutSource = 'transfer' | 'bulk'

/** Each payout the bank sent in an outbound pacs.008, and the answer it got. */
export interface RailSubmissionsTable {
  tx_id: string
  message_id: string
  /** Whose payout it is: a transfer's, or a bulk batch's payment (who books its answer). */
  source: PayoutSource
  /** What the source knows it by besides its tx_id (a bulk payment's batch id), if anything. */
  source_ref: string | null
  /** Its place in the message (from 0): the file is written again in this order. */
  position: number
  end_to_end_id: string
  amount: Cents
  debtor_name: string
  debtor_account: string
  creditor_name: string
  creditor_account: string
  creditor_branch: string
  ref: string
  /** ACSC, ACCC, RJCT… from the status report; null while unanswered. */
  status: string | null
  reason_code: string | null
  answered_at: NullableTimestamp
  /** The return (pacs.004) reason code, once the payment came back. */
  returned_reason_code: string | null
  /** When the return was applied (null for returns applied before migration 0038). */
  returned_at: NullableTimestamp
}

/** Inbound files the bank refused whole, with the reason operators see. */
export interface RailRefusalsTable {
  id: Generated<string>
  file_name: string
  sha256: string
  reason: string
  refused_at: Timestamp
}

export interface RailTables extends DebitRailTables {
  simulated_rail_returns: SimulatedRailReturnsTable
  rail_messages: RailMessagesTable
  rail_submissions: RailSubmissionsTable
  rail_refusals: RailRefusalsTable
}
