import { sql, type Insertable, type Kysely, type RawBuilder } from 'kysely'
import { arrayParameter, insertUnnestStatement, unnestRows, type PgType } from '../db/speed/arrays.ts'
import { prepared, thenCommit } from '../db/speed/prepared.ts'
import type { Clock } from '../clock.ts'
import type { LedgerExecutor, PostingsTable, TransactionsTable, TxPaymentType, TxStatus, TxType } from './ledger-tables.ts'
import { assert } from '../errors.ts'
import { cents } from './cents.ts'
import { chainHash, type ChainFields } from './tx-chain.ts'
import { newRowId } from './row-id.ts'
import type { AccountState, InternalAccount, Journal, JournalEntry, NewTransaction } from './journal.ts'

export type { AccountState, InternalAccount, JournalEntry, NewTransaction } from './journal.ts'

// The only code that moves money. A LedgerBatch is one unit of work inside one database
// transaction: it locks the accounts it touches (in id order, so that concurrent batches
// on any instance cannot deadlock), applies holds, postings and transaction rows in
// memory in request order, and writes everything with a few set-based statements. Every
// movement is a journal whose postings sum to zero; balances change only with postings.

interface StatusChange {
  status: TxStatus
  status_reason: string | null
  hold_amount: bigint
  running_balance?: bigint
  posted_order?: bigint
}

const transaction_columns: Array<[keyof Insertable<TransactionsTable> & string, PgType]> = [
  ['id', 'uuid'], ['partner_id', 'uuid'], ['account_id', 'uuid'], ['seq', 'bigint'],
    ['parent_tx_id', 'uuid'],
  ['created_at', 'timestamptz'], ['tx_type', 'text'], ['tx_payment_type', 'text'],
    ['status', 'text'],
  ['amount', 'bigint'], ['fee', 'bigint'], ['credit', 'bigint'], ['debit', 'bigint'],
    ['hold_amount', 'bigint'],
  ['running_balance', 'bigint'], ['posted_order', 'bigint'], ['ref', 'text'], ['own_ref', 'text'],
  ['recipient_name', 'text'], ['recipient_account', 'text'], ['recipient_branch', 'text'],
    ['user_id', 'text'],
  ['added_by', 'text'], ['status_reason', 'text'], ['status_at', 'timestamptz'],
    ['prev_sha', 'text'], ['tx_sha', 'text'],
]

const posting_columns: Array<[keyof Insertable<PostingsTable> & string, PgType]> = [
  ['journal_id', 'uuid'], ['tx_id', 'uuid'], ['account_id', 'uuid'], ['internal_account', 'text'],
  ['amount', 'bigint'], ['created_at', 'timestamptz'],
]

const guardFailed = 'bank: the batch guard did not hold'
const staleAccounts = 'bank: an account changed since it was remembered'

/**
 * A batch's guard did not hold: nothing of its statement was written, and its transaction is
 * aborted.
 */
export class GuardFailed extends Error {
  constructor(message = guardFailed) {
    super(message)
  }
}

/**
 * A batch opened from remembered account states (LedgerBatch.fromKnown) found one of them
 * changed: nothing of its statement was written, and its transaction is aborted.
 */
export class StaleAccounts extends GuardFailed {
  constructor() {
    super(staleAccounts)
  }
}

/**
 * A condition on a batch's write (`flush`): `queries` are WITH queries (`name as (…)`)
 * that run in the same statement before the batch's writes, and `holds` is SQL over their
 * results that must be true for the batch's writes to happen (none: the queries only write,
 * and fail the statement themselves if they must).
 */
export interface FlushGuard {
  queries: RawBuilder<unknown>[]
  holds?: RawBuilder<unknown>
}

/**
 * Where remembered account states come from (known-accounts.ts): copies, or undefined unless all
 * are there.
 */
export interface RememberedAccounts {
  take(ids: readonly string[]): Map<string, AccountState> | undefined
}

export class LedgerBatch implements Journal {
  private readonly newRows: Insertable<TransactionsTable>[] = []
  private readonly newPostings: Insertable<PostingsTable>[] = []
  private readonly changes = new Map<string, StatusChange>()
  private readonly touched = new Set<string>()
  readonly now: Date

  private constructor(
    private readonly trx: LedgerExecutor,
    private readonly states: Map<string, AccountState>,
    clock: Clock,
    /**
     * The states the batch started from when they were remembered, not read under lock: its write
     * checks them.
     */
    private readonly expected?: AccountState[],
  ) {
    this.now = clock.now()
  }

  /**
   * A batch that starts from the accounts' remembered states (known-accounts.ts) instead of
   * locking and reading them: no statement before its write. The write locks the accounts in
   * id order and is refused whole (StaleAccounts) unless each is still exactly as
   * remembered. Undefined when an account is not remembered: open it the usual way.
   */
  static fromKnown(trx: LedgerExecutor, clock: Clock, accountIds: Iterable<string>,
      known: RememberedAccounts): LedgerBatch | undefined {
    const ids = [...new Set(accountIds)].sort()
    if (ids.length === 0) return undefined
    const states = known.take(ids)
    if (!states) return undefined
    return new LedgerBatch(trx, states, clock, ids.map((id) => ({ ...states.get(id)! })))
  }

  /** Whether the batch started from remembered states (its write checks them). */
  get guessed(): boolean {
    return this.expected !== undefined
  }

  /**
   * Every account's state as the batch leaves it, to remember once it commits
   * (KnownAccounts.remember copies them).
   */
  accountStates(): Iterable<AccountState> {
    return this.states.values()
  }

  /** Locks the accounts (in id order) for the rest of the database transaction. */
  static async open(trx: LedgerExecutor, clock: Clock,
      accountIds: Iterable<string>): Promise<LedgerBatch> {
    const ids = [...new Set(accountIds)].sort()
    const states = new Map<string, AccountState>()
    if (ids.length > 0) {
      type Locked = Pick<AccountState, 'id' | 'partner_id' | 'status' | 'last_sha'>
        & Record<'balance' | 'held' | 'last_seq' | 'last_posted', bigint | string>
      const { rows } = await prepared(sql<Locked>`
        select id, partner_id, status, balance, held, last_seq, last_sha, last_posted from accounts
        where id = any(${arrayParameter('uuid', ids)}::uuid[]) order by id for update`).execute(trx)
      for (const row of rows) {
        states.set(row.id, {
          id: row.id,
          partner_id: row.partner_id,
          status: row.status,
          balance: cents(row.balance),
          held: cents(row.held),
          last_seq: cents(row.last_seq),
          last_sha: row.last_sha,
          last_posted: cents(row.last_posted),
        })
      }
    }
    return new LedgerBatch(trx, states, clock)
  }

  has(accountId: string): boolean {
    return this.states.has(accountId)
  }

  account(accountId: string): AccountState {
    const state = this.states.get(accountId)
    assert(state, `account ${accountId} was not locked by this batch`)
    return state
  }

  available(accountId: string): bigint {
    const a = this.account(accountId)
    return a.balance - a.held
  }

  /** Reserves money for a pending payment; false (and nothing changes) when available is short. */
  tryHold(accountId: string, amount: bigint): boolean {
    assert(amount >= 0n, 'a hold is never negative')
    const a = this.account(accountId)
    if (a.balance - a.held < amount) return false
    a.held += amount
    this.touched.add(accountId)
    return true
  }

  releaseHold(accountId: string, amount: bigint): void {
    const a = this.account(accountId)
    assert(amount >= 0n && a.held >= amount,
      `release of ${amount} exceeds the ${a.held} held on ${accountId}`)
    a.held -= amount
    this.touched.add(accountId)
  }

  /**
   * Posts one journal. Customer debits must be covered by the posted balance less other
   * holds; callers that captured a hold release it first.
   */
  post(entries: JournalEntry[]): string {
    const journalId = newRowId()
    let sum = 0n
    for (const entry of entries) {
      sum += entry.amount
      assert((entry.account === undefined) !== (entry.internal === undefined),
        'a posting names one account')
      if (entry.account) {
        const a = this.account(entry.account)
        a.balance += entry.amount
        assert(a.balance >= a.held, `posting would take ${entry.account} below zero`)
        this.touched.add(entry.account)
      }
      this.newPostings.push({
        journal_id: journalId,
        tx_id: entry.tx_id ?? null,
        account_id: entry.account ?? null,
        internal_account: entry.internal ?? null,
        amount: entry.amount,
        created_at: this.now,
      })
    }
    assert(sum === 0n, `journal postings sum to ${sum}, not zero`)
    return journalId
  }

  /** Appends a transaction to its account's hash chain; returns its id. */
  append(tx: NewTransaction): string {
    const a = this.account(tx.account_id)
    const id = tx.id ?? newRowId()
    a.last_seq += 1n
    let postedOrder: bigint | null = null
    if (tx.posted) {
      a.last_posted += 1n
      postedOrder = a.last_posted
    }
    // One object literal with every column: adding properties to a spread copy instead
    // cost about 17 µs a row (V8 leaves the copy's shape slow), a sixth of a transfer's CPU.
    const row: Insertable<TransactionsTable> & ChainFields = {
      id,
      partner_id: a.partner_id,
      account_id: tx.account_id,
      seq: a.last_seq,
      parent_tx_id: tx.parent_tx_id ?? null,
      created_at: this.now,
      tx_type: tx.tx_type,
      tx_payment_type: tx.tx_payment_type,
      status: tx.status,
      amount: tx.amount,
      fee: tx.fee ?? 0n,
      credit: tx.credit,
      debit: tx.debit,
      hold_amount: tx.hold_amount ?? 0n,
      running_balance: a.balance,
      posted_order: postedOrder,
      ref: tx.ref ?? '',
      own_ref: tx.own_ref ?? '',
      recipient_name: tx.recipient_name ?? '',
      recipient_account: tx.recipient_account ?? '',
      recipient_branch: tx.recipient_branch ?? '',
      user_id: tx.user_id ?? '',
      added_by: tx.added_by,
      status_reason: tx.status_reason ?? null,
      status_at: this.now,
      prev_sha: a.last_sha,
      tx_sha: '',
    }
    const sha = chainHash(a.last_sha, row)
    row.tx_sha = sha
    this.newRows.push(row)
    a.last_sha = sha
    this.touched.add(tx.account_id)
    return id
  }

  /** Records a status change of an existing row; `posted` fixes its running balance now. */
  setStatus(txId: string, accountId: string, change: { status: TxStatus; reason?: string | null;
      posted?: boolean }): void {
    const a = this.account(accountId)
    const entry: StatusChange = { status: change.status, status_reason: change.reason ?? null,
      hold_amount: 0n }
    if (change.posted) {
      a.last_posted += 1n
      entry.posted_order = a.last_posted
      entry.running_balance = a.balance
    }
    this.changes.set(txId, entry)
    this.touched.add(accountId)
  }

  /** Changes the account's status: written with the batch's accounts, under their locks. */
  setAccountStatus(accountId: string, status: AccountState['status']): void {
    this.account(accountId).status = status
    this.touched.add(accountId)
  }

  /**
   * Changes what a Pending row holds, which stays Pending (a card authorization's increment
   * or partial reversal); the caller moves the account's hold by the difference.
   */
  setHold(txId: string, accountId: string, holdAmount: bigint): void {
    assert(holdAmount >= 0n, 'a hold is never negative')
    this.account(accountId)
    this.changes.set(txId, { status: 'Pending', status_reason: null, hold_amount: holdAmount })
    this.touched.add(accountId)
  }

  /**
   * Writes rows, postings, status changes and account states in one statement: each write
   * is a data-modifying WITH query, which PostgreSQL runs exactly once whether or not the
   * statement reads its result. One round trip instead of four is most of a batch's cost
   * on the service and the database alike. (The parts of one statement see the same
   * snapshot, so a status change of a row appended in this same batch is written after
   * the insert, in a statement of its own.)
   *
   * With a guard, its queries run first in the same statement, and the statement fails
   * (GuardFailed) unless its condition holds, which aborts the transaction. With
   * `commit`, the write is the transaction's last statement and its commit is sent with
   * it (prepared.ts); nothing may follow it.
   */
  async flush(callerGuard?: FlushGuard, options: { commit?: boolean } = {}): Promise<void> {
    const appended = new Set(this.newRows.map((row) => row.id))
    const late = [...this.changes.keys()].some((id) => appended.has(id))
    const { parts, counted, states } = this.writeParts(callerGuard, late)
    if (parts.length > 0) {
      const selected = counted.length > 0 ? sql.join(counted) : sql`1 as one`
      const statement = prepared(
        sql<{ s?: number; a?: number }>`with ${sql.join(parts)} select ${selected}`,
      )
      const commitNow = options.commit === true && !(this.changes.size > 0 && late)
      const written = await runGuarded(commitNow ? thenCommit(statement) : statement, this.trx)
      if (this.changes.size > 0 && !late) {
        assert(written.s === this.changes.size, 'every status change found its transaction')
      }
      if (states.length > 0) {
        assert(written.a === states.length, 'every touched account was written')
      }
    }
    if (this.changes.size > 0 && late) {
      const statement = prepared(this.statusChangesStatement())
      const result = await (options.commit ? thenCommit(statement) : statement).execute(this.trx)
      assert(Number(result.numAffectedRows) === this.changes.size,
        'every status change found its transaction')
    }
  }

  /**
   * The WITH queries of the batch's one write (the guard's first), what its select counts
   * (the guard's conditions, the status changes and accounts written), and the accounts'
   * states it writes, each asserted not below zero.
   */
  private writeParts(callerGuard: FlushGuard | undefined, late: boolean) {
    const guard = this.expected ? withFresh(this.expected, callerGuard) : callerGuard
    const parts: RawBuilder<unknown>[] = guard ? [...guard.queries] : []
    const where = guard?.holds ? sql` where ${guard.holds}` : sql``
    const and = guard?.holds ? sql` and ${guard.holds}` : sql``
    if (this.newRows.length > 0) {
      const insert = insertUnnestStatement('transactions', this.newRows, transaction_columns)
      parts.push(sql`t as (${insert}${where})`)
    }
    if (this.newPostings.length > 0) {
      const insert = insertUnnestStatement('postings', this.newPostings, posting_columns)
      parts.push(sql`p as (${insert}${where})`)
    }
    const counted: RawBuilder<unknown>[] = []
    // Stale accounts are told apart from a failed caller's guard: they pause the guessing.
    if (this.expected) counted.push(refuseUnless(freshHolds(this.expected), staleAccounts, 'fresh'))
    if (callerGuard?.holds) counted.push(refuseUnless(callerGuard.holds, guardFailed, 'holds'))
    if (this.changes.size > 0 && !late) {
      parts.push(sql`s as (${this.statusChangesStatement()}${and} returning 1)`)
      counted.push(sql`(select count(*) from s)::int as s`)
    }
    const states = [...this.touched].sort().map((id) => this.account(id))
    for (const a of states) {
      assert(a.held >= 0n && a.balance >= a.held, `account ${a.id} would end below zero`)
    }
    if (states.length > 0) {
      parts.push(sql`a as (${accountsStatement(states)}${and} returning 1)`)
      counted.push(sql`(select count(*) from a)::int as a`)
    }
    return { parts, counted, states }
  }

  private statusChangesStatement(): RawBuilder<unknown> {
    const rows = [...this.changes].map(([id, c]) => ({ id, ...c }))
    return sql`
      update transactions as t set
        status = v.status,
        status_reason = v.status_reason,
        status_at = ${this.now},
        hold_amount = v.hold_amount,
        running_balance = coalesce(v.running_balance, t.running_balance),
        posted_order = coalesce(v.posted_order, t.posted_order)
      from ${unnestRows(rows, [
        ['id', 'uuid'], ['status', 'text'], ['status_reason', 'text'], ['hold_amount', 'bigint'],
        ['running_balance', 'bigint'], ['posted_order', 'bigint'],
      ])}
      where t.id = v.id`
  }
}

/**
 * The check of a batch opened from remembered states, first in its write: lock its accounts
 * in id order (FOR UPDATE waits for a writer and then reads the account as that writer left
 * it) where each is exactly as remembered, its partner too (a sandbox reset moves accounts to
 * another partner: src/sandbox/sandbox-reset.ts). Every write of the statement, and the statement
 * itself, depends on finding them all (freshHolds).
 */
function withFresh(expected: AccountState[], guard: FlushGuard | undefined): FlushGuard {
  const fresh = sql`f as (
    select a.id from accounts as a join ${unnestRows(expected, [
      ['id', 'uuid'], ['balance', 'bigint'], ['held', 'bigint'], ['last_seq', 'bigint'],
        ['last_posted', 'bigint'], ['last_sha', 'text'], ['status', 'text'],
        ['partner_id', 'uuid'],
    ], 'e')} on a.id = e.id
    where a.balance = e.balance and a.held = e.held and a.last_seq = e.last_seq and a.last_posted = e.last_posted and a.last_sha = e.last_sha and a.status = e.status
      and a.partner_id = e.partner_id
    order by a.id for update of a)`
  return {
    queries: guard ? [fresh, ...guard.queries] : [fresh],
    holds: guard?.holds ? sql`${freshHolds(expected)} and ${guard.holds}` : freshHolds(expected),
  }
}

/** A column of the write's select that refuses the statement (`message`) unless `holds`. */
function refuseUnless(holds: RawBuilder<unknown>, message: string, name: string) {
  return sql`(case when ${holds} then true else bank_refuse(${message}) end) as ${sql.ref(name)}`
}

/** Runs a batch's write; a refused guard is GuardFailed (StaleAccounts for remembered ones). */
async function runGuarded(
  statement: { execute(trx: LedgerExecutor): Promise<{ rows: Array<{ s?: number; a?: number }> }> },
  trx: LedgerExecutor,
): Promise<{ s?: number; a?: number }> {
  try {
    return (await statement.execute(trx)).rows[0]!
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown }
    if (e.code === 'P0001' && e.message === guardFailed) throw new GuardFailed()
    if (e.code === 'P0001' && e.message === staleAccounts) throw new StaleAccounts()
    throw error
  }
}

function freshHolds(expected: AccountState[]): RawBuilder<unknown> {
  return sql`(select count(*) from f) = ${expected.length}`
}

function accountsStatement(states: AccountState[]): RawBuilder<unknown> {
  return sql`
    update accounts as a set
      balance = v.balance, held = v.held, last_seq = v.last_seq, last_sha = v.last_sha,
      last_posted = v.last_posted, status = v.status
    from ${unnestRows(states, [
      ['id', 'uuid'], ['balance', 'bigint'], ['held', 'bigint'], ['last_seq', 'bigint'],
        ['last_sha', 'text'], ['last_posted', 'bigint'], ['status', 'text'],
    ])}
    where a.id = v.id`
}
