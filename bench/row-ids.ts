// `node --import tsx bench/row-ids.ts`: what UUIDv7 row ids (src/ledger/row-id.ts) change in
// PostgreSQL against v4 (crypto.randomUUID, the ledger's ids before), never part of `npm
// test`. In a database of its own (bank_rowids_<hex>, created from the admin database and
// dropped at the end, also on error or Ctrl-C) it builds a table shaped like the ledger's
// transactions (a uuid primary key, unique (account_id, seq), a partial index on
// parent_tx_id) once per round, alternating the id kinds (v4, v7, v4, v7, ...) so that a
// change in the machine's speed shows as a difference between rounds of one kind:
//
//   1. preload: ROWIDS_PRELOAD rows in big `insert ... select * from unnest(...)` statements,
//      as history made one row per millisecond up to now; accounts drawn at random from
//      ROWIDS_ACCOUNTS (random v4 ids, as the ledger's accounts have), seq counting per
//      account; every second row a fee, whose parent_tx_id is the row before;
//   2. CHECKPOINT, so that each round starts alike: every page's first change after it
//      goes to the WAL as a full-page image (FPI), as in the minutes after any checkpoint;
//   3. the timed part: ROWIDS_BATCHES batches of 50 rows (25 payments and their fees), each
//      one `insert ... select * from unnest(...)` in its own transaction (synchronous_commit
//      on, so a WAL flush per batch), ids made at the time of the batch.
//
// For each round it reports, over the timed part: rows/s; the PostgreSQL backend's CPU
// (utime + stime from /proc/<pid>/stat, so PostgreSQL must run on this machine) in seconds
// and µs per row; the WAL written: the whole server's (the pg_current_wal_lsn difference,
// which counts other databases' work too, such as a test run's CREATE DATABASE) and this
// database's alone (its records, and their full-page images, read back with pg_walinspect,
// a contrib extension; '-' without it); and at the end of the round, the size of each index
// (pg_relation_size). The preload's duration is shown too: it is v4 against v7 at bulk.
//
// Settings (environment): ROWIDS_PRELOAD (2000000), ROWIDS_BATCHES (2000), ROWIDS_ROUNDS (2:
// v4, v7, v4, v7), ROWIDS_ACCOUNTS (10000), ROWIDS_DATABASE_URL (admin connection; default
// postgres://postgres@127.0.0.1:5432/postgres). About 3.5 minutes with the defaults on 2 cores.
import { randomBytes, randomUUID } from 'node:crypto'
import pg from 'pg'
import { newRowId } from '../src/ledger/row-id.ts'
import { procTicks } from './meter.ts'

const adminUrl = process.env.ROWIDS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const preload_rows = whole('ROWIDS_PRELOAD', 2_000_000)
const batches = whole('ROWIDS_BATCHES', 2_000)
const rounds = whole('ROWIDS_ROUNDS', 2)
const accounts_count = Math.max(1, whole('ROWIDS_ACCOUNTS', 10_000))
const batch_rows = 50
const preload_batch_rows = 50_000
const ticks_per_s = 100

type Kind = 'v4' | 'v7'
const kinds: Record<Kind, (now: number) => string> = {
  v4: () => randomUUID(),
  v7: (now) => newRowId(now),
}

interface Round {
  round: number
  kind: Kind
  rows_per_s: number
  cpu_s: number
  cpu_us_per_row: number
  /** The whole server's WAL over the timed part. */
  wal_bytes: number
  /**
   * This database's WAL records over the timed part (pg_walinspect), and the full-page images in
   * them.
   */
  own?: { bytes: number; fpi: number }
  index_bytes: Record<string, number>
  preload_s: number
}

const insert = `
  insert into t (id, account_id, seq, parent_tx_id, created_at, status, amount, tx_sha)
  select * from unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::uuid[], $5::timestamptz[], $6::text[], $7::bigint[], $8::text[])`

let interrupted = false
process.once('SIGINT', () => {
  interrupted = true
  process.stderr.write('\ninterrupted: stopping and dropping the database\n')
})

async function main(): Promise<void> {
  const dbName = `bank_rowids_${randomBytes(4).toString('hex')}`
  await admin(`create database ${dbName}`)
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  const db = new pg.Client({ connectionString: dbUrl.toString() })
  try {
    await db.connect()
    const pid = Number((await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid)
    const dbOid = Number((await db.query<{ oid: number }>('select oid from pg_database where datname = current_database()')).rows[0]!.oid)
    const walinspect = await db.query('create extension pg_walinspect').then(
      () => true,
      (error: Error) => (
        process.stderr.write(
        `pg_walinspect unavailable (${error.message}): no WAL figures of this database alone\n`),
        false),
    )
    if (procTicks(pid) === undefined) throw new Error(
      `cannot read /proc/${pid}/stat: PostgreSQL must run on this machine`)
    const results: Round[] = []
    const accounts = Array.from({ length: accounts_count }, () => randomUUID())
    process.stdout.write(
      `row ids: ${preload_rows.toLocaleString('en')} rows preloaded, ` +
        `then ${batches.toLocaleString('en')} batches of ${batch_rows} timed, ` +
        `${accounts_count.toLocaleString('en')} accounts, ${rounds} round(s) of v4 and v7, ` +
          `database ${dbName}\n`,
    )
    for (let round = 1; round <= rounds; round++) {
      for (const kind of ['v4', 'v7'] as const) {
        results.push(await measure(db, pid, walinspect ? dbOid : undefined, round, kind, accounts))
      }
    }
    printTable(results)
  } finally {
    await db.end().catch(() => {})
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

/**
 * One round of one kind of id, in a new table t. dbOid: this database's, when pg_walinspect is
 * there.
 */
async function measure(db: pg.Client, pid: number, dbOid: number | undefined, round: number,
    kind: Kind, accounts: string[]): Promise<Round> {
  await createTable(db)
  const rows = rowMaker(kind, accounts)
  const preload_s = await preload(db, rows)
  const { before, after, elapsed_s } = await timedInserts(db, pid, `insert-${round}-${kind}`, rows)
  const index_bytes = await indexSizes(db)

  const timed_rows = batches * batch_rows
  const cpu_s = (after.ticks - before.ticks) / ticks_per_s
  const wal_bytes = Number((await db.query<{ d: string }>('select pg_wal_lsn_diff($1, $2) as d', [after.lsn, before.lsn])).rows[0]!.d)
  const result: Round = {
    round,
    kind,
    rows_per_s: timed_rows / elapsed_s,
    cpu_s,
    cpu_us_per_row: (cpu_s * 1e6) / timed_rows,
    wal_bytes,
    own: dbOid === undefined ? undefined : await ownWal(db, dbOid, before.lsn, after.lsn),
    index_bytes,
    preload_s,
  }
  process.stdout.write(
    `  round ${round} ${kind}: preload ${preload_s.toFixed(1)} s, timed ` +
      `part ${elapsed_s.toFixed(1)} s, ` +
      `${Math.round(result.rows_per_s).toLocaleString('en')} rows/s\n`,
  )
  return result
}

/** The table t the round writes, with the ledger's indexes. */
async function createTable(db: pg.Client) {
  await db.query('drop table if exists t')
  await db.query(`
    create table t (
      id uuid primary key,
      account_id uuid not null,
      seq bigint not null,
      parent_tx_id uuid,
      created_at timestamptz not null,
      status text not null,
      amount bigint not null,
      tx_sha text not null,
      unique (account_id, seq)
    )`)
  await db.query('create index on t (parent_tx_id) where parent_tx_id is not null')
}

type Rows = (count: number, timeOf: (i: number) => number) => unknown[]

/** What makes the rows of a round: `kind` ids, each account's seq counted on. */
function rowMaker(kind: Kind, accounts: string[]): Rows {
  const makeId = kinds[kind]
  const seqs = new Array<number>(accounts.length).fill(0)
  /** `count` rows (even), in pairs of a payment and its fee on one account, made at timeOf(i). */
  return (count: number, timeOf: (i: number) => number) => {
    const ids: string[] = []
    const accountIds: string[] = []
    const seq: number[] = []
    const parents: (string | null)[] = []
    const created: string[] = []
    const status: string[] = []
    const amount: number[] = []
    const sha = randomBytes(32 * count).toString('hex')
    const txSha: string[] = []
    for (let i = 0; i < count; i += 2) {
      const a = Math.floor(Math.random() * accounts.length)
      for (const fee of [false, true]) {
        const now = timeOf(i)
        const id = makeId(now)
        parents.push(fee ? ids[ids.length - 1]! : null)
        ids.push(id)
        accountIds.push(accounts[a]!)
        seq.push(++seqs[a]!)
        created.push(new Date(now).toISOString())
        status.push('Successful')
        amount.push(fee ? 500 : 1 + Math.floor(Math.random() * 1_000_000))
        txSha.push(sha.slice(64 * ids.length - 64, 64 * ids.length))
      }
    }
    return [ids, accountIds, seq, parents, created, status, amount, txSha]
  }
}

/** The preload: history, one row per millisecond, ending now; returns its seconds. */
async function preload(db: pg.Client, rows: Rows): Promise<number> {
  const preloadStart = performance.now()
  const historyStart = Date.now() - preload_rows
  // One statement in flight while the next batch is made.
  let inFlight: Promise<unknown> = Promise.resolve()
  for (let done = 0; done < preload_rows; done += preload_batch_rows) {
    const count = Math.min(preload_batch_rows, preload_rows - done) & ~1
    const values = rows(count, (i) => historyStart + done + i)
    await inFlight
    if (interrupted) throw new Error('interrupted')
    if (count > 0) inFlight = db.query(insert, values)
  }
  await inFlight
  const preload_s = (performance.now() - preloadStart) / 1000
  await db.query('checkpoint')
  return preload_s
}

/** The timed part: `batches` inserts of `batch_rows` rows, as one named statement. */
async function timedInserts(db: pg.Client, pid: number, name: string, rows: Rows) {
  const before = await snapshot(db, pid)
  const started = performance.now()
  for (let b = 0; b < batches; b++) {
    if (interrupted) throw new Error('interrupted')
    const now = Date.now()
    await db.query({ name, text: insert,
      values: rows(batch_rows, () => now) })
  }
  const elapsed_s = (performance.now() - started) / 1000
  const after = await snapshot(db, pid)
  return { before, after, elapsed_s }
}

/** The size of each index of t. */
async function indexSizes(db: pg.Client): Promise<Record<string, number>> {
  const index_bytes: Record<string, number> = {}
  const indexes = await db.query<{ name: string; bytes: string }>(`
    select c.relname as name, pg_relation_size(i.indexrelid) as bytes
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 't'::regclass order by c.relname`)
  for (const r of indexes.rows) index_bytes[r.name] = Number(r.bytes)
  return index_bytes
}

/** The backend's CPU ticks and the WAL position. */
async function snapshot(db: pg.Client, pid: number): Promise<{ ticks: number; lsn: string }> {
  const { lsn } = (await db.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!
  const ticks = procTicks(pid)
  if (ticks === undefined) throw new Error(`PostgreSQL backend ${pid} is gone`)
  return { ticks, lsn }
}

/**
 * This database's WAL between two positions: the records that change one of its pages
 * (a block reference rel <tablespace>/<dbOid>/<relfilenode>), and those of the same
 * transactions (their commits); with the number of full-page images (FPW) in them. Record
 * lengths, so slightly under an LSN difference, which counts page headers too.
 */
async function ownWal(db: pg.Client, dbOid: number, from: string, to: string): Promise<{
    bytes: number; fpi: number }> {
  const query = `
    with r as materialized (select xid, record_length, block_ref from pg_get_wal_records_info($1, $2)),
         ours as (select distinct xid from r where xid <> '0' and block_ref like $3)
    select coalesce(sum(record_length), 0) as bytes,
           coalesce(sum((length(block_ref) - length(replace(block_ref, '(FPW)', ''))) / 5), 0)
             as fpi
    from r where block_ref like $3 or (xid <> '0' and xid in (select xid from ours))`
  for (let attempt = 1; ; attempt++) {
    try {
      const row =
        (await db.query<{ bytes: string; fpi: string }>(query, [from, to, `%/${dbOid}/%`])).rows[0]!
      return { bytes: Number(row.bytes), fpi: Number(row.fpi) }
    } catch (error) {
      // The end must have been flushed; the WAL writer does so within wal_writer_delay.
      if (attempt === 3) throw error
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}

function printTable(results: Round[]): void {
  const indexNames = [...new Set(results.flatMap((r) => Object.keys(r.index_bytes)))]
  const mb = (bytes: number) => (bytes / 1e6).toFixed(1)
  const short = (index: string) => index.replace(/^t_/, '').replace(/_(key|idx)$/, '')
  const header = [
    'round',
    'ids',
    'preload s',
    'rows/s',
    'PG CPU s',
    'CPU µs/row',
    'server WAL MB',
    'own WAL MB',
    'own WAL B/row',
    'own FPI',
    ...indexNames.map((n) => `${short(n)} MB`),
  ]
  const timed_rows = batches * batch_rows
  const lines = results.map((r) => [
    String(r.round),
    r.kind,
    r.preload_s.toFixed(1),
    Math.round(r.rows_per_s).toLocaleString('en'),
    r.cpu_s.toFixed(2),
    r.cpu_us_per_row.toFixed(1),
    mb(r.wal_bytes),
    r.own ? mb(r.own.bytes) : '-',
    r.own ? Math.round(r.own.bytes / timed_rows).toLocaleString('en') : '-',
    r.own ? r.own.fpi.toLocaleString('en') : '-',
    ...indexNames.map((n) => (r.index_bytes[n] === undefined ? '-' : mb(r.index_bytes[n]!))),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const format = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!)
    : c.padStart(widths[i]!))).join('  ')
  process.stdout.write(`\n${format(header)}\n${lines.map(format).join('\n')}\n`)
  process.stdout.write(
    `\nTimed part: ${timed_rows.toLocaleString('en')} rows in ${batches.toLocaleString('en')} ` +
      `transactions, after a CHECKPOINT, on ${preload_rows.toLocaleString('en')} preloaded rows. ` +
        `Index sizes at the end of each round.\n`,
  )
  process.stdout.write(
    `server WAL: the pg_current_wal_lsn difference, other databases' work included; own: this ` +
      `database's records (pg_walinspect), FPI the full-page images in them.\n`,
  )
}

function whole(name: string, fallback: number): number {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text.replaceAll('_', '').replaceAll(',', ''))
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}: a whole number, not ${text}`)
  return value
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

try {
  await main()
} catch (error) {
  if (!interrupted) throw error
  process.exitCode = 130
}
