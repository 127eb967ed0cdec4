import type { Generated, Kysely } from 'kysely'
import type {
  Timestamp,
  NullableTimestamp,
  Json,
  Cents,
  GeneratedCents,
} from '../db/column-types.ts'
import type { PartnerDebtTables } from './partner-debt-tables.ts'
import type { LegalHoldTables } from './legal-hold-tables.ts'

// Kysely types of the tables the ledger writes and reads. The ledger imports nothing above
// db/, so it types its queries with these (Kysely<LedgerTables>), never with the bank's whole
// Database (src/schema.ts, which extends this); a Kysely<Database> is a Kysely<LedgerTables>.
//
// `accounts` is here although the accounts capability creates its rows (number, owner,
// kind): the ledger keeps each account's balance, holds and hash chain head in it and locks
// the row for every posting, and a table has one type.

export interface AccountsTable {
  id: string
  created_seq: Generated<string>
  partner_id: string
  entity_id: string
  account_number: string
  country: string
  kind: 'pool' | 'standard'
  /** Its status (RULINGS "Account lifecycle"; account-status.ts): written by the ledger only. */
  status: Generated<'active' | 'frozen' | 'blocked' | 'dormant' | 'closed'>
  metadata: Json<Record<string, unknown>>
  created_at: Timestamp
  balance: GeneratedCents
  held: GeneratedCents
  last_seq: GeneratedCents
  last_sha: Generated<string>
  last_posted: GeneratedCents
}

export type TxType =
  | 'transfer' | 'fee' | 'deposit' | 'bulk_payment' | 'debit_order' | 'reversal' | 'refund' | 'card'
  | 'incoming'

export type TxPaymentType = 'EFT' | 'RTC' | 'INTERNAL' | 'DEBIT_ORDER' | 'CARD'

export type TxStatus = 'Invalid' | 'Pending' | 'Successful' | 'Failed' | 'Reversed'

export interface TransactionsTable {
  id: string
  partner_id: string
  account_id: string
  seq: Cents
  parent_tx_id: string | null
  created_at: Timestamp
  tx_type: TxType
  tx_payment_type: TxPaymentType
  status: TxStatus
  amount: Cents
  fee: Cents
  credit: Cents
  debit: Cents
  hold_amount: Cents
  running_balance: Cents
  posted_order: Cents | null
  ref: string
  own_ref: string
  recipient_name: string
  recipient_account: string
  recipient_branch: string
  user_id: string
  added_by: string
  status_reason: string | null
  status_at: NullableTimestamp
  prev_sha: string
  tx_sha: string
}

export interface PostingsTable {
  id: GeneratedCents
  journal_id: string
  tx_id: string | null
  account_id: string | null
  internal_account: string | null
  amount: Cents
  created_at: Timestamp
}

/**
 * A partner's idempotency key (clientTxId), claimed by the batch that moves its money
 * (payment-keys.ts).
 */
export interface TransferKeysTable {
  partner_id: string
  client_tx_id: string
  tx_id: string
  created_at: Timestamp
}

/**
 * What the last clean `ledger verify` established for the whole ledger (one row, id 1):
 * every posting up to `postings_horizon` (postings.id) was checked, and the internal
 * accounts' balances over those postings (ledger-verification.ts).
 */
export interface LedgerCheckpointTable {
  id: number
  postings_horizon: Cents
  internal_balances: Json<Record<string, string>>
  verified_at: Timestamp
  incremental: boolean
}

/**
 * Per account, how far the last clean `ledger verify` checked its hash chain: the row at
 * `seq` had `tx_sha`; its posted rows up to `posted_order` ran to `running_balance`; its
 * oldest row still Pending then was `pending_seq`; its postings up to the horizon summed to
 * `postings_sum`.
 */
export interface LedgerAccountCheckpointsTable {
  account_id: string
  seq: Cents
  tx_sha: string
  posted_order: Cents
  running_balance: Cents
  pending_seq: Cents | null
  postings_sum: Cents
  verified_at: Timestamp
}

/**
 * The outcome of the last `ledger verify`, clean or not (one row, id 1; verify-result.ts).
 */
export interface LedgerVerifyResultTable {
  id: number
  ok: boolean
  incremental: boolean
  problems: number
  finished_at: Timestamp
}

export interface LedgerTables extends PartnerDebtTables, LegalHoldTables {
  accounts: AccountsTable
  transactions: TransactionsTable
  postings: PostingsTable
  transfer_keys: TransferKeysTable
  ledger_checkpoint: LedgerCheckpointTable
  ledger_account_checkpoints: LedgerAccountCheckpointsTable
  ledger_verify_result: LedgerVerifyResultTable
}

/**
 * What the ledger's code is handed to query with: a Kysely, or a transaction, whose database
 * has the ledger's tables (the bank's Database, a test's own). Kysely's types do not let a
 * Kysely<Database> pass as a Kysely<LedgerTables> (`transaction()` and `deleteFrom()` hand
 * back builders typed by the whole database), so the ledger asks for the members it uses,
 * which do; every capability passes its own executor unchanged.
 */
export type LedgerExecutor = Pick<
  Kysely<LedgerTables>,
  'selectFrom' | 'insertInto' | 'updateTable' | 'getExecutor' | 'isTransaction'
>

/** A LedgerExecutor that also opens transactions (LedgerService's own). */
export interface LedgerDatabase extends LedgerExecutor {
  transaction(): { execute<T>(callback: (trx: LedgerExecutor) => Promise<T>): Promise<T> }
}
