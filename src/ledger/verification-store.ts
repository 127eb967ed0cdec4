import { sql } from 'kysely'
import type { LedgerDatabase, LedgerExecutor } from './ledger-tables.ts'
import type { TransactionRow } from './ledger-store.ts'
import { cents } from './cents.ts'

// The reads and writes behind `ledger verify` (ledger-verification.ts): sums over postings
// split at a horizon, chain rows in a range of sequence numbers, and the checkpoints a clean
// verify leaves for the next incremental one. Nothing on the payment path uses them.

/** The sums of postings in a range of ids: per customer account, per internal account, all. */
export interface PostingSums {
  accounts: Map<string, bigint>
  internal: Map<string, bigint>
  total: bigint
}

/**
 * The sums of the postings with `above < id <= upTo` (no upper end when `upTo` is null), one
 * scan grouped by account.
 */
export async function postingSums(
  db: LedgerExecutor,
  above: bigint,
  upTo: bigint | null,
): Promise<PostingSums> {
  let query = db
    .selectFrom('postings')
    .select(['account_id', 'internal_account', (eb) => eb.fn.sum<string>('amount').as('total')])
    .where('id', '>', above.toString())
  if (upTo !== null) query = query.where('id', '<=', upTo.toString())
  const rows = await query.groupBy(['account_id', 'internal_account']).execute()
  const sums: PostingSums = { accounts: new Map(), internal: new Map(), total: 0n }
  for (const row of rows) {
    const total = cents(row.total)
    sums.total += total
    if (row.account_id !== null) sums.accounts.set(row.account_id, total)
    else sums.internal.set(row.internal_account!, total)
  }
  return sums
}

/**
 * Journals with a posting above `above` whose postings (all of them) do not sum to zero.
 * With `above` 0 that is every journal, in one grouped scan.
 */
export async function unbalancedJournalsAbove(
  db: LedgerExecutor,
  above: bigint,
): Promise<Array<{ journal_id: string; total: string }>> {
  let query = db
    .selectFrom('postings')
    .select(['journal_id', (eb) => eb.fn.sum<string>('amount').as('total')])
  if (above > 0n) {
    query = query.where('journal_id', 'in', (eb) =>
      eb.selectFrom('postings').select('journal_id').where('id', '>', above.toString()),
    )
  }
  return query
    .groupBy('journal_id')
    .having((eb) => eb.fn.sum('amount'), '<>', 0)
    .execute()
}

/** How many journals have a posting above `above`. */
export async function journalCountAbove(db: LedgerExecutor, above: bigint): Promise<number> {
  const row = await db
    .selectFrom('postings')
    .select((eb) => eb.fn.count<string>('journal_id').distinct().as('n'))
    .where('id', '>', above.toString())
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Up to `limit` of an account's rows with `fromSeq <= seq <= toSeq`, oldest first. */
export async function chainRows(
  db: LedgerExecutor,
  accountId: string,
  fromSeq: bigint,
  toSeq: bigint,
  limit: number,
): Promise<TransactionRow[]> {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('seq', '>=', fromSeq.toString())
    .where('seq', '<=', toSeq.toString())
    .orderBy('seq')
    .limit(limit)
    .execute()
}

/** The highest posting id, and the server's time just after it was read. */
export async function postingsHorizon(
  db: LedgerExecutor,
): Promise<{ horizon: bigint; readAt: string }> {
  const result = await sql<{ horizon: string | bigint; read_at: string }>`
    select coalesce(max(id), 0) as horizon, clock_timestamp()::text as read_at from postings
  `.execute(db)
  const row = result.rows[0]!
  return { horizon: cents(row.horizon), readAt: row.read_at }
}

/**
 * Waits until no other session of this database is inside a transaction that began before
 * `readAt` (pg_stat_activity), for at most `waitMs`; true when none is left. A posting id
 * at or below the horizon was taken before the horizon was read, by a transaction begun
 * before then: once every such transaction has ended, every posting up to the horizon that
 * will ever exist is committed and visible.
 */
export async function earlierTransactionsEnded(
  db: LedgerExecutor,
  readAt: string,
  waitMs: number,
): Promise<boolean> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const result = await sql<{ n: string | number }>`
      select count(*) as n from pg_stat_activity
      where pid <> pg_backend_pid() and datname = current_database()
        and xact_start is not null and xact_start <= ${readAt}::timestamptz
    `.execute(db)
    if (Number(result.rows[0]!.n) === 0) return true
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export interface LedgerCheckpoint {
  postings_horizon: bigint
  internal: Map<string, bigint>
  verified_at: Date
}

export interface AccountCheckpoint {
  account_id: string
  seq: bigint
  tx_sha: string
  posted_order: bigint
  running_balance: bigint
  pending_seq: bigint | null
  postings_sum: bigint
}

/** The ledger's checkpoint, or undefined when no clean verify has written one. */
export async function ledgerCheckpoint(db: LedgerExecutor): Promise<LedgerCheckpoint | undefined> {
  const row = await db.selectFrom('ledger_checkpoint').selectAll().executeTakeFirst()
  if (!row) return undefined
  const internal = new Map(
    Object.entries(row.internal_balances).map(([name, total]) => [name, cents(total)]),
  )
  return {
    postings_horizon: cents(row.postings_horizon),
    internal,
    verified_at: new Date(row.verified_at),
  }
}

/** Every account's checkpoint, by account id. */
export async function accountCheckpoints(
  db: LedgerExecutor,
): Promise<Map<string, AccountCheckpoint>> {
  const rows = await db.selectFrom('ledger_account_checkpoints').selectAll().execute()
  const out = new Map<string, AccountCheckpoint>()
  for (const row of rows) {
    out.set(row.account_id, {
      account_id: row.account_id,
      seq: cents(row.seq),
      tx_sha: row.tx_sha,
      posted_order: cents(row.posted_order),
      running_balance: cents(row.running_balance),
      pending_seq: row.pending_seq === null ? null : cents(row.pending_seq),
      postings_sum: cents(row.postings_sum),
    })
  }
  return out
}

const checkpoint_rows_per_statement = 1000

/** Replaces the checkpoints with a clean verify's, in one transaction. */
export async function writeCheckpoints(
  db: LedgerDatabase,
  ledger: LedgerCheckpoint & { incremental: boolean },
  accounts: readonly AccountCheckpoint[],
): Promise<void> {
  const at = ledger.verified_at
  const internal = Object.fromEntries([...ledger.internal].map(([n, t]) => [n, t.toString()]))
  const row = {
    id: 1,
    postings_horizon: ledger.postings_horizon.toString(),
    internal_balances: JSON.stringify(internal),
    verified_at: at,
    incremental: ledger.incremental,
  }
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('ledger_checkpoint')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, id: undefined }))
      .execute()
    for (let i = 0; i < accounts.length; i += checkpoint_rows_per_statement) {
      const chunk = accounts.slice(i, i + checkpoint_rows_per_statement)
      await upsertAccountCheckpoints(trx, chunk, at)
    }
  })
}

async function upsertAccountCheckpoints(
  trx: LedgerExecutor,
  chunk: readonly AccountCheckpoint[],
  at: Date,
): Promise<void> {
  const values = chunk.map((c) => ({
    account_id: c.account_id,
    seq: c.seq.toString(),
    tx_sha: c.tx_sha,
    posted_order: c.posted_order.toString(),
    running_balance: c.running_balance.toString(),
    pending_seq: c.pending_seq === null ? null : c.pending_seq.toString(),
    postings_sum: c.postings_sum.toString(),
    verified_at: at,
  }))
  await trx
    .insertInto('ledger_account_checkpoints')
    .values(values)
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet((eb) => ({
        seq: eb.ref('excluded.seq'),
        tx_sha: eb.ref('excluded.tx_sha'),
        posted_order: eb.ref('excluded.posted_order'),
        running_balance: eb.ref('excluded.running_balance'),
        pending_seq: eb.ref('excluded.pending_seq'),
        postings_sum: eb.ref('excluded.postings_sum'),
        verified_at: eb.ref('excluded.verified_at'),
      })),
    )
    .execute()
}
