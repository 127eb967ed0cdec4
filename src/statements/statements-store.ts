import { sql, type Kysely } from 'kysely'
import { cents } from '../ledger/cents.ts'
import type { Database } from '../schema.ts'
import type { AccountStatementsTable, StatementTotals } from './statements-tables.ts'

// The statements' SQL. It reads the ledger's rows of one account (transactions and their
// postings: a read model, declared in statements-module.ts) and writes only its own table.
//
// When a row was posted is when its posting on the account was written (postings.created_at):
// a transaction's own times do not say it (status_at moves again when a posted payment is
// later reversed). The account's posted rows are numbered without gaps (posted_order), and a
// range of days is a range of those numbers: from just after the last row posted before the
// first day began to the last row posted before the day after the last day began. The lines
// are therefore always consecutive rows of the ledger, and the opening balance, the lines and
// the closing balance are the ledger's own running balances.
//
// The ledger has no index on when a row was posted, and adding one to its hottest table would
// cost every payment: the reads go through the postings' account index and the transactions'
// primary key, so they cost what the account's postings up to the range's end cost.

type Db = Kysely<Database>

/** Where a range of days lies in an account's posted rows. */
export interface PostedRange {
  /** The last row posted before the range (0: none). */
  before: bigint
  /** The last row posted by the range's end (0: none). */
  last: bigint
}

/** The account's posted rows (posted_order) before `fromAt` and before `toAt`. */
export async function postedRange(db: Db, accountId: string, fromAt: Date,
    toAt: Date): Promise<PostedRange> {
  const { rows } = await sql<{ before: string | null; last: string | null }>`
    select max(case when p.created_at < ${fromAt} then t.posted_order end)::text as before,
      max(t.posted_order)::text as last
    from postings p join transactions t on t.id = p.tx_id
    where p.account_id = ${accountId} and p.created_at < ${toAt}
      and t.account_id = ${accountId} and t.posted_order is not null
  `.execute(db)
  const row = rows[0]
  return { before: cents(row?.before ?? 0), last: cents(row?.last ?? 0) }
}

/** The running balance after the account's posted row `order` (0 before its first). */
export async function runningBalanceAt(db: Db, accountId: string,
    order: bigint): Promise<bigint> {
  if (order === 0n) return 0n
  const row = await db.selectFrom('transactions').select('running_balance')
    .where('account_id', '=', accountId).where('posted_order', '=', order.toString())
    .executeTakeFirst()
  if (!row) throw new Error(`account ${accountId} has no posted row ${order}`)
  return cents(row.running_balance)
}

/** A posted row of the account, as a statement line is made from it. */
export interface PostedRow {
  id: string
  posted_order: bigint
  posted_at: Date
  tx_type: string
  tx_payment_type: string
  ref: string
  own_ref: string
  recipient_name: string
  credit: bigint
  debit: bigint
  fee: bigint
  running_balance: bigint
}

/** How many of the account's rows are posted in (before, last]. */
export function postedCount(range: PostedRange): number {
  return Number(range.last - range.before)
}

/**
 * The account's posted rows in (before, last], in posting order, each with its posting time. A
 * row posted with nothing moved (a bulk batch's payment, whose money left with the batch's
 * funding) has no posting: its time is when it was marked posted (status_at).
 */
export async function postedRows(db: Db, accountId: string,
    range: PostedRange): Promise<PostedRow[]> {
  if (range.last <= range.before) return []
  const { rows } = await sql<Record<string, unknown>>`
    select distinct on (t.posted_order) t.id, t.posted_order::text as posted_order,
      coalesce(p.created_at, t.status_at, t.created_at) as posted_at, t.tx_type,
      t.tx_payment_type, t.ref, t.own_ref, t.recipient_name, t.credit::text as credit,
      t.debit::text as debit, t.fee::text as fee, t.running_balance::text as running_balance
    from transactions t left join postings p on p.tx_id = t.id and p.account_id = ${accountId}
    where t.account_id = ${accountId}
      and t.posted_order > ${range.before.toString()} and t.posted_order <= ${range.last.toString()}
    order by t.posted_order, p.id
  `.execute(db)
  return rows.map((r) => ({
    id: String(r.id), posted_order: cents(r.posted_order as string),
    posted_at: new Date(r.posted_at as string | Date), tx_type: String(r.tx_type),
    tx_payment_type: String(r.tx_payment_type), ref: String(r.ref), own_ref: String(r.own_ref),
    recipient_name: String(r.recipient_name), credit: cents(r.credit as string),
    debit: cents(r.debit as string), fee: cents(r.fee as string),
    running_balance: cents(r.running_balance as string),
  }))
}

/**
 * What the account's payments held at `toAt`: every payout, bulk payment and card
 * authorization taken before it that was still Pending then (not yet posted, failed or
 * cancelled), at what it holds while Pending. A row still Pending holds its hold_amount; a
 * row settled since held its amount and fee (a card authorization, its amount), which the
 * ledger no longer keeps on the row once its hold is released. `lastPosted` is the last row
 * posted before `toAt` (postedRange): a row posted after it was still held at `toAt`. The
 * legal holds placed before `toAt` and not released by then are held too.
 */
export async function heldAt(db: Db, accountId: string, toAt: Date,
    lastPosted: bigint): Promise<bigint> {
  const { rows } = await sql<{ held: string | null }>`
    select sum(case when status = 'Pending' then hold_amount
      when tx_type = 'card' then amount else amount + fee end)::text as held
    from transactions
    where account_id = ${accountId} and created_at < ${toAt}
      and tx_type in ('transfer', 'bulk_payment', 'card')
      and tx_payment_type in ('EFT', 'RTC', 'CARD')
      and (status = 'Pending'
        or (posted_order is null and status_at >= ${toAt})
        or posted_order > ${lastPosted.toString()})
  `.execute(db)
  const legal = await sql<{ held: string | null }>`
    select sum(amount)::text as held from legal_holds
    where account_id = ${accountId} and placed_at < ${toAt}
      and (released_at is null or released_at >= ${toAt})
  `.execute(db)
  return cents(rows[0]?.held ?? 0) + cents(legal.rows[0]?.held ?? 0)
}

/** The accounts with a posting in [fromAt, toAt), with their partners, from `after` on. */
export async function activeAccounts(db: Db, fromAt: Date, toAt: Date, after: string,
    limit: number): Promise<Array<{ account_id: string; partner_id: string }>> {
  const { rows } = await sql<{ account_id: string; partner_id: string }>`
    select a.id as account_id, a.partner_id from accounts a
    where a.id > ${after} and exists (select 1 from postings p where p.account_id = a.id
      and p.created_at >= ${fromAt} and p.created_at < ${toAt})
    order by a.id limit ${limit}
  `.execute(db)
  return rows
}

export type StatementRow = Omit<AccountStatementsTable, 'totals' | 'content'> & {
  totals: StatementTotals | null
}

const columns = ['id', 'partner_id', 'account_id', 'format', 'from_date', 'to_date', 'origin',
  'state', 'file_name', 'content_type', 'size', 'sha256', 'totals', 'created_at',
  'ready_at'] as const

/** A stored statement of the partner's (without its bytes), or undefined. */
export async function statementOf(db: Db, id: string,
    partnerId?: string): Promise<StatementRow | undefined> {
  let query = db.selectFrom('account_statements').select(columns).where('id', '=', id)
  if (partnerId !== undefined) query = query.where('partner_id', '=', partnerId)
  return (await query.executeTakeFirst()) as StatementRow | undefined
}

/** Part of a stored statement's bytes. */
export async function statementBytes(db: Db, id: string, offset: number,
    length: number): Promise<Uint8Array> {
  // substring on bytea is 1-based; only the asked part leaves the database.
  const row = await db.selectFrom('account_statements')
    .select(sql<Uint8Array | null>`substring(content from ${offset + 1} for ${length})`.as('part'))
    .where('id', '=', id).executeTakeFirst()
  return row?.part ?? new Uint8Array()
}

/** How many of the partner's statements wait to be made. */
export async function queuedCount(db: Db, partnerId: string): Promise<number> {
  const row = await db.selectFrom('account_statements')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('partner_id', '=', partnerId).where('state', '=', 'queued').executeTakeFirst()
  return Number(row?.n ?? 0)
}

export interface NewStatement {
  id: string
  partner_id: string
  account_id: string
  format: 'pdf' | 'camt053'
  from_date: string
  to_date: string
  origin: 'request' | 'monthly'
  file_name: string
  content_type: string
  created_at: Date
}

/** Adds a queued statement; false when the month's statement of that format exists already. */
export async function insertStatement(db: Db, row: NewStatement): Promise<boolean> {
  const result = await db.insertInto('account_statements').values({ ...row, state: 'queued' })
    .onConflict((oc) => oc.columns(['account_id', 'format', 'from_date'])
      .where('origin', '=', 'monthly').doNothing())
    .returning('id').executeTakeFirst()
  return result !== undefined
}

/** Stores a statement's file and totals: it is ready. */
export async function storeStatement(db: Db, id: string, file: { content: Uint8Array;
    sha256: string; totals: StatementTotals; readyAt: Date }): Promise<void> {
  await db.updateTable('account_statements').set({
    state: 'ready', content: file.content, size: file.content.length, sha256: file.sha256,
    totals: JSON.stringify(file.totals), ready_at: file.readyAt,
  }).where('id', '=', id).execute()
}
