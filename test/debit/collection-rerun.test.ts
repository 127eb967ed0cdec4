import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { DebitCollection } from '../../src/debit/debit-collection.ts'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { findJobByKey } from '../../src/jobs/job-store.ts'
import { createLogger } from '../../src/logger.ts'
import type { DebitRail } from '../../src/rails/debit-rail.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, balanceOf, collectionsOf, debitRowsOf, debtors, eventTypesOf, fee, newOrder, poolAccountOf, sast, statusOf } from './collection-helpers.ts'

// Exactly once (docs/guides/debit-orders.md; jobs run at least once): a collection run that dies
// after the debit rail answered but before it booked the answers is run again and books
// each collection once; two runs of one day at the same time (two instances) collect each
// order once. A second "instance" here is a DebitCollection on a JobRunner of its own over
// the same database, with a rail that loses the connection after the rail's answer.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let account: string

/** The bank's simulated debit rail, passed through; the test rails below change its submits. */
class WrappedRail implements DebitRail {
  constructor(protected readonly rail: DebitRail) {}
  authenticateMandate = (m: Parameters<DebitRail['authenticateMandate']>[0]) =>
    this.rail.authenticateMandate(m)
  collectDisputes = () => this.rail.collectDisputes()
  acknowledgeDisputes = (keys: readonly string[]) => this.rail.acknowledgeDisputes(keys)
  submitCollections(collections: Parameters<DebitRail['submitCollections']>[0]) {
    return this.rail.submitCollections(collections)
  }
}

/** The bank's simulated debit rail, except that the next submits throw after the rail answered. */
class LosingRail extends WrappedRail {
  losses = 0
  override async submitCollections(collections: Parameters<DebitRail['submitCollections']>[0]) {
    const answers = await this.rail.submitCollections(collections)
    if (this.losses > 0) {
      this.losses--
      throw new Error('connection lost after the rail answered (test)')
    }
    return answers
  }
}

function secondInstance(rail: DebitRail): { runner: JobRunner; collection: DebitCollection } {
  const log = createLogger('silent')
  const runner = new JobRunner(tb.bank.database.db, tb.clock, log,
    { poll_ms: 60_000, concurrency_max: 1 })
  const collection = new DebitCollection(tb.bank.database.db, tb.clock,
    tb.bank.services.ledgerWriter, tb.bank.services.calendar, rail, runner,
    { feeCents: BigInt(fee), batchMax: 2, schedule: false, sandbox: true }, log)
  return { runner, collection }
}

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  account = await poolAccountOf(p)
})

test('rerun - a run that dies after the rail answered is run again and books every collection once', async () => {
  const ids = [
    await newOrder(tb, p, { collection_date: '2026-11-25', amount: 1_000 }),
    await newOrder(tb, p, { collection_date: '2026-11-25', amount: 2_000 }),
    await newOrder(tb, p, { collection_date: '2026-11-25', amount: 3_000 }),
    await newOrder(tb, p, { account_number: debtors.insufficientTimes(1),
      collection_date: '2026-11-25', amount: 4_000 }),
  ]
  // The bank's own runner is stopped and the clock set, not advanced: no scheduled run happens.
  tb.clock.set(sast('2026-11-25'))
  const rail = new LosingRail(tb.bank.services.debitRail)
  const { runner, collection } = secondInstance(rail)
  rail.losses = 1
  await assert.rejects(collection.runNow('2026-11-25'), /connection lost/)
  // Every order was taken to processing before the rail was asked; none is booked yet.
  for (const id of ids) assert.equal((await statusOf(p, id)).status, 'processing')
  assert.equal((await debitRowsOf(tb, account)).length, 0)
  const failedRun = await tb.bank.database.db.selectFrom('jobs').selectAll().where('kind', '=',
    'debit.collection_run').where('state', '=', 'queued').executeTakeFirstOrThrow()
  // The failed run is retried after its backoff, from the start.
  tb.clock.set(new Date(tb.clock.now().getTime() + 60_000))
  const resumed = (await runner.runById(failedRun.id)) as Record<string, number | boolean>
  assert.equal(resumed.resumed, true)
  assert.equal(resumed.successful, 3)
  assert.equal(resumed.retrying, 1)
  assert.equal((await findJobByKey(tb.bank.database.db, 'debit.collection_run',
    failedRun.key))?.state, 'done')
  // Run again (another manual run of the day): nothing more.
  const again = await collection.runNow('2026-11-25')
  assert.equal(again.successful + again.failed + again.retrying + again.submitted, 0)
  const credits = (await debitRowsOf(tb, account)).map((r) => Number(r.credit)).sort(
    (a, b) => a - b)
  assert.deepEqual(credits, [1_000 - fee, 2_000 - fee, 3_000 - fee])
  for (const id of ids.slice(0, 3)) assert.deepEqual(await eventTypesOf(tb, id),
    ['debit_order.processing', 'debit_order.successful'])
  assert.deepEqual((await collectionsOf(tb, ids[3]!)).map((c) => c.attempts), [1])
  await assertLedgerClean(tb)
})

test('rerun - two runs of one day at once (two instances) collect each order once', async () => {
  tb.clock.set(sast('2026-11-25', '10:00'))
  const ids = []
  for (let i = 0; i < 5; i++) ids.push(
    await newOrder(tb, p, { collection_date: '2026-11-27', amount: 10_000 + i }))
  tb.clock.set(sast('2026-11-27'))
  const before = (await balanceOf(p, account)).balance
  const { collection } = secondInstance(tb.bank.services.debitRail)
  const [a, b] = await Promise.all([collection.runNow('2026-11-27'),
    tb.bank.services.debitCollection.runNow('2026-11-27')])
  for (const id of ids) assert.equal((await statusOf(p, id)).status, 'successful')
  // The retried order of the first test was collected on its second attempt by one of them.
  assert.equal(a.successful + b.successful, 5 + 1)
  const expected = ids.reduce((sum, _, i) => sum + 10_000 + i - fee, 0) + (4_000 - fee)
  assert.equal((await balanceOf(p, account)).balance, before + expected)
  await assertLedgerClean(tb)
})

/**
 * The bank's simulated debit rail, except that it answers none of the collections asked for while
 * `silent`.
 */
class SilentRail extends WrappedRail {
  silent = true
  asked = 0
  override async submitCollections(collections: Parameters<DebitRail['submitCollections']>[0]) {
    this.asked += collections.length
    return this.silent ? new Map() : this.rail.submitCollections(collections)
  }
}

test('rerun - when the rail answers none of a chunk the run ends; every due order is started all the same, and the next run collects them', async () => {
  tb.clock.set(sast('2026-11-27', '10:00'))
  const ids = []
  for (let i = 0; i < 5; i++) ids.push(
    await newOrder(tb, p, { collection_date: '2026-12-01', amount: 30_000 + i }))
  tb.clock.set(sast('2026-12-01'))
  const rail = new SilentRail(tb.bank.services.debitRail)
  const { collection } = secondInstance(rail)
  const silent = await collection.runNow('2026-12-01')
  assert.equal(silent.submitted, 5)
  assert.equal(silent.successful, 0)
  assert.equal(rail.asked, 2, 'one chunk asked for, then the run ended')
  for (const id of ids) assert.equal((await statusOf(p, id)).status, 'processing')
  rail.silent = false
  const again = await collection.runNow('2026-12-01')
  assert.equal(again.successful, 5)
  for (const id of ids) assert.equal((await statusOf(p, id)).status, 'successful')
  await assertLedgerClean(tb)
})

test('rerun - orders are started while earlier chunks are collected: seven orders in chunks of two, each collected once, in one run', async () => {
  tb.clock.set(sast('2026-12-01', '10:00'))
  const ids = []
  for (let i = 0; i < 7; i++) ids.push(
    await newOrder(tb, p, { collection_date: '2026-12-03', amount: 20_000 + i }))
  ids.push(await newOrder(tb, p, { account_number: debtors.insufficientTimes(1),
    collection_date: '2026-12-03', amount: 5_000 }))
  tb.clock.set(sast('2026-12-03'))
  const before = (await balanceOf(p, account)).balance
  const { collection } = secondInstance(tb.bank.services.debitRail)
  const report = await collection.runNow('2026-12-03')
  assert.deepEqual([report.submitted, report.successful, report.retrying, report.failed],
    [8, 7, 1, 0])
  for (const id of ids.slice(0, 7)) {
    assert.equal((await statusOf(p, id)).status, 'successful')
    assert.deepEqual(await eventTypesOf(tb, id),
      ['debit_order.processing', 'debit_order.successful'])
  }
  assert.equal((await statusOf(p, ids[7]!)).status, 'processing')
  assert.deepEqual((await collectionsOf(tb, ids[7]!)).map((c) => c.attempts), [1])
  const expected = ids.slice(0, 7).reduce((sum, _, i) => sum + 20_000 + i - fee, 0)
  assert.equal((await balanceOf(p, account)).balance, before + expected)
  await assertLedgerClean(tb)
})
