import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { JobRunner, type JobContext, type JobKind } from '../../src/jobs/job-runner.ts'
import { claimShared, claimSharedMany, findJobByKey } from '../../src/jobs/job-store.ts'
import { createLogger } from '../../src/logger.ts'
import { useTestBank } from '../support/harness.ts'

// Kinds that share their slots out (`share_running_max`; webhook deliveries, by partner):
// no share holds more than its limit of running jobs, counted on every instance; one
// instance never gives one share all of the kind's slots; a free slot goes to the share
// with the fewest running, then to the one that has waited longest; a share's job whose
// instance died is taken over as any job is, within the limit.

const wall = new ManualClock('2026-11-22T12:00:00Z')
const tb = useTestBank({ wallClock: wall, env: { BANK_JOBS_POLL_MS: '60000' } })
const log = createLogger('silent')

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
})

const db = () => tb.bank.database.db
const times = () => ({ due: tb.clock.now(), lease: wall.now() })
const minutesAgo = (minutes: number) => new Date(tb.clock.now().getTime() - minutes * 60_000)

function sharedKind(runningMax: number,
    run: (job: JobContext) => Promise<void> = async () => {}): JobKind {
  return {
    kind: `test.shared.${randomUUID()}`,
    attempts_max: 3,
    lease_ms: 60_000,
    backoff_base_ms: 1_000,
    backoff_max_ms: 1_000,
    share_running_max: runningMax,
    run: async (job) => run(job),
  }
}

function runnerWith(kind: JobKind, concurrencyMax = 4): JobRunner {
  const runner = new JobRunner(db(), tb.clock, log,
    { poll_ms: 3_600_000, concurrency_max: concurrencyMax, wall_clock: wall })
  runner.register(kind)
  return runner
}

/**
 * Enqueues `count` jobs of `share`, keys `<share>1…`, the first due `minutes` ago and each later
 * one a minute after.
 */
async function enqueue(runner: JobRunner, kind: JobKind, share: string, count: number,
    minutes: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await runner.enqueue(db(), { kind: kind.kind, key: `${share}${i + 1}`, share,
      due_at: minutesAgo(minutes - i) })
  }
}

const claim = (kind: JobKind, owner: string, runningMax: number,
  extra: { excluded?: string[]; due_before?: Date } = {}) =>
  claimShared(db(), owner, { kind: kind.kind, running_max: runningMax, excluded: extra.excluded
    ?? [], due_before: extra.due_before }, times())

test('jobs - a shared claim: the share with the fewest running first, none beyond its limit on any instance, the longest waiting among equals', async () => {
  const kind = sharedKind(1)
  const runner = runnerWith(kind)
  // Share a has waited longest and has the most jobs; b and c came later.
  await enqueue(runner, kind, 'a', 4, 30)
  await enqueue(runner, kind, 'b', 2, 20)
  await enqueue(runner, kind, 'c', 1, 10)

  // Instances x, y and z take one job each: one of each share, a first (it waited longest).
  assert.equal((await claim(kind, 'instance-x', 1))?.key, 'a1')
  assert.equal((await claim(kind, 'instance-y', 1))?.key, 'b1')
  assert.equal((await claim(kind, 'instance-z', 1))?.key, 'c1')
  // Every share with work is at its limit of one, whichever instance runs it: nothing more.
  assert.equal(await claim(kind, 'instance-x', 1), undefined)
  // Just over it (a limit of two): the share with the fewest running, then the longest waiting.
  assert.equal((await claim(kind, 'instance-x', 2))?.key, 'a2')
  assert.equal((await claim(kind, 'instance-x', 2))?.key, 'b2')
  assert.equal(await claim(kind, 'instance-x', 2), undefined,
    'a holds two, b and c have nothing left')
})

test('jobs - a shared claim of many takes, in one transaction, one job of each share whose turn comes, in turn, up to the count and within every limit', async () => {
  const kind = sharedKind(1)
  const runner = runnerWith(kind)
  await enqueue(runner, kind, 'a', 4, 30)
  await enqueue(runner, kind, 'b', 2, 20)
  await enqueue(runner, kind, 'c', 1, 10)
  await runner.enqueue(db(), { kind: kind.kind, key: 'd1', share: 'd',
    due_at: new Date(tb.clock.now().getTime() + 60_000) })
  const many = async (runningMax: number, count: number, owner = 'instance-x') =>
    (await claimSharedMany(db(), owner, { kind: kind.kind, running_max: runningMax,
      excluded: [] }, times(), count)).map((row) => row.key)
  assert.deepEqual(await many(1, 2), ['a1', 'b1'], 'two asked: the two longest waiting')
  assert.deepEqual(await many(1, 10, 'instance-y'), ['c1'],
    'a and b are at their limit on any instance; d is not due')
  assert.deepEqual(await many(1, 10), [])
  assert.deepEqual(await many(2, 10), ['a2', 'b2'], 'one more of each, a first')
  assert.deepEqual(await many(2, 10), [], 'a and b hold two, c has nothing left')
  const running = await db().selectFrom('jobs').select(['key', 'lease_owner'])
    .where('kind', '=', kind.kind).where('state', '=', 'running').orderBy('key').execute()
  assert.deepEqual(running.map((r) => `${r.key}@${r.lease_owner}`), ['a1@instance-x',
    'a2@instance-x', 'b1@instance-x', 'b2@instance-x', 'c1@instance-y'])
})

test('jobs - a shared claim skips the shares an instance excludes, and leaves a job that fell due after other work for later', async () => {
  const kind = sharedKind(5)
  const runner = runnerWith(kind)
  await enqueue(runner, kind, 'a', 2, 30)
  await enqueue(runner, kind, 'b', 1, 20)
  assert.equal((await claim(kind, 'here', 5, { excluded: ['a'] }))?.key, 'b1')
  assert.equal(await claim(kind, 'here', 5, { excluded: ['a', 'b'] }), undefined)
  // Other work due 30 minutes ago goes first: a1 fell due at the same time, not before it.
  assert.equal(await claim(kind, 'here', 5, { due_before: minutesAgo(30) }), undefined)
  assert.equal((await claim(kind, 'here', 5, { due_before: minutesAgo(29) }))?.key, 'a1')
  // Not due yet: not taken.
  await runner.enqueue(db(), { kind: kind.kind, key: 'c1', share: 'c',
    due_at: new Date(tb.clock.now().getTime() + 60_000) })
  assert.equal((await claim(kind, 'here', 5))?.key, 'a2')
  assert.equal(await claim(kind, 'here', 5), undefined)
})

test("jobs - a shared job whose instance died is taken over once its lease has run out, and until then it counts against its share's limit", async () => {
  const kind = sharedKind(1)
  const runner = runnerWith(kind)
  await enqueue(runner, kind, 'a', 2, 30)
  assert.equal((await claim(kind, 'dying-instance', 1))?.key, 'a1')
  assert.equal(await claim(kind, 'here', 1), undefined,
    'a1 runs under a live lease: a is at its limit')
  wall.advance(60_000)
  const taken = await claim(kind, 'here', 1)
  assert.equal(taken?.key, 'a1', 'the dead instance’s job first: it fell due first')
  assert.equal(taken?.lease_owner, 'here')
  assert.equal(taken?.attempts, 2)
  assert.equal(await claim(kind, 'elsewhere', 1), undefined, 'a is at its limit again')
})

test('jobs - a job of a shared kind names its share; a job of another kind names none', async () => {
  const kind = sharedKind(1)
  const runner = runnerWith(kind)
  await assert.rejects(runner.enqueue(db(), { kind: kind.kind, key: 'k' }), /names its share/)
  await assert.rejects(runner.enqueue(db(), { kind: kind.kind, key: 'k', share: '' }), /names its share/)
  const plain: JobKind = { ...sharedKind(1), kind: `test.plain.${randomUUID()}`,
    share_running_max: undefined }
  runner.register(plain)
  await assert.rejects(runner.enqueue(db(), { kind: plain.kind, key: 'k', share: 'a' }), /names no share/)
  assert.throws(() => runner.register({ ...sharedKind(0) }), /share_running_max of at least 1/)
  assert.throws(() => runner.register({ ...sharedKind(1), exclusive: 'rail.test' }), /cannot both share its slots out and be exclusive/)
})

// The runner polls once an hour here, so every start below comes from a freed slot.
test("jobs - on one instance a share never takes all of a kind's slots: a later share's job starts while its jobs hang", { timeout: 30_000 }, async () => {
  const gates = new Map<string, () => void>()
  const started: string[] = []
  const waiters: Array<() => void> = []
  let released = false
  // Each run waits (a receiver that does not answer) until the test opens its gate.
  const kind = sharedKind(10, async (job) => {
    started.push(job.key)
    for (const wake of waiters.splice(0)) wake()
    if (!released) await new Promise<void>((resolve) => gates.set(job.key, resolve))
  })
  const startedAll = async (keys: string[]) => {
    while (!keys.every((key) => started.includes(key))) await new Promise<void>(
      (resolve) => waiters.push(resolve))
  }
  // Three slots and a limit of ten: one share may still hold only two of them.
  const runner = runnerWith(kind, 3)
  await enqueue(runner, kind, 'a', 4, 30)
  await enqueue(runner, kind, 'b', 1, 5)
  runner.start()
  try {
    await startedAll(['a1', 'a2', 'b1'])
    assert.deepEqual([...started].sort(), ['a1', 'a2', 'b1'],
      "a has two slots, b the third, though a's jobs fell due first")
    // b's slot frees: a still holds its two, and the third stays free of it.
    gates.get('b1')!()
    await runner.enqueue(db(), { kind: kind.kind, key: 'c1', share: 'c', due_at: minutesAgo(1) })
    gates.get('a1')!()
    await startedAll(['a3', 'c1'])
    assert.equal(started.includes('a4'), false)
  } finally {
    released = true
    for (const open of gates.values()) open()
    await runner.stop()
  }
})
