import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/schema.ts'
import { onboardPartner, storage, useTestBank, type TestPartner } from '../support/harness.ts'
import { numberedPersonalEntity } from '../support/fixtures.ts'
import { fund, transferBody } from '../transfers/helpers.ts'

// The monitoring sweep's place in the ledger's postings (src/monitoring/
// monitoring-ledger-read.ts): a posting whose id was taken before others were read, but which
// committed after, is still evaluated, however many postings committed in between (the old
// overlap re-read 5,000 ids before the place and missed it past that); what the sweep keeps
// to know it (open ranges, claims of payouts evaluated while Pending) does not grow.

// The clock stands still but for the sandbox advance, which runs no sweep: after the sweep's
// first run (before), no sweep runs but the test's own, whose counts are the test's.
const tb = useTestBank({ env: { BANK_CLEARING_SCHEDULE: 'on', BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let db: Kysely<Database>

before(async () => {
  await tb.ready
  db = tb.bank.database.db
  p = await onboardPartner(tb, { approve: true })
  await tb.bank.services.jobRunner.runDue()
})

/** A customer posting of a movement `txId` (of no real account: the sweep only counts it). */
function posting(txId: string) {
  return sql`insert into postings (journal_id, tx_id, account_id, amount, created_at)
    values (${randomUUID()}, ${txId}, ${randomUUID()}, 100, ${tb.clock.now()})`
}

/** 5,001 postings of the bank's own accounts, committed: ids past the old overlap. */
const filler = sql`insert into postings (journal_id, internal_account, amount, created_at)
  select gen_random_uuid(), 'test-filler', 0, now() from generate_series(1, 5001)`

/** A new approved personal customer with an account, funded with `rands`. */
async function customer(rands: number): Promise<{ accountId: string }> {
  const entity = await p.client.entities.create(numberedPersonalEntity())
  await tb.operator.entities.review({ entity_id: entity.id, decision: 'approve' })
  const account = await p.client.accounts.create({ entity_id: entity.id })
  await fund(tb, account.account_id, rands * 100)
  return { accountId: account.account_id }
}

const sweep = () => tb.bank.services.monitoringSweep.run()

async function removeFakes(txIds: string[]): Promise<void> {
  await db.deleteFrom('postings').where((eb) => eb.or([eb('tx_id', 'in', txIds),
    eb('internal_account', '=', 'test-filler')])).execute()
}

test('monitoring - a posting committed after 5,001 later postings were read is evaluated once, by the next sweep', async () => {
  await sweep()
  const [late, early] = [randomUUID(), randomUUID()]
  if (storage === 'postgres') {
    // A transaction takes a posting id and stays open while later postings commit and the
    // sweep reads past them; it commits after.
    await db.connection().execute(async (held) => {
      await sql`begin`.execute(held)
      await posting(late).execute(held)
      await filler.execute(db)
      await posting(early).execute(db)
      assert.deepEqual(await sweep(), { evaluated: 1, alerts_opened: 0, alerts_joined: 0 })
      const ranges = await db.selectFrom('monitoring_open_ranges').selectAll().execute()
      assert.equal(ranges.length, 1, 'the range read while a transaction was in progress')
      // An operator moves the place back: the range is read again and merged, not doubled.
      await db.updateTable('monitoring_cursor').set({ postings_id: ranges[0]!.lo }).execute()
      assert.equal((await sweep()).evaluated, 1, 'the early posting, read again')
      assert.equal((await db.selectFrom('monitoring_open_ranges').selectAll().execute()).length,
        1)
      await sql`commit`.execute(held)
    })
  } else {
    // One connection: no transaction is ever in progress while the sweep reads, so no range
    // is kept and every posting is final once read.
    await posting(late).execute(db)
    await filler.execute(db)
    await posting(early).execute(db)
    assert.deepEqual(await sweep(), { evaluated: 2, alerts_opened: 0, alerts_joined: 0 })
    assert.deepEqual(await db.selectFrom('monitoring_open_ranges').selectAll().execute(), [])
  }
  // The snapshot lists the server's transactions in progress, of every database: on a shared
  // server another's may still run, and the range waits for it too. Sweeps until it is
  // forgotten (the held transaction's alone: the next sweep).
  const ranges = () => db.selectFrom('monitoring_open_ranges').selectAll().execute()
  let evaluated = (await sweep()).evaluated
  for (let i = 0; i < 10_000 && (await ranges()).length > 0; i++) {
    evaluated += (await sweep()).evaluated
  }
  assert.equal(evaluated, storage === 'postgres' ? 1 : 0, 'the late posting, once')
  assert.deepEqual(await ranges(), [], 'the range is forgotten once its transactions finished')
  assert.equal((await sweep()).evaluated, 0)
  await removeFakes([late, early])
})

test('monitoring - a payout evaluated while Pending is not evaluated again when it settles; its claim goes with it', async () => {
  const c = await customer(100_000)
  const { tx_id } = await p.client.accounts.transfer(transferBody(c.accountId,
    { amount: 3_000_000, account_number: '62000000999' }))
  await tb.bank.services.jobRunner.runDue()
  await sweep()
  const claims = () => db.selectFrom('monitoring_evaluated').select('tx_id').execute()
  assert.deepEqual((await claims()).map((c) => c.tx_id), [tx_id], 'claimed while Pending')
  const alerts = () => tb.operator.monitoring.alerts({ partner_id: p.partnerId })
  assert.deepEqual((await alerts()).alerts.map((a) => [a.rule, a.tx_ids]),
    [['new_payee_large', [tx_id]]])
  // Its clearing cycle settles it: the posting names the payout, evaluated already.
  await tb.operator.sandbox.advance({ seconds: 2 * 86_400 })
  const settled = await p.client.accounts.getTransaction({ tx_id })
  assert.equal(settled.transaction.status, 'Successful')
  await tb.bank.services.jobRunner.runDue()
  await sweep()
  assert.deepEqual(await claims(), [], 'the claim was taken by its posting')
  assert.deepEqual((await alerts()).alerts.map((a) => [a.rule, a.tx_ids]),
    [['new_payee_large', [tx_id]]])
})

test('monitoring - claims of payouts that never settled are pruned once out of the Pending window', async () => {
  const c = await customer(10_000)
  const { tx_id } = await p.client.accounts.transfer(transferBody(c.accountId, { amount: 500 }))
  await sweep()
  const claimed = await db.selectFrom('monitoring_evaluated').select('tx_id')
    .where('tx_id', '=', tx_id).execute()
  assert.equal(claimed.length, 1)
  await db.updateTable('transactions').set({ status: 'Failed' }).where('id', '=', tx_id)
    .execute()
  tb.clock.advance(3 * 86_400_000 + 60_000)
  await sweep()
  assert.deepEqual(await db.selectFrom('monitoring_evaluated').select('tx_id')
    .where('tx_id', '=', tx_id).execute(), [])
})
