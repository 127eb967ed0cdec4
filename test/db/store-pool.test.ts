import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { storage } from '../support/harness.ts'
import { leasePglite, leasePostgresDatabase } from '../support/store-pool.ts'

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
  assert.equal(await nextAccountNumber(run), firstAccountNumber, 'sequences start where the template had them')
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
    await assertAsTemplate(async (text) => (await b.store.query<Record<string, unknown>>(text)).rows, first)
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
  await clientA.end()
  await a.release()
  const b = await leasePostgresDatabase()
  const clientB = await connect(b.store.url)
  try {
    assert.equal(b.store.name, a.store.name, 'the second lease got the database the first gave back')
    await assertAsTemplate(async (text) => (await clientB.query(text)).rows, first)
  } finally {
    await clientB.end()
    await b.release()
  }
})
