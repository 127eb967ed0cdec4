import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../schema.ts'

// What the sweep reads of the ledger, and how it knows it missed nothing.
//
// Postings are read by id (their primary key) after the sweep's place. An id is taken when
// a posting is written, not when its transaction commits, so a posting with a low id may
// become visible after one with a higher id was read. Each read is one statement, and the
// statement's snapshot (pg_current_snapshot()) says which transactions were still in progress
// when it was read. When there were none, every posting up to the highest id visible is final
// and the place moves past them for good. Otherwise the range read is remembered
// (`monitoring_open_ranges`) with those transactions and the ids it saw; a later batch whose
// snapshot shows all of them finished reads the range once more and takes the ids it had not
// seen (the postings those transactions committed), then forgets it. This holds because a
// transaction that writes postings has its transaction id before it takes a posting id: the
// ledger locks its accounts' rows (`for update`) before it writes, which gives the
// transaction its id, so a posting id below the highest visible one belongs to a transaction
// committed or listed in progress. (An overlap of a fixed number of ids before the place,
// which this replaces, missed postings when more than that many committed during one long
// transaction, and re-read the overlap on every batch.)
//
// Payouts (EFT, RTC) are evaluated while Pending, from the ledger's index of Pending rows, and
// claimed (`monitoring_evaluated`); the claim is taken (deleted) when the payout's posting is
// read, so the settled payout is not evaluated twice, and pruned once the payout can no longer
// be found Pending.

/** Movements (transaction ids) the postings after the place name; `more`: a full read. */
export interface PostingsRead {
  txIds: string[]
  more: boolean
}

interface SnapshotRead {
  xip: string[] | null
  hi: string | null
  rows: Array<{ id: string; tx_id: string }> | null
}

/**
 * The customer postings after the sweep's place (at most `limit`), and those of remembered
 * ranges whose transactions have all finished since; moves the place and remembers this
 * read's range when transactions were in progress. Claimed payouts are left out (and their
 * claims taken).
 */
export async function readPostings(trx: Transaction<Database>,
    limit: number): Promise<PostingsRead> {
  const cursor = await trx.selectFrom('monitoring_cursor').select('postings_id')
    .where('id', '=', 1).executeTakeFirstOrThrow()
  const lo = String(cursor.postings_id)
  // One statement: the snapshot it reports is the one its postings were read under.
  const { rows: [read] } = await sql<SnapshotRead>`
    select
      (select array_agg(x::text) from pg_snapshot_xip(pg_current_snapshot()) as x) as xip,
      (select max(id)::text from postings) as hi,
      (select json_agg(json_build_object('id', p.id::text, 'tx_id', p.tx_id) order by p.id)
        from (select id, tx_id from postings
          where id > ${lo} and account_id is not null and tx_id is not null
          order by id limit ${limit}) as p) as rows`.execute(trx)
  const rows = read!.rows ?? []
  const xip = read!.xip ?? []
  const more = rows.length === limit
  const place = more ? rows.at(-1)!.id : (read!.hi ?? lo)
  const late = await finishedRanges(trx, xip)
  if (BigInt(place) > BigInt(lo)) {
    await trx.updateTable('monitoring_cursor').set({ postings_id: place })
      .where('id', '=', 1).execute()
    if (xip.length > 0) {
      await rememberRange(trx, { hi: place, lo, xids: xip, seen: rows.map((r) => r.id) })
    }
  }
  const txIds = [...new Set([...rows, ...late].map((r) => r.tx_id))]
  return { txIds: await unclaimed(trx, txIds), more }
}

/**
 * Remembers a range read while transactions were in progress. The same end was remembered
 * before only when the place was moved back (an operator reading the ledger again): the two
 * reads are merged, what either saw was evaluated.
 */
async function rememberRange(trx: Transaction<Database>,
    range: { hi: string; lo: string; xids: string[]; seen: string[] }): Promise<void> {
  await trx.insertInto('monitoring_open_ranges').values(range)
    .onConflict((oc) => oc.column('hi').doUpdateSet({
      lo: sql`least(monitoring_open_ranges.lo, excluded.lo)`,
      xids: sql`array(select distinct unnest(monitoring_open_ranges.xids || excluded.xids))`,
      seen: sql`array(select distinct unnest(monitoring_open_ranges.seen || excluded.seen))`,
    })).execute()
}

/**
 * The postings of remembered ranges none of whose transactions is still in progress (`xip`:
 * those in progress now) that the range's read did not see; the ranges are forgotten.
 */
async function finishedRanges(trx: Transaction<Database>,
    xip: string[]): Promise<Array<{ id: string; tx_id: string }>> {
  const { rows } = await sql<{ id: string; tx_id: string }>`
    with done as (delete from monitoring_open_ranges
      where not (xids && ${sql.val(xip)}::bigint[]) returning lo, hi, seen)
    select p.id::text as id, p.tx_id from done as r
    join postings as p on p.id > r.lo and p.id <= r.hi
    where p.account_id is not null and p.tx_id is not null and p.id <> all(r.seen)
    order by p.id`.execute(trx)
  return rows
}

/** The movements of `txIds` not claimed as evaluated while Pending; the claims are taken. */
async function unclaimed(trx: Transaction<Database>, txIds: string[]): Promise<string[]> {
  if (txIds.length === 0) return []
  const taken = await trx.deleteFrom('monitoring_evaluated').where('tx_id', 'in', txIds)
    .returning('tx_id').execute()
  const claimed = new Set(taken.map((row) => row.tx_id))
  return txIds.filter((id) => !claimed.has(id))
}

/**
 * Payouts (EFT, RTC) Pending since `since` (bank time) and not claimed yet, at most `limit`:
 * read once per sweep, not per batch, since every Pending row of the window is looked at.
 */
export async function pendingPayouts(db: Kysely<Database>, since: Date,
    limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select t.id from transactions as t
    where t.status = 'Pending' and t.tx_payment_type in ('EFT', 'RTC')
      and t.created_at >= ${since}
      and not exists (select 1 from monitoring_evaluated as e where e.tx_id = t.id)
    order by t.created_at, t.seq limit ${limit}`.execute(db)
  return rows.map((row) => row.id)
}

/** Claims payouts as evaluated while Pending; answers those no sweep had claimed before. */
export async function claimPending(trx: Transaction<Database>, ids: string[],
    now: Date): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await trx.insertInto('monitoring_evaluated')
    .values(ids.map((tx_id) => ({ tx_id, evaluated_at: now })))
    .onConflict((oc) => oc.column('tx_id').doNothing())
    .returning('tx_id').execute()
  return rows.map((row) => row.tx_id)
}

/**
 * Forgets the claims no sweep can need: claimed before `since` (bank time), of payouts no
 * longer Pending within the window (settled, failed, or older than the window).
 */
export async function pruneClaims(db: Kysely<Database>, since: Date): Promise<number> {
  const { numAffectedRows } = await sql`
    delete from monitoring_evaluated as e where e.evaluated_at < ${since}
      and not exists (select 1 from transactions as t where t.id = e.tx_id
        and t.status = 'Pending' and t.created_at >= ${since})`.execute(db)
  return Number(numAffectedRows ?? 0)
}
