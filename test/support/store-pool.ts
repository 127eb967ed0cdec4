import { randomBytes } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { adminUrl, clonePostgresTemplate, pgliteSeed, pooledDatabasePrefix } from './templates.ts'

// Stores for test banks, reused by the files one group process runs one after another
// (scripts/test.mjs). A fresh store costs a PGlite about half a CPU-second (loading the
// template's dump into its in-memory file system) and PostgreSQL a database cloned from the
// template and dropped again; emptying a used one costs a few milliseconds. So a store a
// bank has finished with goes back to this process's pool, and the next bank gets it back
// as the template left it: every table emptied and the rows the migrations seeded put back,
// every sequence where the template had it, session and database settings reset. A store
// that cannot be emptied (something still holds it) is thrown away and a fresh one made.
//
// What is reset is read from the store itself on its first use (its tables, the rows its
// migrations seeded, its sequences), so a new migration needs nothing here.

/** Runs one SQL statement (with parameters) on a store; the rows it returns. */
type Run = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>

/** What the template holds, captured from a store before its first bank. */
interface Snapshot {
  /** Every table but the migrator's own, each with the rows the migrations left in it. */
  tables: { name: string; rows: string | undefined }[]
  sequences: { name: string; lastValue: string | null }[]
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

async function snapshot(run: Run): Promise<Snapshot> {
  const tables = await run(
    `select tablename as name from pg_tables where schemaname = 'public' and tablename not like 'kysely\\_migration%' order by tablename`,
  )
  const seeded = []
  for (const { name } of tables as { name: string }[]) {
    const [{ rows }] = (await run(`select coalesce(json_agg(t), '[]')::text as rows from ${quote(name)} t`)) as [{ rows: string }]
    seeded.push({ name, rows: rows === '[]' ? undefined : rows })
  }
  const sequences = (await run(
    `select sequencename as name, last_value::text as "lastValue" from pg_sequences where schemaname = 'public'`,
  )) as Snapshot['sequences']
  return { tables: seeded, sequences }
}

/**
 * Puts a store back as the snapshot found it, in one transaction. Foreign keys are not
 * checked meanwhile (the whole database is being emptied; `session_replication_role` is a
 * superuser setting, which the tests' user is), so tables are emptied in any order.
 */
async function reset(run: Run, snap: Snapshot): Promise<void> {
  await run('begin')
  try {
    await run(`set local session_replication_role = replica`)
    await run(`set local lock_timeout = '2s'`)
    for (const table of snap.tables) {
      await run(`delete from ${quote(table.name)}`)
      if (table.rows) await run(`insert into ${quote(table.name)} select * from json_populate_recordset(null::${quote(table.name)}, $1::json)`, [table.rows])
    }
    for (const { name, lastValue } of snap.sequences) {
      if (lastValue === null) await run(`alter sequence ${quote(name)} restart`)
      else await run(`select setval($1, $2::bigint, true)`, [quote(name), lastValue])
    }
    await run('commit')
  } catch (error) {
    await run('rollback').catch(() => {})
    throw error
  }
}

interface Pooled<T> {
  store: T
  snap: Snapshot
}

/** A store lent to one bank until it is given back. */
export interface Lease<T> {
  store: T
  /** Gives the store back for the next bank (after the bank using it has stopped). */
  release(): Promise<void>
}

const idlePglite: Pooled<PGlite>[] = []

/** An in-memory PGlite as the template left it: from this process's pool, or a new one. */
export async function leasePglite(): Promise<Lease<PGlite>> {
  let pooled: Pooled<PGlite> | undefined
  while (!pooled && idlePglite.length > 0) {
    const candidate = idlePglite.pop()!
    const run: Run = async (text, params) => (await candidate.store.query<Record<string,
      unknown>>(text, params)).rows
    try {
      if (candidate.store.closed) throw new Error('closed')
      // PGlite is one session: settings a test made in it (a time zone) go with the data.
      await run('reset all')
      await reset(run, candidate.snap)
      pooled = candidate
    } catch {
      if (!candidate.store.closed) await candidate.store.close().catch(() => {})
    }
  }
  if (!pooled) {
    const store = await PGlite.create('memory://', { loadDataDir: await pgliteSeed() })
    const run: Run = async (text, params) => (await store.query<Record<string,
      unknown>>(text, params)).rows
    pooled = { store, snap: await snapshot(run) }
  }
  const lent = pooled
  let released = false
  return {
    store: lent.store,
    async release() {
      if (released) return
      released = true
      if (lent.store.closed) return
      // Only a group process of `npm test` closes its pool at its end; a file run on its own
      // closes its PGlite here, or the open PGlite would keep its process from exiting.
      if (process.env.BANK_TEST_POOL === '1') idlePglite.push(lent)
      else await lent.store.close().catch(() => {})
    },
  }
}

interface PooledDatabase {
  name: string
  url: string
  /** The harness's own connection to the database, for resetting it. */
  client: pg.Client
  clientOpen: boolean
  /** The test file that last had it (from the stack), for the message about a stray bank. */
  lastUser?: string
}

/** The first test file on a stack. */
function userOf(stack: string | undefined): string | undefined {
  return /\btest\/(?!support\/)[\w./-]+?\.test\.[mc]?[jt]s/.exec(stack ?? '')?.[0]
}

/**
 * Gives a database back under a new name, so that nothing still holding the old URL (a bank
 * a file started on it and left running, whose pool reconnects when its job runner next
 * polls) can reach the next file's data: such a bank finds no database, as it did when each
 * file's database was dropped. PostgreSQL renames a database only when no one is connected
 * to it; a bank that has just stopped may take a moment to be gone, and one that is still
 * connected makes this throw (the database is then dropped, connections and all).
 */
let counter = 0

async function renameAway(database: PooledDatabase): Promise<void> {
  await closeClient(database)
  const name = newDatabaseName()
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    // Asked first, because a rename that finds someone connected waits 5 s before it fails.
    for (let attempt = 0; ; attempt++) {
      const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = $1`, [database.name])
      if (rows[0]!.n === 0) break
      if (attempt === 20) {
        process.stderr.write(`store pool: ${database.name} still has connections after its bank ` +
          `stopped (last used by ${database.lastUser ?? 'an unknown file'}); dropping it\n`)
        throw new Error('the database is still in use')
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    await admin.query(`alter database ${quote(database.name)} rename to ${quote(name)}`)
  } finally {
    await admin.end()
  }
  database.name = name
  database.url = urlOf(name)
  database.client = new pg.Client({ connectionString: database.url })
  database.client.on('error', () => {})
  await database.client.connect()
  database.clientOpen = true
}

/**
 * Ends the harness's connection once (ending a pg client twice waits for an end that never comes).
 */
async function closeClient(database: PooledDatabase): Promise<void> {
  if (!database.clientOpen) return
  database.clientOpen = false
  await database.client.end().catch(() => {})
}

/**
 * Named after the test run (scripts/test.mjs) or this process, so that a later run can drop what a
 * killed run left (templates.ts).
 */
function newDatabaseName(): string {
  const run = process.env.BANK_TEST_RUN_ID ?? process.pid
  const suffix = randomBytes(3).toString('hex')
  return `${pooledDatabasePrefix}${run}_${process.pid}_${++counter}_${suffix}`
}

function urlOf(name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const idleDatabases: Pooled<PooledDatabase>[] = []
const allDatabases = new Set<PooledDatabase>()

/**
 * A PostgreSQL database as the template left it: from this process's pool, or cloned anew.
 * Pooled only in a group process of `npm test` (BANK_TEST_POOL=1), which drops the pool at its
 * end (closeStorePool); a file run on its own drops its database when its bank gives it back.
 */
export async function leasePostgresDatabase(): Promise<Lease<{ name: string; url: string }>> {
  let pooled: Pooled<PooledDatabase> | undefined
  while (!pooled && idleDatabases.length > 0) {
    const candidate = idleDatabases.pop()!
    const run: Run = async (text, params) => (await candidate.store.client.query(text, params)).rows
    try {
      await renameAway(candidate.store)
      // A setting a test gave the database itself (a time zone) would reach the next file.
      await run(`alter database ${quote(candidate.store.name)} reset all`)
      await reset(run, candidate.snap)
      pooled = candidate
    } catch {
      await dropDatabase(candidate.store).catch(() => {})
    }
  }
  if (!pooled) {
    const name = newDatabaseName()
    await clonePostgresTemplate(name)
    const client = new pg.Client({ connectionString: urlOf(name) })
    client.on('error', () => {})
    await client.connect()
    const store: PooledDatabase = { name, url: urlOf(name), client, clientOpen: true }
    allDatabases.add(store)
    const run: Run = async (text, params) => (await client.query(text, params)).rows
    pooled = { store, snap: await snapshot(run) }
  }
  const lent = pooled
  lent.store.lastUser = userOf(new Error().stack)
  let released = false
  return {
    store: { name: lent.store.name, url: lent.store.url },
    async release() {
      if (released) return
      released = true
      if (process.env.BANK_TEST_POOL === '1') idleDatabases.push(lent)
      else await dropDatabase(lent.store)
    },
  }
}

async function dropDatabase(database: PooledDatabase): Promise<void> {
  allDatabases.delete(database)
  await closeClient(database)
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`drop database if exists ${quote(database.name)} with (force)`)
  } finally {
    await admin.end()
  }
}

/** Drops this process's databases and closes its PGlites; the group process calls it at its end. */
export async function closeStorePool(): Promise<void> {
  idleDatabases.length = 0
  await Promise.all([...allDatabases].map((database) => dropDatabase(database).catch(() => {})))
  await Promise.all(idlePglite.splice(0).map(({ store }) => store.close().catch(() => {})))
}

// The group process of `npm test` calls it after its last file (scripts/test.mjs).
;(globalThis as Record<symbol, unknown>)[Symbol.for('bank.test.closeStorePool')] = closeStorePool
