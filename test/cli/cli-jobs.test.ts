import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { createLogger } from '../../src/logger.ts'
import { useTestBank } from '../support/harness.ts'
import { bankEnv, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank jobs list` and `bank jobs retry`: commands nobody wrote by hand, derived from the
// ops.jobs.* operations of the contract, run as an operator would.

const tb = useTestBank()
after(() => removeTempDirs())

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

/** A job of a kind of its own that fails once and is then dead (one attempt allowed). */
async function deadJob(): Promise<{ id: string; kind: string }> {
  const kind = `test.cli.${randomUUID()}`
  const runner = new JobRunner(tb.bank.database.db, tb.clock, createLogger('silent'),
    { poll_ms: 1000, concurrency_max: 1 })
  runner.register({
    kind,
    attempts_max: 1,
    lease_ms: 60_000,
    backoff_base_ms: 1_000,
    backoff_max_ms: 1_000,
    run: async () => {
      throw new Error('rail unreachable (test)')
    },
  })
  const id = await runner.enqueue(tb.bank.database.db, { kind, key: 'k' })
  assert.ok(id)
  assert.equal(await runner.runDue(), 1)
  return { id, kind }
}

test('cli - jobs list --state dead --kind K shows a dead job; jobs retry <job_id> queues it again', async () => {
  const { id, kind } = await deadJob()
  const listed = json(await bank('jobs', 'list', '--state', 'dead', '--kind', kind, '--limit',
    '10'))
  assert.deepEqual(
    listed.jobs.map((j: { job_id: string; state: string; last_error: string }) => [j.job_id,
      j.state, j.last_error]),
    [[id, 'dead', 'rail unreachable (test)']],
  )
  assert.deepEqual(listed, await tb.operator.jobs.list({ state: 'dead', kind, limit: 10 }))

  const retried = json(await bank('jobs', 'retry', id))
  assert.equal(retried.job_id, id)
  assert.equal(retried.state, 'queued')
  assert.deepEqual(json(await bank('jobs', 'list', '--state', 'dead', '--kind', kind)),
    { jobs: [] })
})

test('cli - jobs usage mistakes exit 2; values the bank refuses exit 1 with 400', async () => {
  const missing = await bank('jobs', 'retry')
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /<job_id> is required/)
  const notNumber = await bank('jobs', 'list', '--limit', 'ten')
  assert.equal(notNumber.code, 2)
  assert.match(notNumber.stderr, /--limit must be a whole number/)
  const badState = await bank('jobs', 'list', '--state', 'asleep')
  assert.equal(badState.code, 1)
  assert.equal(JSON.parse(badState.stderr).error.details[0].field, 'state')
  const unknown = await bank('jobs', 'retry', randomUUID())
  assert.equal(unknown.code, 1)
  assert.equal(JSON.parse(unknown.stderr).error.code, 404)
})
