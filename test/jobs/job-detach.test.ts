import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { runCli } from '../../src/cli/main.ts'
import { followJob, jobOutcome } from '../../src/client/index.ts'
import { ManualClock } from '../../src/clock.ts'
import { currentCommitHook, withCommitHook, type CommitHook } from '../../src/db/commit-hooks.ts'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { claimDue } from '../../src/jobs/job-store.ts'
import { createLogger } from '../../src/logger.ts'
import { clearing_job_kind } from '../../src/transfers/clearing-service.ts'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, transferBody, txById } from '../transfers/helpers.ts'
import { bankEnv, removeTempDirs } from '../cli/run-bank.ts'

// Long operator calls (`ops.clearing.run`, `ops.sandbox.clock.advance`, `ops.debit.run`)
// answer at once with their job when asked (`detach: true`), `ops.jobs.get` reads the job's
// state and, once it has ended, its outcome (the report the call would have answered), and
// callers that leave `detach` out get the report as before. A followed job whose instance
// dies is taken over once its lease lapses, and `bank clearing run` prints the outcome all
// the same. (The CLI's output in detail: test/cli/cli-follow; a real process killed:
// test/cli/cli-follow-chaos.)

// Leases are measured on the wall clock; this one stands still until the test moves it.
const wall = new ManualClock('2026-11-22T12:00:00Z')
const tb = useTestBank({ wallClock: wall })
let p: TestPartner
after(() => removeTempDirs())
before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

/** An EFT waiting for the next clearing cycle. */
async function pendingEft(): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  return (await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))).tx_id
}

test('jobs - a long call with detach answers at once with its job; jobs get reads the report once the job is done', async () => {
  const txId = await pendingEft()
  const started = await tb.operator.clearing.run({ detach: true })
  assert.deepEqual(
    { kind: started.kind, state: started.state, attempts: started.attempts, result: started.result,
      last_error: started.last_error },
    { kind: clearing_job_kind, state: 'queued', attempts: 0, result: null, last_error: null },
  )
  assert.match(started.key, /^manual:/)
  const done = await followJob(tb.operator, started.job_id)
  assert.equal(jobOutcome(done), 'done')
  const report = done.result as { cycle: string; settled: number; resumed: boolean }
  assert.deepEqual({ cycle: report.cycle, settled: report.settled, resumed: report.resumed },
    { cycle: started.key, settled: 1, resumed: false })
  assert.equal((await txById(p, txId)).status, 'Successful')
  assert.deepEqual(await tb.operator.jobs.get({ job_id: started.job_id }), done,
    'jobs get answers the job as it ended')

  // Without detach (or with false), the report itself, as before.
  const waited = await tb.operator.clearing.run({ detach: false })
  assert.equal('job_id' in waited, false)
  assert.equal(waited.settled, 0)
  assert.match(waited.cycle, /^manual:/)

  const target = new Date(tb.clock.now().getTime() + 3_600_000).toISOString()
  const advance = await tb.operator.sandbox.advance({ to: target, detach: true })
  assert.deepEqual({ kind: advance.kind, state: advance.state },
    { kind: 'sandbox.advance', state: 'queued' })
  const advanced = await followJob(tb.operator, advance.job_id)
  assert.equal((advanced.result as { now: string }).now, target)
  assert.equal(tb.clock.now().toISOString(), target)
  assert.deepEqual(Object.keys(await tb.operator.sandbox.advance({ seconds: 60 })).sort(),
    ['jobs_run', 'now'])

  const run = await tb.operator.debit.run({ detach: true })
  assert.equal(run.kind, 'debit.collection_run')
  const collected = await followJob(tb.operator, run.job_id)
  assert.deepEqual(Object.keys(collected.result ?? {}).sort(), ['date', 'disputed', 'failed',
    'rescheduled', 'resumed', 'retrying', 'run', 'submitted', 'successful'])
  assert.deepEqual(Object.keys(await tb.operator.debit.run()).sort(), Object.keys(collected.result
    ?? {}).sort())
})

test('jobs - jobs get: an unknown job is 404, a malformed id 400; a detach that is not a boolean is 400', async () => {
  await expectRefusal(tb.operator.jobs.get({ job_id: randomUUID() }), 404)
  await expectRefusal(tb.operator.jobs.get({ job_id: 'not-a-job' }), 400, 'job_id')
  await expectRefusal(tb.operator.clearing.run({ detach: 'yes' as never }), 400, 'detach')
  // The target is checked before any job is made.
  await expectRefusal(tb.operator.sandbox.advance({ to: '2020-01-01T00:00:00Z', detach: true }),
    400, 'to')
})

test('jobs - a started job runs outside the context of the request that started it (an operator audit\'s commit hook stays there)', async () => {
  const kind = `test.detach.${randomUUID()}`
  const runner = new JobRunner(tb.bank.database.db, tb.clock, createLogger('silent'),
    { poll_ms: 60_000, concurrency_max: 1 })
  let seen!: (hook: CommitHook | undefined) => void
  const ran = new Promise<CommitHook | undefined>((resolve) => (seen = resolve))
  runner.register({ kind, attempts_max: 1, lease_ms: 60_000, backoff_base_ms: 1_000,
    backoff_max_ms: 1_000, run: async () => seen(currentCommitHook()) })
  runner.start()
  try {
    // A hook with a row still to write, as an audited operator call's is while it runs.
    const hook: CommitHook = { done: false, beforeCommit: async () => {}, committed: () => {},
      note: () => {} }
    const started = await withCommitHook(hook, () => runner.startNew({ kind, key: 'k' }))
    assert.equal(started.state, 'queued')
    assert.equal(await ran, undefined, 'the job saw no commit hook')
  } finally {
    // Waits for the run to be recorded as well.
    await runner.stop()
  }
  const [row] = await tb.bank.database.db.selectFrom('jobs').selectAll().where('kind', '=', kind)
    .execute()
  assert.equal(row?.state, 'done')
})

/** Captures a run's stderr and resolves `seen(pattern)` once a write makes it match. */
function stderrWatch() {
  let text = ''
  const waiters: Array<{ pattern: RegExp; resolve: (match: RegExpMatchArray) => void }> = []
  const write = (chunk: string) => {
    text += chunk
    for (const waiter of waiters.splice(0)) {
      const match = text.match(waiter.pattern)
      if (match) waiter.resolve(match)
      else waiters.push(waiter)
    }
  }
  const seen = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve) => {
      const match = text.match(pattern)
      if (match) resolve(match)
      else waiters.push({ pattern, resolve })
    })
  return { write, seen, text: () => text }
}

test('jobs - bank clearing run follows its cycle through the death of the instance running it, and prints the report another finishes', async () => {
  const runner = tb.bank.services.jobRunner
  // The bank's own runner stands for an instance that is down, until the test starts it.
  await runner.stop()
  let restarted = false
  try {
    const txIds = [await pendingEft(), await pendingEft(), await pendingEft()]
    const stderr = stderrWatch()
    let stdout = ''
    const cli = runCli(['clearing', 'run'], bankEnv(tb), { stdout: (text) => void (stdout += text),
      stderr: stderr.write })
    const [, jobId] = await stderr.seen(/^clearing\.cycle job ([0-9a-f-]{36}) queued; following it/)

    // An instance takes the cycle, then dies without a word: its lease stays until it lapses.
    const db = tb.bank.database.db
    const [taken] = await claimDue(db, 'instance-that-died', [clearing_job_kind],
      { due: tb.clock.now(), lease: wall.now() }, 1)
    assert.equal(taken?.id, jobId)
    await stderr.seen(/: running on instance-that-died \(attempt 1 of 10\)\n/)

    wall.advance(60_000) // the dead instance's lease lapses
    runner.start() // an instance (re)started takes the cycle over
    restarted = true
    assert.equal(await cli, 0, stderr.text())
    const report = JSON.parse(stdout)
    assert.deepEqual({ resumed: report.resumed, settled: report.settled },
      { resumed: true, settled: 3 })
    assert.match(stderr.text(), /: done on attempt 2 of 10\n$/)
    for (const txId of txIds) assert.equal((await txById(p, txId)).status, 'Successful')
    const job = await tb.operator.jobs.get({ job_id: jobId! })
    assert.deepEqual({ state: job.state, attempts: job.attempts, result: job.result },
      { state: 'done', attempts: 2, result: report })
  } finally {
    if (!restarted) runner.start()
  }
})
