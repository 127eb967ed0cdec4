import type { AccountState } from './journal.ts'

// What a process remembers of the accounts its payment batches last wrote: each one's
// balance, holds and the head of its hash chain, as its batch committed them. A batch whose
// accounts are all remembered skips the statement that locks and reads them (a round trip
// and a statement fewer: its write is its only statement) and works from these copies
// instead; its write then locks the accounts in id order and checks, in the same statement,
// that each is still exactly as remembered, and is refused whole (StaleAccounts) if any
// changed — another instance, a clearing cycle or a deposit wrote it — after which it runs
// again the usual way. So the memory is only ever a guess the database confirms: it can
// cost a batch a second try, never a wrong balance.
//
// An account whose remembered state turned out stale is not guessed again for a while
// (`stale_pause_ms`), so that two instances paying from one account do not keep refusing
// each other's guesses. And when guesses keep failing across many accounts (instances
// that share their accounts, each writing what the other remembers), the instance stops
// guessing altogether for a while: `stale_max` stale guesses among `window_guesses` guesses
// suspend guessing for `suspend_ms`, after which it tries again.

export interface KnownAccountsOptions {
  /** Accounts remembered at most; the least recently written go first. */
  entries_max: number
  /** How long an account found stale is read the usual way before it is guessed again. */
  stale_pause_ms: number
  /**
   * Guesses counted together: `stale_max` stale ones among them suspend all guessing for
   * `suspend_ms`.
   */
  window_guesses: number
  stale_max: number
  suspend_ms: number
  now?: () => number
}

export class KnownAccounts {
  private readonly states = new Map<string, AccountState>()
  private readonly paused = new Map<string, number>()
  private readonly now: () => number
  private guesses = 0
  private stales = 0
  private suspendedUntil = 0

  constructor(private readonly options: KnownAccountsOptions) {
    this.now = options.now ?? Date.now
  }

  /**
   * Copies of the accounts' remembered states, by id; undefined unless every one is remembered and
   * not paused.
   */
  take(ids: readonly string[]): Map<string, AccountState> | undefined {
    if (this.suspendedUntil > 0) {
      if (this.suspendedUntil > this.now()) return undefined
      this.suspendedUntil = 0
    }
    const taken = new Map<string, AccountState>()
    for (const id of ids) {
      const state = this.states.get(id)
      if (!state) return undefined
      if (this.paused.size > 0) {
        const until = this.paused.get(id)
        if (until !== undefined) {
          if (until > this.now()) return undefined
          this.paused.delete(id)
        }
      }
      taken.set(id, copyOf(state))
    }
    return taken
  }

  /**
   * Remembers the states a batch leaves (copies), as it commits or, when the next batch of
   * its accounts may start beside it, as its write goes out. A state older than the one
   * remembered (a lower sequence, or the same with fewer postings) is ignored: a batch that
   * commits after the next one was built from its state must not take that back.
   */
  remember(states: Iterable<AccountState>): void {
    for (const state of states) {
      const had = this.states.get(state.id)
      if (had && (had.last_seq > state.last_seq || (had.last_seq === state.last_seq
        && had.last_posted > state.last_posted))) continue
      // Deleted first, so that the map's order is the order of last writes.
      this.states.delete(state.id)
      this.states.set(state.id, copyOf(state))
    }
    let excess = this.states.size - this.options.entries_max
    for (const id of this.states.keys()) {
      if (excess-- <= 0) break
      this.states.delete(id)
    }
  }

  /** Forgets the accounts (their batch failed, or something else is writing them). */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.states.delete(id)
  }

  /**
   * Forgets the accounts and reads them the usual way for a while: their remembered state was
   * stale.
   */
  pause(ids: Iterable<string>): void {
    const until = this.now() + this.options.stale_pause_ms
    for (const id of ids) {
      this.states.delete(id)
      this.paused.set(id, until)
    }
    if (this.paused.size > this.options.entries_max) {
      const now = this.now()
      for (const [id, at] of this.paused) if (at <= now) this.paused.delete(id)
      let excess = this.paused.size - this.options.entries_max
      for (const id of this.paused.keys()) {
        if (excess-- <= 0) break
        this.paused.delete(id)
      }
    }
  }

  /** Counts a guess (a batch started from remembered states) and whether it was stale. */
  guessed(stale: boolean): void {
    this.guesses++
    if (stale) this.stales++
    if (this.stales >= this.options.stale_max) {
      this.suspendedUntil = this.now() + this.options.suspend_ms
      this.guesses = 0
      this.stales = 0
    } else if (this.guesses >= this.options.window_guesses) {
      this.guesses = 0
      this.stales = 0
    }
  }

  /** Whether guessing is suspended (too many stale guesses lately). */
  get suspended(): boolean {
    return this.suspendedUntil > this.now()
  }

  get size(): number {
    return this.states.size
  }

  /** Forgets everything, the counts of guesses included: the memory of a new instance. */
  clear(): void {
    this.states.clear()
    this.paused.clear()
    this.guesses = 0
    this.stales = 0
    this.suspendedUntil = 0
  }
}

/**
 * A copy of an account's state: one object literal of known shape (a spread copy is slower to make
 * and to read).
 */
function copyOf(state: AccountState): AccountState {
  return {
    id: state.id,
    partner_id: state.partner_id,
    status: state.status,
    balance: state.balance,
    held: state.held,
    last_seq: state.last_seq,
    last_sha: state.last_sha,
    last_posted: state.last_posted,
  }
}
