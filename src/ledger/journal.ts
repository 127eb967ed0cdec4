import type { TxPaymentType, TxStatus, TxType } from './ledger-tables.ts'

// What a capability sees of the ledger while its journals are recorded: the accounts the
// writer locked (or remembered) for it, and the moves it may record on them. Opening,
// locking, writing and retrying are the writer's (ledger-writer.ts); a capability never
// holds the batch itself, so every movement of money goes through the writer's two doors:
//  - a desk (LedgerWriter.payments, .settlements): group commit for high-rate kinds, each
//    request answered on its own;
//  - a composed write (LedgerWriter.write): a kind of journal recorded inside the
//    capability's own database transaction, beside its business rows (a bulk batch's
//    funding, a clearing chunk, a debit-order run), committed by the capability.

/**
 * The bank's own ledger accounts; their balances are derived from postings when asked.
 * `settlement:DEBIT_ORDER` is where debit-order collections come from (and disputes go
 * back to); `partner_debt:<partner_id>` is what a partner owes the bank (negative while it
 * owes: see partner-debt.ts); `unclaimed_funds` is money that came back for a closed account
 * (unclaimed-funds.ts).
 */
export type InternalAccount =
  | 'settlement:EFT'
  | 'settlement:RTC'
  | 'settlement:DEBIT_ORDER'
  | 'settlement:CARD'
  | 'fee_income'
  | 'unclaimed_funds'
  | `partner_debt:${string}`

/**
 * What may happen to an account's money (RULINGS "Account lifecycle"): `active` all of it;
 * `frozen` and `dormant` no new customer debits (credits arrive); `blocked` neither debits
 * nor credits; `closed` nothing, for good.
 */
export type AccountStatus = 'active' | 'frozen' | 'blocked' | 'dormant' | 'closed'

export interface AccountState {
  id: string
  partner_id: string
  status: AccountStatus
  balance: bigint
  held: bigint
  last_seq: bigint
  last_sha: string
  last_posted: bigint
}

export interface JournalEntry {
  account?: string
  internal?: InternalAccount
  /** Signed cents: a credit is positive, a debit negative. */
  amount: bigint
  tx_id?: string
}

export interface NewTransaction {
  id?: string
  account_id: string
  parent_tx_id?: string | null
  tx_type: TxType
  tx_payment_type: TxPaymentType
  status: TxStatus
  amount: bigint
  fee?: bigint
  credit: bigint
  debit: bigint
  hold_amount?: bigint
  ref?: string
  own_ref?: string
  recipient_name?: string
  recipient_account?: string
  recipient_branch?: string
  user_id?: string
  added_by: string
  /** True when the row's money was posted with it (its running balance is final). */
  posted: boolean
  status_reason?: string | null
}

/** The ledger as a kind records its journals: every move asserted, balances never below zero. */
export interface Journal {
  /** The time of the write (the bank's clock, read once when it started). */
  readonly now: Date
  /** Whether the write holds this account (it exists and was asked for). */
  has(accountId: string): boolean
  /** The account as the moves recorded so far leave it. */
  account(accountId: string): Readonly<AccountState>
  /** Balance less holds, as the moves recorded so far leave it. */
  available(accountId: string): bigint
  /** Reserves money for a pending payment; false (and nothing changes) when available is short. */
  tryHold(accountId: string, amount: bigint): boolean
  releaseHold(accountId: string, amount: bigint): void
  /** Posts one journal whose postings sum to zero; returns its id. */
  post(entries: JournalEntry[]): string
  /** Appends a transaction row to its account's hash chain; returns its id. */
  append(tx: NewTransaction): string
  /** Changes the status of an existing row; `posted` fixes its running balance now. */
  setStatus(
    txId: string,
    accountId: string,
    change: { status: TxStatus; reason?: string | null; posted?: boolean },
  ): void
  /** Changes what a Pending row holds (it stays Pending). */
  setHold(txId: string, accountId: string, holdAmount: bigint): void
  /** Changes the account's status (written with the batch, under its lock). */
  setAccountStatus(accountId: string, status: AccountStatus): void
}
