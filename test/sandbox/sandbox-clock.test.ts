import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { findJob, findJobByKey } from '../../src/jobs/job-store.ts'
import { advance_seconds_max } from '../../src/sandbox/sandbox-contract.ts'
import { targetOf } from '../../src/sandbox/sandbox-service.ts'
import { clearing_job_kind } from '../../src/transfers/clearing-service.ts'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, poolAccount, transferBody } from '../transfers/helpers.ts'
import { batchBody, payment } from '../bulk/helpers.ts'

// The sandbox's clock through ops.sandbox.*: read, moved forward (never back), and an
// advance running the work that falls due on the way, in time order, before it answers.
// The test bank is a sandbox whose clock is the injected ManualClock: an advance moves it.

const tb = useTestBank({ env: { BANK_CLEARING_SCHEDULE: 'on', BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('sandbox - the clock reads the bank time; an advance by seconds moves it and the injected clock', async () => {
  const before = tb.clock.now()
  assert.deepEqual(await tb.operator.sandbox.clock({}), { now: before.toISOString() })
  const moved = await tb.operator.sandbox.advance({ seconds: 90 })
  assert.equal(moved.now, new Date(before.getTime() + 90_000).toISOString())
  assert.equal(typeof moved.jobs_run, 'number')
  assert.equal(tb.clock.now().toISOString(), moved.now)
  assert.deepEqual(await tb.operator.sandbox.clock({}), { now: moved.now })
})

test('sandbox - an advance to a time goes there; to a time before now is refused: the clock never moves back', async () => {
  const now = tb.clock.now()
  const to = new Date(now.getTime() + 3_600_000)
  // An offset other than Z names the same instant.
  const sast = new Date(to.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00').replace(
    '.000', '')
  assert.equal((await tb.operator.sandbox.advance({ to: sast })).now, to.toISOString())
  const refused = await expectRefusal(tb.operator.sandbox.advance({ to: now.toISOString() }), 400,
    'to')
  assert.match(refused.message, /never moves back/)
  assert.equal(tb.clock.now().toISOString(), to.toISOString(), 'a refused advance moves nothing')
  assert.equal((await tb.operator.sandbox.advance({ to: to.toISOString() })).now, to.toISOString(),
    'to now is allowed')
})

test('sandbox - advance takes exactly one of seconds and to, within bounds', async () => {
  await expectRefusal(tb.operator.sandbox.advance({}), 400, 'seconds')
  await expectRefusal(
    tb.operator.sandbox.advance({ seconds: 60, to: tb.clock.now().toISOString() }), 400, 'to')
  await expectRefusal(tb.operator.sandbox.advance({ seconds: 0 }), 400, 'seconds')
  await expectRefusal(tb.operator.sandbox.advance({ seconds: 1.5 }), 400, 'seconds')
  await expectRefusal(tb.operator.sandbox.advance({ seconds: advance_seconds_max + 1 }), 400,
    'seconds')
  await expectRefusal(tb.operator.sandbox.advance({ to: 'tomorrow' }), 400, 'to')
  const far = new Date(tb.clock.now().getTime() + (advance_seconds_max + 1) * 1000).toISOString()
  await expectRefusal(tb.operator.sandbox.advance({ to: far }), 400, 'to')
})

test('sandbox - the limit of one advance is 366 days, at and just past it (without moving the bank)', () => {
  const now = new Date('2026-11-23T08:00:00Z')
  const max = new Date(now.getTime() + advance_seconds_max * 1000)
  assert.equal(targetOf(now, { seconds: advance_seconds_max }).toISOString(), max.toISOString())
  assert.equal(targetOf(now, { to: max.toISOString() }).toISOString(), max.toISOString())
  assert.throws(() => targetOf(now, { to: new Date(max.getTime() + 1000).toISOString() }), /366 days/)
  assert.throws(() => targetOf(now, { to: new Date(now.getTime() - 1).toISOString() }), /never moves back/)
})

test('sandbox - an advance runs due jobs in time order at their due time, with the jobs they enqueue, before it answers', async () => {
  const runner = tb.bank.services.jobRunner
  const db = tb.bank.database.db
  const kind = `test.sandbox.expiry.${randomUUID()}`
  const runs: Array<{ key: string; at: string }> = []
  runner.register({
    kind,
    attempts_max: 1,
    lease_ms: 60_000,
    backoff_base_ms: 1_000,
    backoff_max_ms: 1_000,
    run: async (job) => {
      runs.push({ key: job.key, at: tb.clock.now().toISOString() })
      // Like an expiry that schedules a reminder: work enqueued on the way runs on the way.
      if (job.key === 'b') await runner.enqueue(db,
        { kind, key: 'b-follow-up', due_at: new Date(tb.clock.now().getTime() + 5 * 60_000) })
    },
  })
  const start = tb.clock.now().getTime()
  const at = (minutes: number) => new Date(start + minutes * 60_000)
  for (const [key, minutes] of [['c', 30], ['a', 10], ['b', 20], ['later', 120]] as const) {
    await runner.enqueue(db, { kind, key, due_at: at(minutes) })
  }
  const reply = await tb.operator.sandbox.advance({ seconds: 3600 })
  assert.deepEqual(runs, [
    { key: 'a', at: at(10).toISOString() },
    { key: 'b', at: at(20).toISOString() },
    { key: 'b-follow-up', at: at(25).toISOString() },
    { key: 'c', at: at(30).toISOString() },
  ])
  assert.ok(reply.jobs_run >= 4, `jobs_run ${reply.jobs_run}`)
  assert.equal(reply.now, at(60).toISOString())
  assert.equal((await findJobByKey(db, kind, 'later'))?.state, 'queued',
    'work due after the target waits')
  await tb.operator.sandbox.advance({ seconds: 3600 })
  assert.deepEqual(runs.at(-1), { key: 'later', at: at(120).toISOString() })
})

test('sandbox - an EFT is Successful when the advance past its clearing cycle answers; the cycle is announced', async () => {
  // Monday 2026-11-30, 08:00 SAST: before the day's first cycle (07:00 ran already on the way).
  await tb.operator.sandbox.advance({ to: '2026-11-30T06:30:00Z' })
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const eft = await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  assert.equal((await p.client.accounts.getTransaction({ tx_id: eft.tx_id })).transaction.status,
    'Pending')
  const reply = await tb.operator.sandbox.advance({ to: '2026-11-30T08:05:00Z' }) // 10:05 SAST
  assert.ok(reply.jobs_run >= 1)
  assert.equal((await p.client.accounts.getTransaction({ tx_id: eft.tx_id })).transaction.status,
    'Successful')
  const cycle = await findJobByKey(tb.bank.database.db, clearing_job_kind, '2026-11-30T10:00')
  assert.equal(cycle?.state, 'done')
  assert.ok(cycle && (await findJob(tb.bank.database.db, cycle.id))?.finished_at)
  const announced = await tb.bank.database.db
    .selectFrom('events')
    .selectAll()
    .where('type', '=', 'clearing.cycle_completed')
    .where('resource_id', '=', '2026-11-30T10:00')
    .execute()
  assert.equal(announced.length, 1)
  const pending = await tb.bank.database.db.selectFrom('events_pending').select('seq').where('seq',
    '=', announced[0]!.seq).execute()
  assert.deepEqual(pending, [], 'events are handed over on the way too')
})

test('sandbox - a bulk batch whose PIN nobody gives has failed when the advance past its expiry answers', async () => {
  const pool = await poolAccount(p)
  await fund(tb, pool, 100_000)
  const available = (await p.client.accounts.getDetails({ account_id: pool })).available_balance
  const body = batchBody(p.rootEntityId, [payment(1)])
  await p.client.bulkPayments.initiate(body)
  const status = () => p.client.bulkPayments.status(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id })
  assert.equal((await status()).status, 'pending_otp')
  assert.notEqual((await p.client.accounts.getDetails({ account_id: pool })).available_balance,
    available, 'the batch holds its total')
  await tb.operator.sandbox.advance({ seconds: 4 * 60 })
  assert.equal((await status()).status, 'pending_otp', 'not yet: the PIN lives five minutes')
  await tb.operator.sandbox.advance({ seconds: 61 })
  assert.equal((await status()).status, 'failed')
  assert.equal((await p.client.accounts.getDetails({ account_id: pool })).available_balance,
    available, 'the hold is released')
  const { messages } = await tb.operator.sandbox.messages({ limit: 10 })
  assert.ok(messages.some((m) => /one-time PIN/.test(m.text)), 'the PIN went out through the notifier')
})

test('sandbox - messages lists what the notifier sent, newest first, narrowed by recipient and bounded', async () => {
  const to = `sandbox-${randomUUID()}@example.com`
  await tb.bank.services.notifier.send({ key: `t1-${to}`, to, subject: 'First', text: 'one' })
  await tb.bank.services.notifier.send({ key: `t2-${to}`, to, subject: 'Second', text: 'two' })
  await tb.bank.services.notifier.send({ key: `t3-${to}`, to: `other-${to}`, subject: 'Other',
    text: 'three' })
  const { messages } = await tb.operator.sandbox.messages({ to })
  assert.deepEqual(messages.map((m) => [m.to, m.subject, m.text]),
    [[to, 'Second', 'two'], [to, 'First', 'one']])
  assert.equal((await tb.operator.sandbox.messages({ limit: 1 })).messages.length, 1)
  await expectRefusal(tb.operator.sandbox.messages({ limit: 0 }), 400, 'limit')
  await expectRefusal(tb.operator.sandbox.messages({ limit: 1001 }), 400, 'limit')
  assert.ok((await tb.operator.sandbox.messages({ limit: 1000 })).messages.length >= 3)
})
