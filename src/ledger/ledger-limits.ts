import type { KnownAccountsOptions } from './known-accounts.ts'

// The ledger's limits (ledger-module.ts declares them).

/**
 * 50,000 accounts (about 15 MB); an account found stale is read under lock for 10 s; 5 stale
 * guesses among 100 stop all guessing for a minute.
 */
export const known_accounts_default = {
  entries_max: 50_000,
  stale_pause_ms: 10_000,
  window_guesses: 100,
  stale_max: 5,
  suspend_ms: 60_000,
} satisfies KnownAccountsOptions

/**
 * A ledger batch that failed for a reason worth another try (deadlock, serialization failure)
 * is written again whole, at most this many times in all (ledger-writer.ts).
 */
export const batch_attempts_max = 3
