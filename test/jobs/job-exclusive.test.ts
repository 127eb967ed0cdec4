import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { JobGroupBusy, JobRunner, type JobContext, type JobKind } from '../../src/jobs/job-runner.ts'
import { claimDue, findJob, findJobByKey, finishRun } from '../../src/jobs/job-store.ts'
import { createLogger } from '../../src/logger.ts'
import { clearing_job_kind } from '../../src/transfers/clearing-service.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, transferBody } from '../transfers/helpers.ts'

// Exclusive job groups: work that hands payments to a rail (an EFT clearing cycle, its
// bulk share) never runs beside another run of its group, on any instance, so two
// overlapping runs cannot submit the same payments twice. Before, a manual `bank clearing
// run` during a scheduled cycle on another instance submitted the same pending EFTs to
// the rail from both (booked once, but paid twice by any rail that does not deduplicate).

const wall = new ManualClock('2026-11-22T12:00:00Z')
// No wait for a busy group on demand here: a manual run meets a running cycle with 409 at once.
const tb = useTestBank(
  { wallClock: wall, env: { BANK_JOBS_POLL_MS: '60000', BANK_JOBS_EXCLUSIVE_WAIT_MS: '0' } })
const log = createLogger('silent')
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
})

function instance(kinds: JobKind[], exclusiveWaitMs = 0): JobRunner {
  const runner = new JobRunner(tb.bank.database.db, tb.clock, log,
    { poll_ms: 1000, concurrency_max: 4, wall_clock: wall, exclusive_wait_ms: exclusiveWaitMs })
  for (const kind of kinds) runner.register(kind)
  return runner
}

function kindOf(name: string, group: string | undefined,
    run: (job: JobContext) => Promise<void> = async () => {}): JobKind {
  return { kind: name, exclusive: group, attempts_max: 3, lease_ms: 60_000, backoff_base_ms: 1_000,
    backoff_max_ms: 1_000, run: async (job) => run(job) }
}

test('jobs - a job of an exclusive group waits while another of its group runs on another instance, then runs; other kinds do not wait', async () => {
  const group = `test.group.${randomUUID()}`
  const a = kindOf(`test.a.${randomUUID()}`, group)
  const b = kindOf(`test.b.${randomUUID()}`, group)
  const free = kindOf(`test.free.${randomUUID()}`, undefined)
  const here = instance([a, b, free])
  const db = tb.bank.database.db
  await here.enqueue(db, { kind: a.kind, key: 'a1' })
  await here.enqueue(db, { kind: b.kind, key: 'b1' })
  await here.enqueue(db, { kind: free.kind, key: 'f1' })
  // Another instance takes a1 and is still alive (its lease is live).
  const [taken] = await claimDue(db, 'other-instance', [a.kind],
    { due: tb.clock.now(), lease: wall.now() }, 1, new Map([[a.kind, group]]))
  assert.equal(taken?.key, 'a1')

  assert.equal(await here.runDue(), 1, 'only the kind outside the group runs')
  assert.equal((await findJobByKey(db, free.kind, 'f1'))?.state, 'done')
  assert.equal((await findJobByKey(db, b.kind, 'b1'))?.state, 'queued',
    'b1 waits: a job of its group is running')

  // The other instance dies: once its lease has run out, one of the group runs at a time.
  wall.advance(60_000)
  assert.equal(await here.runDue(), 2)
  assert.equal((await findJobByKey(db, a.kind, 'a1'))?.state, 'done')
  assert.equal((await findJobByKey(db, b.kind, 'b1'))?.state, 'done')
})

test('jobs - one claim takes at most one job of a group, and runNew of a busy group throws JobGroupBusy', async () => {
  const group = `test.group.${randomUUID()}`
  const a = kindOf(`test.a.${randomUUID()}`, group)
  const free = kindOf(`test.free.${randomUUID()}`, undefined)
  const here = instance([a, free])
  const db = tb.bank.database.db
  for (const key of ['a1', 'a2', 'a3']) await here.enqueue(db, { kind: a.kind, key })
  for (const key of ['f1', 'f2']) await here.enqueue(db, { kind: free.kind, key })
  const groups = new Map([[a.kind, group]])
  const claimed = await claimDue(db, 'instance-1', [a.kind, free.kind],
    { due: tb.clock.now(), lease: wall.now() }, 10, groups)
  assert.deepEqual(claimed.map((row) => row.kind).sort(), [a.kind, free.kind, free.kind].sort())
  assert.deepEqual(await claimDue(db, 'instance-2', [a.kind], { due: tb.clock.now(),
    lease: wall.now() }, 10, groups), [], 'the group is busy for every other claimer')

  await assert.rejects(here.runNew({ kind: a.kind, key: 'now' }),
    (error: unknown) => error instanceof JobGroupBusy && error.group === group)
  assert.equal(await findJobByKey(db, a.kind, 'now'), undefined, 'nothing was added')
  wall.advance(60_000)
})

test('jobs - a manual clearing run while another instance runs a cycle is refused with 409 and submits nothing', async () => {
  const db = tb.bank.database.db
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  const runner = tb.bank.services.jobRunner
  const cycle = `test:${randomUUID()}`
  const id = await runner.enqueue(db, { kind: clearing_job_kind, key: cycle,
    payload: { cycle, cutoff: tb.clock.now().toISOString() } })
  // Another instance is in the middle of that cycle.
  const [taken] = await claimDue(db, 'instance-mid-cycle', [clearing_job_kind],
    { due: tb.clock.now(), lease: wall.now() }, 1, new Map([[clearing_job_kind, 'rail.eft']]))
  assert.equal(taken?.id, id)

  await expectRefusal(tb.operator.clearing.run({}), 409)
  const tx = (await p.client.accounts.getTransaction({ tx_id: sent.tx_id })).transaction
  assert.equal(tx.status, 'Pending', 'the manual run submitted nothing')

  // The cycle's instance died; its lease runs out and the cycle is taken over, once.
  wall.advance(60_000)
  assert.ok(await runner.runById(id!))
  assert.equal((await findJob(db, id!))?.state, 'done')
  assert.equal((await p.client.accounts.getTransaction({ tx_id: sent.tx_id })).transaction.status,
    'Successful')
  await assertLedgerClean(tb)
})

test('jobs - runNew of a busy group waits until the running job ends, then runs', async () => {
  const group = `test.group.${randomUUID()}`
  let holderDone = false
  const sawHolderDone: boolean[] = []
  const a = kindOf(`test.a.${randomUUID()}`, group, async () => {
    sawHolderDone.push(holderDone)
  })
  const here = instance([a], 30_000)
  const db = tb.bank.database.db
  await here.enqueue(db, { kind: a.kind, key: 'held' })
  const [held] = await claimDue(db, 'other-instance', [a.kind],
    { due: tb.clock.now(), lease: wall.now() }, 1, new Map([[a.kind, group]]))
  assert.equal(held?.key, 'held')

  const manual = here.runNew({ kind: a.kind, key: 'manual' })
  // The other instance ends its job; only then may the manual one start.
  const holderRows = await db.selectFrom('jobs').select('id').where('kind', '=', a.kind).where(
    'key', '=', 'manual').execute()
  assert.deepEqual(holderRows, [], 'the waiting job is not added while its group is busy')
  holderDone = true
  assert.ok(await finishRun(db, held!.id, 'other-instance', tb.clock.now(),
    { state: 'done', result: null, last_error: null }))
  await manual
  assert.deepEqual(sawHolderDone, [true],
    'the manual job ran once, after the running one had ended')
  assert.equal((await findJobByKey(db, a.kind, 'manual'))?.state, 'done')
})

test('jobs - runNew of a job that exists already answers undefined at once, even while its group is busy', async () => {
  const group = `test.group.${randomUUID()}`
  const a = kindOf(`test.a.${randomUUID()}`, group)
  const here = instance([a])
  const db = tb.bank.database.db
  await here.enqueue(db, { kind: a.kind, key: 'x' })
  const [held] = await claimDue(db, 'other-instance', [a.kind],
    { due: tb.clock.now(), lease: wall.now() }, 1, new Map([[a.kind, group]]))
  assert.equal(held?.key, 'x')
  assert.equal(await here.runNew({ kind: a.kind, key: 'x' }), undefined,
    'nothing to add and nothing to wait for')
  wall.advance(60_000)
})
