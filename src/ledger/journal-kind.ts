import type { Journal } from './journal.ts'
import type { TxStatus } from './ledger-tables.ts'
import type { PartnerDebts } from './partner-debt.ts'

// A kind of journal for the writer's second door (LedgerWriter.write): composed work that a
// capability writes inside its own database transaction (journal.ts says what it may record).

/** A transaction's status, hold and amount, read under its account's lock. */
export interface LockedStatus {
  status: TxStatus
  hold_amount: bigint
  /** The amount it was written with (part of its hash: it never changes). */
  amount: bigint
  /** Its account (one the write locked: the writer asserts it). */
  account_id: string
}

/** What the writer read under the accounts' locks for a composed write. */
export interface UnderLock {
  /** Each transaction the kind named (`transactionsOf`) that exists, by id. */
  transactions: ReadonlyMap<string, LockedStatus>
  /** The debts of the accounts' partners, locked after the accounts (a kind with `debts`). */
  debts: PartnerDebts | undefined
}

/**
 * A kind of journal written inside a capability's own transaction (LedgerWriter.write): what
 * it moves, never how it is locked or written. `record` may throw a typed error (not found,
 * insufficient funds): nothing is written and the caller's transaction rolls back.
 */
export interface JournalKind<I, R> {
  /** Its name in the metrics and probes (`bulk.funding`, `clearing.settle`). */
  name: string
  /** The accounts its journals touch: locked in id order. */
  accountsOf(input: I): Iterable<string>
  /** The transactions whose status it reads under the accounts' locks (to settle each once). */
  transactionsOf?(input: I): Iterable<string>
  /** Whether it pays or adds to its accounts' partners' debts (partner-debt.ts). */
  debts?: boolean
  /** Records its journals on the locked accounts; returns what the caller needs of them. */
  record(journal: Journal, input: I, under: UnderLock): R
}
