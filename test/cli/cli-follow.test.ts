import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { runCli } from '../../src/cli/main.ts'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { createLogger } from '../../src/logger.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, transferBody, txById } from '../transfers/helpers.ts'
import { bankEnv, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank clearing run`, `bank sandbox advance` and `bank debit run` send their call detached
// and follow the job the bank answers with until it ends, saying how it goes on stderr
// (plain lines, or one line rewritten in place on a terminal) and printing its result on
// stdout; `--detach` prints the job instead; `bank jobs get <id> --follow` follows one. A
// job that fails ends the command with exit 1. (The detached answer and `jobs get` on both
// back ends, and a followed job taken over after its instance died: test/jobs/job-detach;
// a real instance killed: cli-follow-chaos.)

const tb = useTestBank()
let p: TestPartner
after(() => removeTempDirs())
before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

/** An EFT waiting for the next clearing cycle. */
async function pendingEft(): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  return (await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))).tx_id
}

test('cli - clearing run follows its job and prints the report; progress lines go to stderr', async () => {
  const txId = await pendingEft()
  const run = await bank('clearing', 'run')
  const report = json(run)
  assert.equal(report.settled, 1)
  assert.match(report.cycle, /^manual:/)
  assert.equal((await txById(p, txId)).status, 'Successful')
  const lines = run.stderr.trimEnd().split('\n')
  assert.match(lines[0]!, /^clearing\.cycle job [0-9a-f-]{36} queued; following it until it ends \(Ctrl-C stops following, not the job: bank jobs get [0-9a-f-]{36} --follow\)$/)
  assert.match(lines.at(-1)!, /^clearing\.cycle job [0-9a-f]{8}: done$/)
  assert.equal(run.stderr.includes('\r'), false, 'plain lines when stderr is not a terminal')

  const advanced = json(await bank('sandbox', 'advance', '90m'))
  assert.equal(advanced.now, tb.clock.now().toISOString())
  assert.equal(typeof advanced.jobs_run, 'number')
  const collected = json(await bank('debit', 'run', '--format', 'json'))
  assert.equal(typeof collected.submitted, 'number')
})

test('cli - --detach prints the job at once; jobs get shows it; jobs get --follow prints it once it has ended', async () => {
  await pendingEft()
  const job = json(await bank('clearing', 'run', '--detach'))
  assert.equal(job.kind, 'clearing.cycle')
  assert.equal(job.state, 'queued')
  const shown = json(await bank('jobs', 'get', job.job_id))
  assert.equal(shown.job_id, job.job_id)
  const followed = await bank('jobs', 'get', job.job_id, '--follow')
  const ended = json(followed)
  assert.equal(ended.state, 'done')
  assert.equal(ended.result.settled, 1)
  assert.match(followed.stderr, /: done\n$/)
  const usage = await bank('jobs', 'get', job.job_id, '--follow', 'now')
  assert.equal(usage.code, 2)
  const unknown = await bank('jobs', 'get', randomUUID(), '--follow')
  assert.equal(unknown.code, 1)
  assert.equal(JSON.parse(unknown.stderr).error.code, 404)
})

test('cli - on a terminal the progress is one line rewritten in place', async () => {
  let stderr = ''
  let stdout = ''
  const code = await runCli(['clearing', 'run'], bankEnv(tb), { stdout: (text) => void (
    stdout += text), stderr: (text) => void (stderr += text), terminal: true })
  assert.equal(code, 0, stderr)
  assert.equal(typeof JSON.parse(stdout).settled, 'number')
  assert.match(stderr, /\r\x1b\[Kclearing\.cycle job [0-9a-f]{8}: done · \d+s\n$/)
})

/** A job of a kind of its own, run once by a runner of the test's, whose only attempt(s) fail. */
async function failingJob(attemptsMax: number): Promise<string> {
  const kind = `test.follow.${randomUUID()}`
  const runner = new JobRunner(tb.bank.database.db, tb.clock, createLogger('silent'),
    { poll_ms: 1000, concurrency_max: 1 })
  runner.register({
    kind,
    attempts_max: attemptsMax,
    lease_ms: 60_000,
    backoff_base_ms: 60_000,
    backoff_max_ms: 60_000,
    run: async () => {
      throw new Error('rail unreachable (test)')
    },
  })
  const id = await runner.enqueue(tb.bank.database.db, { kind, key: 'k' })
  assert.ok(id)
  assert.equal(await runner.runDue(), 1)
  return id
}

test('cli - following a job whose attempt failed exits 1 with the error and when it runs again; a dead one too', async () => {
  const retried = await failingJob(3)
  const failed = await bank('jobs', 'get', retried, '--follow')
  assert.equal(failed.code, 1, failed.stdout)
  const error = JSON.parse(failed.stderr.slice(failed.stderr.indexOf('{'))).error
  assert.equal(error.type, 'job_failed')
  assert.match(error.message, /attempt 1 of 3 failed: rail unreachable \(test\); it runs again at /)
  assert.deepEqual({ state: error.job.state, attempts: error.job.attempts },
    { state: 'queued', attempts: 1 })

  const dead = await bank('jobs', 'get', await failingJob(1), '--follow')
  assert.equal(dead.code, 1)
  const deadError = JSON.parse(dead.stderr.slice(dead.stderr.indexOf('{'))).error
  assert.match(deadError.message, /attempt 1 of 1 failed: rail unreachable \(test\); it is dead/)
  assert.match(dead.stderr, /: dead after attempt 1 of 1: rail unreachable \(test\)\n/)
})
