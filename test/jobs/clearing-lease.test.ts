import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { claimDue, findJobByKey } from '../../src/jobs/job-store.ts'
import { clearing_job_kind } from '../../src/transfers/clearing-service.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, fund, newAccount, transferBody } from '../transfers/helpers.ts'

// A clearing cycle is a job with one owner under a lease. Before, a run killed half-way
// left its `clearing_runs` row `running` for ever, and any instance would work a cycle
// that another was still running. Now a live lease keeps other instances off, and an
// expired one (a dead instance) lets exactly one take the cycle over and finish it.

// Leases are measured on the wall clock; this one stands still until the test moves it.
const wall = new ManualClock('2026-11-22T12:00:00Z')
const tb = useTestBank(
  { wallClock: wall, env: { BANK_CLEARING_SCHEDULE: 'on', BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  // This file plays the instances itself. The bank's own runner, woken by the events a
  // transfer appends, would otherwise take the cycle over as well the moment the test
  // lets the dead instance's lease run out (seen in a CI run: the runner settled the
  // payments and the test's run found none left), so it is stopped; the tests call its
  // runDue where they mean it to run.
  await tb.bank.services.jobRunner.stop()
  // The runner may have planned the cycle due at the bank's first hour (10:00 SAST) before
  // it stopped, and left it queued (seen in a CI run: the test's claim then took that cycle
  // instead of its own). Whatever is due now is run here, so every run starts alike.
  await tb.bank.services.jobRunner.runDue()
})

test('clearing - a cycle held by a live instance is not run by another; a dead one\'s is taken over once', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  for (let i = 0; i < 3; i++) await p.client.accounts.transfer(
    transferBody(account, { amount: 1_000 }))
  tb.clock.set('2026-11-23T11:05:00Z') // 13:05 SAST Monday: the 13:00 cycle is due
  const db = tb.bank.database.db
  const clearing = tb.bank.services.clearing
  const due = clearing.dueCycle(tb.clock.now())!
  await tb.bank.services.jobRunner.enqueue(db, {
    kind: clearing_job_kind,
    key: due.cycle,
    due_at: due.cutoff,
    payload: { cycle: due.cycle, cutoff: due.cutoff.toISOString() },
  })
  // Another instance takes the cycle, then dies without a word.
  const [taken] = await claimDue(db, 'instance-that-died', [clearing_job_kind],
    { due: tb.clock.now(), lease: wall.now() }, 1)
  assert.equal(taken?.key, due.cycle)

  assert.equal(await clearing.runDue(), undefined,
    'a cycle under a live lease is left to its owner')
  assert.equal((await balances(p, account)).balance, '100000', 'nothing settled')

  wall.advance(60_000) // the dead instance's lease runs out
  const report = await clearing.runDue()
  assert.equal(report?.cycle, due.cycle)
  assert.equal(report?.resumed, true)
  assert.equal(report?.settled, 3)
  assert.equal(await clearing.runDue(), undefined, 'a finished cycle does not run again')
  const row = await findJobByKey(db, clearing_job_kind, due.cycle)
  assert.equal(row?.state, 'done')
  assert.equal(row?.attempts, 2)
  const events = await db.selectFrom('events').selectAll().where('type', '=',
    'clearing.cycle_completed').where('resource_id', '=', due.cycle).execute()
  assert.equal(events.length, 1, 'the finished cycle is announced through the outbox')
  assert.equal((events[0]?.data as { settled?: number }).settled, 3)
  assert.equal((await balances(p, account)).balance, String(100_000 - 3 * (1_000 + 250)))
  await assertLedgerClean(tb)
})

test('clearing - the scheduled cycle is planned and run by the job runner once its time has come', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const eft = await p.client.accounts.transfer(transferBody(account, { amount: 2_000 }))
  tb.clock.set('2026-11-24T14:01:00Z') // 16:01 SAST Tuesday: the 16:00 cycle
  const ran = await tb.bank.services.jobRunner.runDue()
  assert.ok(ran >= 1)
  const row = await findJobByKey(tb.bank.database.db, clearing_job_kind, '2026-11-24T16:00')
  assert.equal(row?.state, 'done')
  assert.equal((await p.client.accounts.getTransaction({ tx_id: eft.tx_id })).transaction.status,
    'Successful')
  assert.equal(await tb.bank.services.jobRunner.runDue(), 0, 'nothing more is due')
})
