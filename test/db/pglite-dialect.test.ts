import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, sql } from 'kysely'
import { PGliteDialect } from '../../src/db/pglite-dialect.ts'
import { pgliteSeed } from '../support/templates.ts'

// The PGlite dialect lends PGlite's one connection to one caller at a time. Without that,
// transactions that wait in the middle (as every service's do, between its reads and
// writes) would run their statements inside each other's transactions.

type Db = { counters: { id: number; n: number } }

async function database(): Promise<Kysely<Db>> {
  // From the tests' pre-migrated dump: loading it costs a fraction of creating a cluster.
  const pglite = await PGlite.create('memory://', { loadDataDir: await pgliteSeed() })
  const db = new Kysely<Db>({ dialect: new PGliteDialect({ pglite }) })
  await sql`create table counters (id int primary key, n int not null)`.execute(db)
  await db.insertInto('counters').values({ id: 1, n: 0 }).execute()
  return db
}

test('pglite dialect - concurrent transactions that pause between read and write each see and keep their own work', async () => {
  const db = await database()
  try {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        db.transaction().execute(async (trx) => {
          const { n } = await trx.selectFrom('counters').select('n').where('id', '=', 1)
            .executeTakeFirstOrThrow()
          await sleep(1) // other callers run meanwhile; none may step into this transaction
          await trx.updateTable('counters').set({ n: n + 1 }).where('id', '=', 1).execute()
        }),
      ),
    )
    const { n } = await db.selectFrom('counters').select('n').where('id', '=', 1)
      .executeTakeFirstOrThrow()
    assert.equal(n, 20, 'no increment was lost')
  } finally {
    await db.destroy()
  }
})

test('pglite dialect - a transaction that throws is rolled back, and one whose statement failed leaves the connection usable', async () => {
  const db = await database()
  try {
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('counters').set({ n: 99 }).where('id', '=', 1).execute()
        throw new Error('changed my mind')
      }),
      /changed my mind/,
    )
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('counters').set({ n: 98 }).where('id', '=', 1).execute()
        await trx.insertInto('counters').values({ id: 1, n: 0 }).execute() // duplicate key
      }),
      (error: { code?: string }) => error.code === '23505',
    )
    const { n } = await db.selectFrom('counters').select('n').where('id', '=', 1)
      .executeTakeFirstOrThrow()
    assert.equal(n, 0, 'neither change was kept')
    await db.transaction().execute((trx) => trx.updateTable('counters').set({ n: 1 }).where('id',
      '=', 1).execute())
    assert.equal((await db.selectFrom('counters').select('n').executeTakeFirstOrThrow()).n, 1,
      'the connection serves the next transaction')
  } finally {
    await db.destroy()
  }
})
