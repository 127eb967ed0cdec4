import { randomUUID } from 'node:crypto'
import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'
import { assert, InsufficientFunds, InvalidState, NotFound } from '../errors.ts'
import { cents } from './cents.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import type { LedgerExecutor } from './ledger-tables.ts'
export type { LegalHoldsTable, LegalHoldTables } from './legal-hold-tables.ts'

// Legal holds (RULINGS "Account lifecycle"): an amount of an account the bank keeps from its
// customer on an order (a garnishee order, a court's preservation order) until an operator
// releases it or it expires. The ledger keeps it as it keeps a pending payment's hold: in the
// account's `held`, so the available balance (balance − held) drops by it and every debit, on
// every path, sees it under the account's lock. No money moves: the balance and the postings
// stay as they were. A hold is placed only on money the account has available (held never
// exceeds the balance); `ledger verify` checks that an account's held is what its Pending rows
// and its active holds hold together. Each hold is a row here, written with the `held` change
// in the same transaction (place, release).

export const legalHoldsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table legal_holds (
        id uuid primary key,
        account_id uuid not null references accounts (id),
        partner_id uuid not null,
        amount bigint not null check (amount > 0),
        reference text not null,
        expires_at timestamptz,
        placed_at timestamptz not null,
        placed_by text not null,
        released_at timestamptz,
        released_by text,
        release_reason text
      );
      create index legal_holds_account on legal_holds (account_id, placed_at);
      create index legal_holds_expiring on legal_holds (expires_at) where released_at is null;
    `)
  },
}

/** A hold as read: its amount in cents, its times as dates. */
export interface LegalHoldRow {
  id: string
  account_id: string
  partner_id: string
  amount: bigint
  reference: string
  expires_at: Date | null
  placed_at: Date
  placed_by: string
  released_at: Date | null
  released_by: string | null
  release_reason: string | null
}

type Db = LedgerExecutor

/** Places a hold of `amount` on the account: its available balance must cover it. */
export const legalHoldPlace: JournalKind<{ accountId: string; amount: bigint }, void> = {
  name: 'account.hold_place',
  accountsOf: (h) => [h.accountId],
  record(journal: Journal, h) {
    if (!journal.has(h.accountId)) throw new NotFound('account')
    if (journal.account(h.accountId).status === 'closed') {
      throw InvalidState.field('account_id', 'the account is closed')
    }
    const available = journal.available(h.accountId)
    if (!journal.tryHold(h.accountId, h.amount)) {
      throw new InsufficientFunds('amount', `the account has ${available} cents available; ` +
        'a hold is placed only on money the account has (place a hold of what is available, ' +
        'and another once more arrives)', 422)
    }
  },
}

/**
 * Places a hold of up to `amount` on the account, as much of it as its available balance
 * covers (a credit held for a sanctions screening review, part of which may have gone to a
 * debt of its partner): answers the amount held, 0 when none is available.
 */
export const legalHoldPlaceAvailable: JournalKind<{ accountId: string; amount: bigint },
    bigint> = {
  name: 'account.hold_place_available',
  accountsOf: (h) => [h.accountId],
  record(journal: Journal, h) {
    const available = journal.available(h.accountId)
    const amount = available < h.amount ? available : h.amount
    if (amount <= 0n) return 0n
    assert(journal.tryHold(h.accountId, amount), 'an available amount is held')
    return amount
  },
}

/** Releases a hold's amount from the account's held money. */
export const legalHoldRelease: JournalKind<{ accountId: string; amount: bigint }, void> = {
  name: 'account.hold_release',
  accountsOf: (h) => [h.accountId],
  record(journal: Journal, h) {
    journal.releaseHold(h.accountId, h.amount)
  },
}

/** The rows of legal holds: written by the capability beside the writer's `held` change. */
export const legalHoldRows = {
  async insert(trx: Db, hold: { account_id: string; partner_id: string; amount: bigint;
      reference: string; expires_at: Date | null; placed_by: string; now: Date }):
      Promise<LegalHoldRow> {
    const row = {
      id: randomUUID(), account_id: hold.account_id, partner_id: hold.partner_id,
      amount: hold.amount, reference: hold.reference, expires_at: hold.expires_at,
      placed_at: hold.now, placed_by: hold.placed_by, released_at: null, released_by: null,
      release_reason: null,
    }
    await trx.insertInto('legal_holds').values(row).execute()
    return row
  },

  /** The hold, locked; undefined when there is none. */
  async lock(trx: Db, holdId: string): Promise<LegalHoldRow | undefined> {
    const row = await trx.selectFrom('legal_holds').selectAll().where('id', '=', holdId)
      .forUpdate().executeTakeFirst()
    return row && withCents(row)
  },

  async release(trx: Db, holdId: string, by: string, reason: string,
      now: Date): Promise<LegalHoldRow> {
    const row = await trx.updateTable('legal_holds')
      .set({ released_at: now, released_by: by, release_reason: reason })
      .where('id', '=', holdId).where('released_at', 'is', null).returningAll()
      .executeTakeFirst()
    assert(row, `hold ${holdId} was released already`)
    return withCents(row)
  },

  /** The account's holds still holding with this reference, locked. */
  async lockReferenced(trx: Db, accountId: string,
      reference: string): Promise<LegalHoldRow[]> {
    const rows = await trx.selectFrom('legal_holds').selectAll()
      .where('account_id', '=', accountId).where('reference', '=', reference)
      .where('released_at', 'is', null).orderBy('id').forUpdate().execute()
    return rows.map(withCents)
  },

  /** The account's holds, newest first: only those still holding unless `all`. */
  async ofAccount(db: Db, accountId: string, all = false): Promise<LegalHoldRow[]> {
    let query = db.selectFrom('legal_holds').selectAll().where('account_id', '=', accountId)
    if (!all) query = query.where('released_at', 'is', null)
    const rows = await query.orderBy('placed_at', 'desc').orderBy('id').execute()
    return rows.map(withCents)
  },

  /** Holds past their expiry and still holding, oldest first. */
  async expired(db: Db, now: Date, limit: number): Promise<LegalHoldRow[]> {
    const rows = await db.selectFrom('legal_holds').selectAll().where('released_at', 'is', null)
      .where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()
    return rows.map(withCents)
  },

  /** What each account's active holds hold together (`ledger verify`). */
  async heldByAccount(db: Db): Promise<Map<string, bigint>> {
    const rows = await db.selectFrom('legal_holds')
      .select((eb) => ['account_id', eb.fn.sum<string>('amount').as('held')])
      .where('released_at', 'is', null).groupBy('account_id').execute()
    return new Map(rows.map((r) => [r.account_id, cents(r.held)]))
  },
}

function withCents(row: { amount: bigint | string; expires_at: Date | null; placed_at: Date;
    released_at: Date | null } & Omit<LegalHoldRow, 'amount' | 'expires_at' | 'placed_at'
    | 'released_at'>): LegalHoldRow {
  const at = (value: Date | string | null) => value === null ? null : new Date(value)
  return { ...row, amount: cents(row.amount), expires_at: at(row.expires_at),
    placed_at: new Date(row.placed_at), released_at: at(row.released_at) }
}
