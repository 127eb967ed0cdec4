import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import pg from 'pg'
import { storage } from '../support/harness.ts'
import { closeStorePool, leasePglite, leasePostgresDatabase } from '../support/store-pool.ts'

// Reuse is what this file tests: run on its own (not in a group process of `npm test`), it
// turns the pool on for itself and closes it at its end.
if (process.env.BANK_TEST_POOL !== '1') {
  process.env.BANK_TEST_POOL = '1'
  after(closeStorePool)
}

// The files of one test process reuse its stores (test/support/store-pool.ts): a store a bank
// is done with comes back to the next as the template left it. If the reset missed a table, a
// sequence, the rows the migrations seeded or a setting, one file's data would reach the next.

type Run = (text: string) => Promise<Record<string, unknown>[]>

const nextAccountNumber = async (run: Run) => String((await run(`select nextval('account_number_seq') as n`))[0]!.n)

/** Leaves what a reset must remove; returns the account number a fresh store gives first. */
async function leaveMarks(run: Run): Promise<string> {
  const first = await nextAccountNumber(run)
  await nextAccountNumber(run)
  await run(`insert into partners (id, name, email, root_entity_id, created_at) values (gen_random_uuid(), 'Left over', 'x@example.com', gen_random_uuid(), now())`)
  await run(`update sandbox_clock set offset_ms = 123456`)
  return first
}

async function assertAsTemplate(run: Run, firstAccountNumber: string): Promise<void> {
  assert.equal((await run('select count(*)::int as n from partners'))[0]!.n, 0, 'tables are emptied')
  assert.equal((await run('select offset_ms::int as n from sandbox_clock'))[0]!.n, 0, 'the row the migrations seeded is back as it was')
  assert.equal(await nextAccountNumber(run), firstAccountNumber,
    'sequences start where the template had them')
  assert.notEqual((await run(`select current_setting('TimeZone') as z`))[0]!.z, 'Africa/Johannesburg', 'settings are reset')
}

test('store pool - a reused PGlite comes back as the template left it: tables, seeded rows, sequences, session settings', async (t) => {
  if (storage !== 'pglite') return t.diagnostic('PGlite pass only')
  const a = await leasePglite()
  const runA: Run = async (text) => (await a.store.query<Record<string, unknown>>(text)).rows
  const first = await leaveMarks(runA)
  await runA(`set timezone to 'Africa/Johannesburg'`)
  await a.release()
  const b = await leasePglite()
  try {
    assert.equal(b.store, a.store, 'the second lease got the store the first gave back')
    await assertAsTemplate(async (text) => (await b.store.query<Record<string,
      unknown>>(text)).rows, first)
  } finally {
    await b.release()
  }
})

test('store pool - a reused PostgreSQL database comes back as the template left it: tables, seeded rows, sequences, its settings', async (t) => {
  if (storage !== 'postgres') return t.diagnostic('PostgreSQL pass only')
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    return client
  }
  const a = await leasePostgresDatabase()
  const clientA = await connect(a.store.url)
  const first = await leaveMarks(async (text) => (await clientA.query(text)).rows)
  await clientA.query(`alter database "${a.store.name}" set timezone to 'Africa/Johannesburg'`)
  const oidA = (await clientA.query(`select oid::text from pg_database where datname = current_database()`)).rows[0].oid
  await clientA.end()
  await a.release()
  const b = await leasePostgresDatabase()
  const clientB = await connect(b.store.url)
  try {
    const oidB = (await clientB.query(`select oid::text from pg_database where datname = current_database()`)).rows[0].oid
    assert.equal(oidB, oidA, 'the second lease got the database the first gave back')
    await assertAsTemplate(async (text) => (await clientB.query(text)).rows, first)
    // Under a new name: a bank of the first file that was left running cannot reach it.
    assert.notEqual(b.store.url, a.store.url)
    await assert.rejects(connect(a.store.url), (error: { code?: string }) => error.code === '3D000')
  } finally {
    await clientB.end()
    await b.release()
  }
})

test('store pool - a PostgreSQL database someone is still connected to when its bank stops is not lent again', async (t) => {
  if (storage !== 'postgres') return t.diagnostic('PostgreSQL pass only')
  const a = await leasePostgresDatabase()
  const stray = new pg.Client({ connectionString: a.store.url })
  stray.on('error', () => {})
  await stray.connect()
  const oidOf = async (client: pg.Client) => (await client.query(`select oid::text from pg_database where datname = current_database()`)).rows[0].oid
  const oidA = await oidOf(stray)
  await a.release()
  const b = await leasePostgresDatabase()
  const clientB = new pg.Client({ connectionString: b.store.url })
  await clientB.connect()
  try {
    assert.notEqual(await oidOf(clientB), oidA, 'a fresh database, not the one still in use')
    await assert.rejects(stray.query('select 1'), 'the stray connection was cut off with its database')
  } finally {
    // A client the server has cut off has ended already (ending it again would wait for ever).
    stray.connection.stream.destroy()
    await clientB.end()
    await b.release()
  }
})
