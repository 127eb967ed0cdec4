import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { JobRunner, type JobContext, type JobKind } from '../../src/jobs/job-runner.ts'
import { claimDue, findJob } from '../../src/jobs/job-store.ts'
import { createLogger } from '../../src/logger.ts'
import { expectRefusal } from '../support/assertions.ts'
import { useTestBank } from '../support/harness.ts'

// The jobs module on real storage: due times from the injected clock, one owner per run
// under a lease, retries with backoff, a dead state operators see and can retry, and the
// takeover of a dead instance's job, exactly once.

const tb = useTestBank()
const log = createLogger('silent')
/** Leases are measured on the wall clock, which these tests move by hand. */
const wall = new ManualClock('2026-11-22T12:00:00Z')

/** A runner as another instance would have one: its own owner, the same database and clocks. */
function instance(kinds: JobKind[]): JobRunner {
  const runner = new JobRunner(tb.bank.database.db, tb.clock, log,
    { poll_ms: 1000, concurrency_max: 4, wall_clock: wall })
  for (const kind of kinds) runner.register(kind)
  return runner
}

function recordingKind(name: string, run: (job: JobContext) => Promise<Record<string,
    unknown> | void> = async () => {}) {
  const runs: JobContext[] = []
  const kind: JobKind = {
    kind: name,
    attempts_max: 3,
    lease_ms: 60_000,
    backoff_base_ms: 10_000,
    backoff_max_ms: 25_000,
    run: async (job) => {
      runs.push(job)
      return run(job)
    },
  }
  return { kind, runs }
}

test('jobs - a job runs once when due, not before; the same kind and key is one job', async () => {
  const { kind, runs } = recordingKind(`test.due.${randomUUID()}`,
    async (job) => ({ echoed: job.payload.n }))
  const runner = instance([kind])
  const due = new Date(tb.clock.now().getTime() + 60_000)
  const id = await runner.enqueue(tb.bank.database.db, { kind: kind.kind, key: 'k1', due_at: due,
    payload: { n: 7 } })
  assert.ok(id)
  assert.equal(await runner.enqueue(tb.bank.database.db, { kind: kind.kind, key: 'k1',
    due_at: due }), undefined)
  assert.equal(await runner.runDue(), 0, 'not due yet')
  tb.clock.advance(60_000)
  assert.equal(await runner.runDue(), 1)
  assert.equal(await runner.runDue(), 0, 'done jobs do not run again')
  assert.equal(runs.length, 1)
  const row = await findJob(tb.bank.database.db, id)
  assert.equal(row?.state, 'done')
  assert.deepEqual(row?.result, { echoed: 7 })
})

test('jobs - a failing job is retried with growing backoff, then dead; an operator sees it and retries it', async () => {
  let fail = true
  const { kind, runs } = recordingKind(`test.fail.${randomUUID()}`, async () => {
    if (fail) throw new Error('rail unreachable (test)')
  })
  const runner = instance([kind])
  const id = (await runner.enqueue(tb.bank.database.db, { kind: kind.kind, key: 'k' }))!
  const db = tb.bank.database.db
  assert.equal(await runner.runDue(), 1)
  let row = await findJob(db, id)
  assert.equal(row?.state, 'queued')
  assert.equal(row?.attempts, 1)
  assert.equal(row?.last_error, 'rail unreachable (test)')
  assert.equal(row!.due_at.getTime() - tb.clock.now().getTime(), 10_000,
    'first backoff is the base')
  tb.clock.advance(9_999)
  assert.equal(await runner.runDue(), 0, 'backing off')
  tb.clock.advance(1)
  assert.equal(await runner.runDue(), 1)
  row = await findJob(db, id)
  assert.equal(row!.due_at.getTime() - tb.clock.now().getTime(), 20_000, 'then twice the base')
  tb.clock.advance(20_000)
  assert.equal(await runner.runDue(), 1)
  row = await findJob(db, id)
  assert.equal(row?.state, 'dead', 'attempts_max reached')
  assert.equal(runs.length, 3)

  const { jobs: dead } = await tb.operator.jobs.list({ state: 'dead', kind: kind.kind })
  assert.deepEqual(dead.map((j) => [j.job_id, j.state, j.attempts, j.last_error]),
    [[id, 'dead', 3, 'rail unreachable (test)']])
  fail = false
  const retried = await tb.operator.jobs.retry({ job_id: id })
  assert.equal(retried.state, 'queued')
  assert.equal(retried.attempts, 0)
  assert.equal(await runner.runDue(), 1)
  assert.equal((await findJob(db, id))?.state, 'done')
  await expectRefusal(tb.operator.jobs.retry({ job_id: id }), 400, 'job_id')
  await expectRefusal(tb.operator.jobs.retry({ job_id: randomUUID() }), 404)
})

test('jobs - a dead instance\'s job is taken over once its lease expires, by exactly one instance', async () => {
  const { kind, runs } = recordingKind(`test.lease.${randomUUID()}`)
  const b = instance([kind])
  const c = instance([kind])
  const db = tb.bank.database.db
  const id = (await b.enqueue(db, { kind: kind.kind, key: 'k' }))!
  // An instance takes the job and dies before finishing it: its lease is never renewed.
  const [taken] = await claimDue(db, 'dead-instance', [kind.kind],
    { due: tb.clock.now(), lease: wall.now() }, 10)
  assert.equal(taken?.id, id)
  assert.deepEqual(await Promise.all([b.runDue(), c.runDue()]), [0, 0], 'a live lease is respected')
  wall.advance(60_000)
  const counts = await Promise.all([b.runDue(), c.runDue()])
  assert.equal(counts[0] + counts[1], 1, 'one instance takes it over')
  assert.equal(runs.length, 1)
  assert.equal(runs[0]?.attempt, 2, 'the takeover counts as the second attempt')
  const row = await findJob(db, id)
  assert.equal(row?.state, 'done')
  assert.equal(row?.lease_owner, null)
})

test('jobs - list is bounded and filtered; bad filters are refused', async () => {
  const { jobs } = await tb.operator.jobs.list({ limit: 2 })
  assert.ok(jobs.length <= 2)
  await expectRefusal(tb.operator.jobs.list({ state: 'stuck' as never }), 400, 'state')
  await expectRefusal(tb.operator.jobs.list({ limit: 0 }), 400, 'limit')
  await expectRefusal(tb.operator.jobs.list({ limit: 1001 }), 400, 'limit')
  await expectRefusal(tb.operator.jobs.retry({ job_id: 'not-a-uuid' }), 400, 'job_id')
})

test('jobs - moving the bank clock far forward does not take a running job from its live instance', async () => {
  const { kind, runs } = recordingKind(`test.wall-lease.${randomUUID()}`)
  const b = instance([kind])
  const db = tb.bank.database.db
  const id = (await b.enqueue(db, { kind: kind.kind, key: 'k' }))!
  // A live instance has taken the job and is still running it.
  const [taken] = await claimDue(db, 'live-instance', [kind.kind],
    { due: tb.clock.now(), lease: wall.now() }, 10)
  assert.equal(taken?.id, id)
  tb.clock.advance(366 * 86_400_000) // the sandbox moves the bank's time a year on
  assert.equal(await b.runDue(), 0, 'the lease runs on wall-clock time, which has not moved')
  assert.equal(runs.length, 0)
  assert.equal((await findJob(db, id))?.lease_owner, 'live-instance')
  wall.advance(60_000) // only when the live instance stops renewing for a whole lease
  assert.equal(await b.runDue(), 1)
  assert.equal(runs.length, 1)
})

// The runner polls once an hour here: its first tick (at start) claims every job below.
test("jobs - a kind with a pool of its own runs that many at once, beside the runner's slots, which stay with the other kinds", { timeout: 30_000 }, async () => {
  const runner = new JobRunner(tb.bank.database.db, tb.clock, log,
    { poll_ms: 3_600_000, concurrency_max: 1, wall_clock: wall })
  let openGate!: () => void
  const gate = new Promise<void>((resolve) => (openGate = resolve))
  const pool = 40
  let waiting = 0
  let allWaiting!: () => void
  const full = new Promise<void>((resolve) => (allWaiting = resolve))
  // A delivery-like kind whose runs wait (receivers that do not answer) until the gate opens.
  const slow: JobKind = {
    ...recordingKind(`test.pooled.${randomUUID()}`).kind,
    pool_slots: pool,
    run: async () => {
      if (++waiting === pool) allWaiting()
      await gate
    },
  }
  let otherRan!: () => void
  const other = new Promise<void>((resolve) => (otherRan = resolve))
  const plain: JobKind = { ...recordingKind(`test.other.${randomUUID()}`).kind,
    run: async () => otherRan() }
  runner.register(slow)
  runner.register(plain)
  const db = tb.bank.database.db
  const earlier = new Date(tb.clock.now().getTime() - 120_000)
  // More waiting jobs than the pool has slots, all due before the other kind's job.
  for (let i = 0; i < pool + 5; i++) await runner.enqueue(db, { kind: slow.kind, key: `s${i}`,
    due_at: earlier })
  await runner.enqueue(db, { kind: plain.kind, key: 'c' })
  runner.start()
  try {
    await Promise.all([full, other])
    assert.equal(waiting, pool, 'the pool is full, and no slow job took the runner\'s one slot')
  } finally {
    openGate()
  }
  await runner.stop()
  assert.throws(() => runner.register({ ...slow, kind: 'test.pool.0', pool_slots: 0 }),
    /a pool of at least 1 slot/)
  assert.throws(() => runner.register({ ...slow, kind: 'test.pool.left', slots_left_to_others: 1 }),
    /leaves no slots and is not exclusive/)
})

// The runner polls once an hour here, so every start below comes from a freed slot. (A slot
// freed while a claim was under way used to stay empty until the next poll: this test then
// hung, and failed at its time limit.)
test('jobs - a kind that leaves a slot to others never takes the last one: a job of another kind runs while it waits', { timeout: 30_000 }, async () => {
  const runner = new JobRunner(tb.bank.database.db, tb.clock, log,
    { poll_ms: 3_600_000, concurrency_max: 2, wall_clock: wall })
  // A delivery-like kind whose runs wait (a receiver that does not answer) until the gate opens.
  let openGate!: () => void
  const gate = new Promise<void>((resolve) => (openGate = resolve))
  let slowStarted = 0
  let secondSlowStarted!: () => void
  const secondSlow = new Promise<'second slow job started'>(
    (resolve) => (secondSlowStarted = () => resolve('second slow job started')))
  const slow: JobKind = {
    ...recordingKind(`test.slow.${randomUUID()}`).kind,
    slots_left_to_others: 1,
    run: async () => {
      if (++slowStarted === 2) secondSlowStarted()
      await gate
    },
  }
  let fastRan!: () => void
  const fast = new Promise<'other kind ran'>(
    (resolve) => (fastRan = () => resolve('other kind ran')))
  const other: JobKind = { ...recordingKind(`test.other.${randomUUID()}`).kind,
    run: async () => fastRan() }
  runner.register(slow)
  runner.register(other)
  const db = tb.bank.database.db
  const earlier = new Date(tb.clock.now().getTime() - 120_000)
  // The slow jobs are due first, so a runner without the rule would give them both slots.
  await runner.enqueue(db, { kind: slow.kind, key: 'a', due_at: earlier })
  await runner.enqueue(db, { kind: slow.kind, key: 'b', due_at: earlier })
  await runner.enqueue(db, { kind: other.kind, key: 'c' })
  runner.start()
  try {
    assert.equal(await Promise.race([fast, secondSlow]), 'other kind ran')
    assert.equal(slowStarted, 1, 'one slot stayed with the other kind')
  } finally {
    openGate()
  }
  // Once the first slow job ends, its slot goes to the second.
  assert.equal(await secondSlow, 'second slow job started')
  await runner.stop()
})
