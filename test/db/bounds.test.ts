import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { after, test } from 'node:test'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import {
  boundedPool,
  clientBoundOptions,
  database_bounds_default,
  unbounded,
  whole_ledger_bounds,
  withDatabaseBounds,
  type DatabaseBounds,
} from '../../src/db/bounds.ts'
import { isDatabaseUnavailable } from '../../src/db/errors.ts'
import { loadConfig } from '../../src/config.ts'
import { preparingPool } from '../../src/db/speed/prepared.ts'
import { storage } from '../support/harness.ts'
import { adminUrl } from '../support/templates.ts'

// The bounds of every wait on PostgreSQL (src/db/bounds.ts) and what counts as "the
// database cannot serve" (src/db/errors.ts), on a real server through the pool as
// openDatabase builds it. Only statements that read or raise are sent, to the server's
// admin database: nothing is written. What a paused or full database does to the whole
// bank is in test/chaos/database-stall.test.ts and test/chaos/database-disk-full.test.ts.

if (storage === 'postgres') {
  const open: Kysely<any>[] = []
  after(() => Promise.all(open.splice(0).map((db) => db.destroy())))

  const bounds: DatabaseBounds = {
    statement_timeout_ms: 400,
    lock_timeout_ms: 300,
    idle_in_transaction_timeout_ms: 20_000,
    query_timeout_ms: 60_000,
    connect_timeout_ms: 10_000,
    keepalive_idle_ms: 5_000,
  }

  const database = (max = 1): Kysely<any> => {
    const pool = new pg.Pool({
      connectionString: adminUrl,
      max,
      pipeline: true,
      ...clientBoundOptions(bounds),
    } as pg.PoolConfig)
    pool.on('error', () => {})
    const db = new Kysely<any>({
      dialect: new PostgresDialect({ pool: preparingPool(boundedPool(pool, bounds)) }),
    })
    open.push(db)
    return db
  }

  const settings = async (db: Kysely<any>) => {
    const { rows } = await sql<Record<string, string>>`
      select current_setting('statement_timeout') as statement,
             current_setting('lock_timeout') as lock,
             current_setting('idle_in_transaction_session_timeout') as idle`.execute(db)
    return rows[0]
  }

  /** The error a statement fails with (the test fails when it succeeds). */
  const failure = async (
    db: Kysely<any>,
    statement: ReturnType<typeof sql>,
  ): Promise<{ code?: string; message: string }> => {
    try {
      await statement.execute(db)
    } catch (error) {
      return error as { code?: string; message: string }
    }
    assert.fail('the statement was expected to fail')
  }

  test('database bounds - a new connection has the statement, lock and idle-in-transaction bounds in force', async () => {
    assert.deepEqual(await settings(database()), { statement: '400ms', lock: '300ms', idle: '20s' })
  })

  test('database bounds - the defaults bound every wait, the client side above the server side', () => {
    const d = database_bounds_default
    for (const [name, ms] of Object.entries(d)) assert.ok(ms > 0, `${name} is bounded`)
    assert.ok(
      d.query_timeout_ms > d.statement_timeout_ms,
      'the server cancels a slow statement before the client gives up',
    )
    assert.ok(d.lock_timeout_ms <= d.statement_timeout_ms, 'a lock wait fails on its own bound')
    const options = clientBoundOptions(d)
    assert.equal(options.keepAlive, true)
    assert.equal(options.query_timeout, d.query_timeout_ms)
    assert.equal(options.connectionTimeoutMillis, d.connect_timeout_ms)
  })

  test('database bounds - a statement over the statement timeout is cancelled (57014), and that is "cannot serve"', async () => {
    const db = database()
    const error = await failure(db, sql`select pg_sleep(5)`)
    assert.equal(error.code, '57014', error.message)
    assert.equal(isDatabaseUnavailable(error), true)
    // The connection is kept and serves the next statement.
    assert.deepEqual((await sql<{ n: number }>`select 1 as n`.execute(db)).rows, [{ n: 1 }])
  })

  test('database bounds - a lock not taken within the lock timeout fails (55P03), and that is "cannot serve"', async () => {
    const key = randomInt(1, 2 ** 31 - 1)
    const holder = new pg.Client({ connectionString: adminUrl })
    await holder.connect()
    try {
      await holder.query('select pg_advisory_lock(727900, $1)', [key])
      const error = await failure(database(), sql`select pg_advisory_lock(727900, ${key})`)
      assert.equal(error.code, '55P03', error.message)
      assert.equal(isDatabaseUnavailable(error), true)
    } finally {
      await holder.end()
    }
  })

  test('database bounds - work given longer bounds runs past the default on the same connection, which gets the pool bounds back after', async () => {
    const db = database()
    const slept = await withDatabaseBounds(
      { statement_timeout_ms: 10_000, lock_timeout_ms: 5_000 },
      async () => {
        const inside = await settings(db)
        await sql`select pg_sleep(0.6)`.execute(db)
        // And inside a transaction.
        await db.transaction().execute((trx) => sql`select pg_sleep(0.6)`.execute(trx))
        return inside
      },
    )
    assert.deepEqual(slept, { statement: '10s', lock: '5s', idle: '20s' })
    assert.deepEqual(await settings(db), { statement: '400ms', lock: '300ms', idle: '20s' })
    assert.deepEqual(
      await withDatabaseBounds(unbounded, () => settings(db)),
      { statement: '0', lock: '0', idle: '20s' },
      'the migrations run without a server-side bound',
    )
    assert.deepEqual(
      await withDatabaseBounds(whole_ledger_bounds, () => settings(db)),
      { statement: '10min', lock: '300ms', idle: '20s' },
      'ledger verify: a longer statement bound, the lock bound of the pool',
    )
    assert.equal((await failure(db, sql`select pg_sleep(5)`)).code, '57014', 'the default is back')
  })

  // Every SQLSTATE as PostgreSQL itself raises it, through the pool the bank uses.
  const raised = (db: Kysely<any>, code: string) =>
    failure(
      db,
      sql.raw(
        `do $$ begin raise exception 'raised for the test' using errcode = '${code}'; end $$`,
      ),
    )

  const cannotServe = [
    ['08006', 'connection failure'],
    ['08001', 'cannot establish a connection'],
    ['53000', 'insufficient resources'],
    ['53100', 'disk full ("could not extend file")'],
    ['53200', 'out of memory'],
    ['53300', 'too many connections'],
    ['53400', 'configuration limit exceeded'],
    ['57000', 'operator intervention'],
    ['57014', 'query cancelled (statement timeout)'],
    ['57P01', 'admin shutdown'],
    ['57P02', 'crash shutdown'],
    ['57P03', 'cannot connect now'],
    ['57P04', 'database dropped'],
    ['58000', 'system error'],
    ['58030', 'I/O error'],
    ['55P03', 'lock not available (lock timeout)'],
    ['25006', 'read-only transaction (a standby after failover)'],
    ['25P03', 'idle-in-transaction session timeout'],
  ]
  const bugs = [
    ['42P01', 'undefined table'],
    ['42601', 'syntax error'],
    ['23505', 'unique violation'],
    ['22012', 'division by zero'],
    ['40P01', 'deadlock (the ledger retries it; elsewhere a bug)'],
    ['40001', 'serialization failure (the ledger retries it)'],
    ['XX001', 'data corrupted'],
    ['P0001', 'raise exception'],
  ]

  test('database errors - every class of "the database cannot serve" is unavailable (503), raised by PostgreSQL itself', async () => {
    const db = database()
    for (const [code, what] of cannotServe) {
      const error = await raised(db, code!)
      assert.equal(error.code, code, `${what}: ${error.message}`)
      assert.equal(isDatabaseUnavailable(error), true, `${code} ${what} is "cannot serve"`)
    }
  })

  test('database errors - mistakes in the SQL or the data stay internal errors (500)', async () => {
    const db = database()
    for (const [code, what] of bugs) {
      const error = await raised(db, code!)
      assert.equal(error.code, code, `${what}: ${error.message}`)
      assert.equal(isDatabaseUnavailable(error), false, `${code} ${what} is a bug, not an outage`)
    }
    // And as the server raises them on its own.
    assert.equal(
      isDatabaseUnavailable(await failure(db, sql`select * from no_such_table_here`)),
      false,
    )
    assert.equal(isDatabaseUnavailable(await failure(db, sql`select 1 / 0`)), false)
  })
}

test('database errors - a code that only looks like a class is not a SQLSTATE (a NATS 503, a socket error)', () => {
  assert.equal(isDatabaseUnavailable({ code: '503', message: 'no responders' }), false)
  assert.equal(
    isDatabaseUnavailable({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }),
    true,
  )
  assert.equal(isDatabaseUnavailable(new Error('Query read timeout')), true)
  assert.equal(
    isDatabaseUnavailable(new AggregateError([Object.assign(new Error('x'), { code: '53100' })])),
    true,
  )
  assert.equal(isDatabaseUnavailable({ code: '5310', message: 'short' }), false)
})

test('database bounds - the settings: defaults from db/bounds.ts, each read, and a query bound not above the statement bound refused', () => {
  assert.deepEqual(loadConfig({}).dbBounds, database_bounds_default)
  const env = {
    BANK_DB_STATEMENT_TIMEOUT_MS: '20000',
    BANK_DB_LOCK_TIMEOUT_MS: '4000',
    BANK_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
    BANK_DB_QUERY_TIMEOUT_MS: '25000',
    BANK_DB_CONNECT_TIMEOUT_MS: '2000',
    BANK_DB_KEEPALIVE_MS: '15000',
  }
  assert.deepEqual(loadConfig(env).dbBounds, {
    statement_timeout_ms: 20_000,
    lock_timeout_ms: 4_000,
    idle_in_transaction_timeout_ms: 60_000,
    query_timeout_ms: 25_000,
    connect_timeout_ms: 2_000,
    keepalive_idle_ms: 15_000,
  })
  assert.throws(
    () => loadConfig({ ...env, BANK_DB_QUERY_TIMEOUT_MS: '20000' }),
    /BANK_DB_QUERY_TIMEOUT_MS must be above BANK_DB_STATEMENT_TIMEOUT_MS/,
  )
  assert.throws(
    () => loadConfig({ BANK_DB_STATEMENT_TIMEOUT_MS: '0' }),
    /BANK_DB_STATEMENT_TIMEOUT_MS=\"0\" is not valid/,
  )
})
