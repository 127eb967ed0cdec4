import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.ts'

// The summary's SQL: aggregates that each read an index, never a whole large table. It reads
// other capabilities' tables (accounts, transactions, postings, jobs) and writes nothing: the
// one place that looks across the bank for the operators' overview.
//
// The ledger's row ids (transactions, journals) are UUIDv7 made from the wall clock
// (ledger/row-id.ts), so "since time t" is a range of the primary key or of the journal index
// from the smallest id of t. The range starts at the earlier of the window's start on the
// bank's clock and on the wall clock (less a few minutes for instances whose clocks differ):
// the bank's clock never runs slower than the wall clock (the sandbox only moves it forward),
// so a row whose created_at is within the window was made within that range. The id range
// is a superset; created_at then filters exactly.

/** The smallest UUIDv7 of the millisecond `at`. */
export function uuidv7Floor(at: number): string {
  const hex = Math.max(0, Math.floor(at)).toString(16).padStart(12, '0').slice(-12)
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
}

/** Wall-clock slack for instances whose clocks differ a little. */
const clock_slack_ms = 5 * 60_000

export async function moneyTotals(db: Kysely<Database>) {
  const row = await sql<{ accounts: string; balance: string | null; held: string | null }>`
    select count(*) as accounts, sum(balance) as balance, sum(held) as held from accounts
  `.execute(db)
  const r = row.rows[0]!
  return {
    accounts: Number(r.accounts),
    balance: BigInt(r.balance ?? 0),
    held: BigInt(r.held ?? 0),
  }
}

/** Pending EFTs and when the oldest was made, through the partial index of pending transactions. */
export async function pendingEfts(db: Kysely<Database>) {
  const row = await sql<{ n: string; amount: string | null; oldest: Date | string | null }>`
    select count(*) as n, sum(amount) as amount, min(created_at) as oldest from transactions
    where status = 'Pending' and tx_payment_type = 'EFT'
  `.execute(db)
  const r = row.rows[0]!
  return { count: Number(r.n), amount: BigInt(r.amount ?? 0),
    oldest: r.oldest === null ? undefined : new Date(r.oldest) }
}

/** The fee income posted since `since` (bank time), through the journal index. */
export async function feeIncomeSince(db: Kysely<Database>, since: Date, wallNow: number) {
  const floor = uuidv7Floor(Math.min(since.getTime(), wallNow) - clock_slack_ms)
  const row = await sql<{ total: string | null }>`
    select sum(amount) as total from postings
    where journal_id >= ${floor}::uuid and internal_account = 'fee_income' and created_at >= ${since}
  `.execute(db)
  return BigInt(row.rows[0]!.total ?? 0)
}

/** Transactions (not fees) in each minute of [start, start + minutes), through the primary key. */
export async function paymentsPerMinute(
  db: Kysely<Database>,
  start: Date,
  minutes: number,
  wallNow: number,
): Promise<number[]> {
  const end = new Date(start.getTime() + minutes * 60_000)
  const earliest = Math.min(start.getTime(), wallNow - minutes * 60_000)
  const floor = uuidv7Floor(earliest - clock_slack_ms)
  const rows = await sql<{ minute: number; n: string }>`
    select floor(extract(epoch from (created_at - ${start}::timestamptz)) / 60)::int as minute,
           count(*) as n
    from transactions
    where id >= ${floor}::uuid and created_at >= ${start} and created_at < ${end}
      and tx_type <> 'fee'
    group by 1
  `.execute(db)
  const buckets = new Array<number>(minutes).fill(0)
  for (const r of rows.rows)
    if (r.minute >= 0 && r.minute < minutes) buckets[r.minute] = Number(r.n)
  return buckets
}

/** The job queue: counts by live state (the state index), overdue and recently done. */
export async function jobHealth(db: Kysely<Database>, now: Date) {
  const overdueBefore = new Date(now.getTime() - 5 * 60_000)
  const hourAgo = new Date(now.getTime() - 3_600_000)
  const row = await sql<Record<'queued' | 'running' | 'dead' | 'overdue' | 'done', string>>`
    select
      (select count(*) from jobs where state = 'queued') as queued,
      (select count(*) from jobs where state = 'running') as running,
      (select count(*) from jobs where state = 'dead') as dead,
      (select count(*) from jobs where state = 'queued' and due_at < ${overdueBefore}) as overdue,
      (select count(*) from jobs where state = 'done' and updated_at >= ${hourAgo}) as done
  `.execute(db)
  const r = row.rows[0]!
  return {
    queued: Number(r.queued),
    running: Number(r.running),
    dead: Number(r.dead),
    overdue: Number(r.overdue),
    done_last_hour: Number(r.done),
  }
}

/** The newest clearing cycle that ran or runs (the clearing jobs, newest first). */
export async function lastClearingRun(db: Kysely<Database>) {
  const row = await sql<{ key: string; state: string; finished_at: Date | null }>`
    select key, state, finished_at from jobs
    where kind = 'clearing.cycle' and state in ('running', 'done', 'dead')
    order by updated_at desc limit 1
  `.execute(db)
  return row.rows[0]
}

/** The newest clearing cycle that ended (done or dead), with its report (`result`) when done. */
export async function lastEndedClearingRun(db: Kysely<Database>) {
  const row = await sql<{ state: string; ended_at: Date | string;
      result: Record<string, unknown> | string | null }>`
    select state, coalesce(finished_at, updated_at) as ended_at, result from jobs
    where kind = 'clearing.cycle' and state in ('done', 'dead')
    order by updated_at desc limit 1
  `.execute(db)
  const r = row.rows[0]
  if (!r) return undefined
  const result = typeof r.result === 'string' ? JSON.parse(r.result) as Record<string, unknown>
    : r.result
  return { state: r.state, ended_at: new Date(r.ended_at), result }
}

/** Review queues: their lengths and oldest items, through their state indexes. */
export async function reviewQueues(db: Kysely<Database>) {
  const row = await sql<Record<'kyc' | 'kyb' | 'approvals', string> &
      Record<'kyc_oldest' | 'kyb_oldest' | 'approvals_oldest', Date | string | null>>`
    select
      (select count(*) from kyc_submissions
        where owner_kind = 'user' and state = 'pending') as kyc,
      (select min(submitted_at) from kyc_submissions
        where owner_kind = 'user' and state = 'pending') as kyc_oldest,
      (select count(*) from kyc_submissions
        where owner_kind = 'entity' and state = 'pending') as kyb,
      (select min(submitted_at) from kyc_submissions
        where owner_kind = 'entity' and state = 'pending') as kyb_oldest,
      (select count(*) from approvals where state = 'pending_approval') as approvals,
      (select min(requested_at) from approvals where state = 'pending_approval') as approvals_oldest
  `.execute(db)
  const r = row.rows[0]!
  const queue = (n: string, oldest: Date | string | null) => ({ count: Number(n),
    oldest: oldest === null ? undefined : new Date(oldest) })
  return { kyc: queue(r.kyc, r.kyc_oldest), kyb: queue(r.kyb, r.kyb_oldest),
    approvals: queue(r.approvals, r.approvals_oldest) }
}
