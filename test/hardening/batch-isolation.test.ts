import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GroupCommitter } from '../../src/ledger/group-committer.ts'

// A grouped write that fails for a reason no check foresaw is split until the one request
// that caused it fails alone; the others commit and are answered as if nothing happened.
// The batch writer here is a real function over an in-memory "table" with the same
// all-or-nothing contract as a database transaction.

function committer(poison: (job: number) => boolean, options: { isolatable?: boolean } = {}) {
  const committed: number[] = []
  const writes: number[][] = []
  let release: (() => void) | undefined
  const gate = new Promise<void>((resolve) => (release = resolve))
  const gc = new GroupCommitter<number, number>(
    async (jobs) => {
      await gate
      writes.push(jobs)
      if (jobs.some(poison)) throw new Error(`unexpected failure in a batch of ${jobs.length}`)
      committed.push(...jobs)
      return jobs.map((job) => ({ ok: true as const, value: job * 10 }))
    },
    {
      batch_jobs_max: 100,
      batches_in_flight_max: 1,
      queue_jobs_max: 1000,
      overloaded: () => new Error('overloaded'),
      retryable: () => false,
      attempts_max: 1,
      isolatable: () => options.isolatable ?? true,
    },
  )
  return { gc, committed, writes, open: () => release!() }
}

test('ledger - a batch that fails unexpectedly commits every job but the culprit', async () => {
  const { gc, committed, open } = committer((job) => job === 13)
  const first = gc.submit(0)
  const rest = Array.from({ length: 39 }, (_, i) => gc.submit(i + 1))
  open()
  assert.equal(await first, 0)
  const outcomes = await Promise.allSettled(rest)
  outcomes.forEach((o, i) => {
    const job = i + 1
    if (job === 13) assert.equal(o.status, 'rejected')
    else assert.deepEqual(o, { status: 'fulfilled', value: job * 10 })
  })
  assert.deepEqual([...committed].sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i)
    .filter((j) => j !== 13))
})

test('ledger - two culprits in one batch fail alone and the rest commit', async () => {
  const { gc, committed, open } = committer((job) => job === 3 || job === 17)
  const all = Array.from({ length: 20 }, (_, i) => gc.submit(i))
  open()
  const outcomes = await Promise.allSettled(all)
  assert.deepEqual(
    outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : [])),
    [3, 17],
  )
  assert.equal(committed.length, 18)
})

test('ledger - an outage is not split: every job of the batch fails once, together', async () => {
  const { gc, writes, open } = committer(() => true, { isolatable: false })
  const first = gc.submit(0)
  const all = Array.from({ length: 8 }, (_, i) => gc.submit(i + 1))
  open()
  await assert.rejects(first)
  const outcomes = await Promise.allSettled(all)
  assert.ok(outcomes.every((o) => o.status === 'rejected'))
  assert.deepEqual(writes.map((w) => w.length), [1, 8], 'each batch written once, not bisected')
})
