import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GroupCommitter } from '../../src/ledger/group-committer.ts'

// When a batch starts beside one being written: only once `overlap_jobs_min` jobs wait.
// The batch writer here is a real function whose batches finish when the test opens them.

function committer(
  options: { overlap_jobs_min?: number; queue_jobs_max?: number; keysOf?: (job: number) => string[];
    key_batches_max?: number; batches_in_flight_max?: number } = {},
) {
  const started: number[][] = []
  const gates: Array<() => void> = []
  const gc = new GroupCommitter<number, number>(
    async (jobs) => {
      started.push(jobs)
      await new Promise<void>((resolve) => gates.push(resolve))
      return jobs.map((job) => ({ ok: true as const, value: job * 10 }))
    },
    {
      batch_jobs_max: 100,
      batches_in_flight_max: options.batches_in_flight_max ?? 2,
      ...(options.overlap_jobs_min === undefined ? {}
        : { overlap_jobs_min: options.overlap_jobs_min }),
      ...(options.keysOf ? { keysOf: options.keysOf } : {}),
      ...(options.key_batches_max === undefined ? {}
        : { key_batches_max: options.key_batches_max }),
      queue_jobs_max: options.queue_jobs_max ?? 1000,
      overloaded: () => new Error('overloaded'),
      retryable: () => false,
      attempts_max: 1,
      isolatable: () => false,
    },
  )
  // Batch n finishes (its gate opens) and its answers are delivered.
  const finish = async (n: number) => {
    gates[n]!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return { gc, started, finish }
}

test('group commit - while a batch is written, the next starts beside it only once enough jobs wait', async () => {
  const { gc, started, finish } = committer({ overlap_jobs_min: 3 })
  const answers = [gc.submit(0)]
  assert.deepEqual(started, [[0]], 'an idle committer starts at once, with one job')
  answers.push(gc.submit(1), gc.submit(2))
  assert.deepEqual(started, [[0]], 'two waiting jobs do not start a second batch')
  answers.push(gc.submit(3))
  assert.deepEqual(started, [[0], [1, 2, 3]], 'the third does, with all three')
  answers.push(gc.submit(4))
  await finish(0)
  assert.deepEqual(started, [[0], [1, 2, 3]], 'one job does not start a batch beside [1, 2, 3]')
  await finish(1)
  assert.deepEqual(started, [[0], [1, 2, 3], [4]], 'it starts once no batch is being written')
  await finish(2)
  assert.deepEqual(await Promise.all(answers), [0, 10, 20, 30, 40])
})

test('group commit - without a minimum, a second batch starts with the first job that waits', async () => {
  const { gc, started, finish } = committer()
  const answers = [gc.submit(0), gc.submit(1)]
  assert.deepEqual(started, [[0], [1]])
  await finish(0)
  await finish(1)
  assert.deepEqual(await Promise.all(answers), [0, 10])
})

test('group commit - jobs for rows being written wait for the next batch, even past the minimum', async () => {
  // Every job writes the same row: the waiting ones cannot go beside the batch that holds it.
  const { gc, started, finish } = committer({ overlap_jobs_min: 2, keysOf: () => ['hot'] })
  const answers = [gc.submit(0), gc.submit(1), gc.submit(2), gc.submit(3)]
  assert.deepEqual(started, [[0]])
  await finish(0)
  assert.deepEqual(started, [[0], [1, 2, 3]])
  await finish(1)
  assert.deepEqual(await Promise.all(answers), [0, 10, 20, 30])
})

test('group commit - with key_batches_max 2, a second batch of a row being written starts beside it past the minimum, a third waits', async () => {
  const { gc, started, finish } =
    committer({ overlap_jobs_min: 2, keysOf: () => ['hot'], key_batches_max: 2 })
  const answers = [gc.submit(0), gc.submit(1)]
  assert.deepEqual(started, [[0]], 'one waiting job does not start a second batch')
  answers.push(gc.submit(2))
  assert.deepEqual(started, [[0], [1, 2]], 'two do, although batch 0 writes their row')
  answers.push(gc.submit(3), gc.submit(4))
  assert.deepEqual(started, [[0], [1, 2]], 'two batches write the row: no third beside them')
  await finish(0)
  assert.deepEqual(started, [[0], [1, 2], [3, 4]], 'the third starts once the first is written')
  await finish(1)
  await finish(2)
  assert.deepEqual(await Promise.all(answers), [0, 10, 20, 30, 40])
})

test('group commit - with key_batches_max 2, jobs of rows not being written go first, in a batch of their own; the busy row waits', async () => {
  const { gc, started, finish } = committer(
    { overlap_jobs_min: 2, keysOf: (job) => [job < 10 ? 'hot' : `row-${job}`], key_batches_max: 2 })
  const answers = [gc.submit(0), gc.submit(1), gc.submit(11)]
  assert.deepEqual(started, [[0], [11]], 'the second batch takes the free row only')
  await finish(0)
  await finish(1)
  assert.deepEqual(started, [[0], [11], [1]])
  await finish(2)
  assert.deepEqual(await Promise.all(answers), [0, 10, 110])
})

test('group commit - a queue that cannot hold the minimum overlaps once it is full', async () => {
  const { gc, started, finish } = committer({ overlap_jobs_min: 48, queue_jobs_max: 3 })
  const answers = [gc.submit(0), gc.submit(1), gc.submit(2)]
  assert.deepEqual(started, [[0]])
  answers.push(gc.submit(3))
  assert.deepEqual(started, [[0], [1, 2, 3]],
    'three waiting fill the queue: the second batch starts')
  await finish(0)
  await finish(1)
  assert.deepEqual(await Promise.all(answers), [0, 10, 20, 30])
})

test('group commit - while every waiting job waits for its row, a new job is looked at alone: one of a free row starts at once, the rest when a batch ends', async () => {
  // A hot account's authorizations (card-authorizations.ts): two batches write its row, more
  // could be in flight, and each new job of the row used to send the committer through the
  // whole queue again for nothing.
  let looked = 0
  const keysOf = (job: number) => {
    looked++
    return [job < 10 ? 'hot' : `row-${job}`]
  }
  const { gc, started, finish } = committer(
    { overlap_jobs_min: 2, keysOf, key_batches_max: 2, batches_in_flight_max: 4 })
  const answers = [gc.submit(0), gc.submit(1), gc.submit(2), gc.submit(3), gc.submit(4)]
  assert.deepEqual(started, [[0], [1, 2]], 'two batches write the hot row; 3 and 4 wait')
  looked = 0
  answers.push(gc.submit(5))
  assert.equal(looked, 1, 'a job of the hot row is looked at alone, not the queue with it')
  assert.deepEqual(started, [[0], [1, 2]])
  answers.push(gc.submit(11))
  assert.deepEqual(started, [[0], [1, 2], [11]], 'a job of a free row starts at once')
  await finish(0)
  assert.deepEqual(started, [[0], [1, 2], [11], [3, 4, 5]],
    'once a batch of the hot row is written, its waiting jobs start')
  await finish(1)
  await finish(2)
  await finish(3)
  assert.deepEqual(await Promise.all(answers), [0, 10, 20, 30, 40, 50, 110])
})
