import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { BankApiError } from '../../src/client/index.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, storage, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, transferBody } from '../transfers/helpers.ts'

// The service survives its database going away (the test's own database: its connections
// are terminated and new ones refused, as in a restart), answers 503 while it is away —
// never 500 — and serves again by itself when it returns. Before, a connection terminated
// under an open transaction emitted an unheard 'error' event and killed the process.
// PostgreSQL only: PGlite runs inside the process and has no connection to lose.

if (storage === 'postgres') {
  const tb = useTestBank({ env: { BANK_DB_POOL_MAX: '8' } })
  let p: TestPartner
  let admin: pg.Client
  let name: string

  before(async () => {
    await tb.ready
    p = await onboardPartner(tb, { approve: true })
    name = new URL(tb.config.databaseUrl!).pathname.slice(1)
    admin = new pg.Client({ connectionString: process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' })
    await admin.connect()
  })

  after(async () => {
    await admin.query(`alter database ${name} allow_connections true`).catch(() => {})
    await admin.end()
  })

  const codeOf = (error: unknown) => (error instanceof BankApiError ? error.code : -1)

  test('database outage - terminated connections and a closed database give 503, then service resumes', async () => {
    const account = await newAccount(p)
    await fund(tb, account, 50_000_000)
    const codes = new Map<number, number>()
    const count = (code: number) => codes.set(code, (codes.get(code) ?? 0) + 1)
    const acknowledged: string[] = []
    let stop = false
    const load = (async () => {
      while (!stop) {
        await Promise.all(
          Array.from({ length: 32 }, (_, i) =>
            p.client.accounts.transfer(
                transferBody(account, { pay_and_clear: i % 2 === 0, amount: 100 })).then(
              (r) => (count(200), acknowledged.push(r.tx_id)),
              (error: unknown) => count(codeOf(error)),
            ),
          ),
        )
      }
    })()
    // Connections die mid-transaction, then the database refuses new ones for a while.
    for (let round = 0; round < 3; round++) {
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name])
    }
    await admin.query(`alter database ${name} allow_connections false`)
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name])
    // While the database is closed, a request answers 503 rather than hanging or 500.
    await assert.rejects(p.client.accounts.getDetails({ account_id: account }),
      (error: unknown) => codeOf(error) === 503)
    await admin.query(`alter database ${name} allow_connections true`)
    stop = true
    await load
    // Back by itself: no restart of the service.
    const after = await p.client.accounts.transfer(transferBody(account))
    assert.equal(after.status, 'Pending')
    assert.equal(codes.get(500) ?? 0, 0, `no 500s: ${JSON.stringify([...codes])}`)
    assert.deepEqual(
      [...codes.keys()].filter((c) => c !== 200 && c !== 503),
      [],
      `only 200 and 503: ${JSON.stringify([...codes])}`,
    )
    for (const txId of acknowledged.slice(-20)) {
      assert.equal((await p.client.accounts.getTransaction({ tx_id: txId })).transaction.tx_id,
        txId)
    }
    await assertLedgerClean(tb)
  })
}
