import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { bankEnv, json, removeTempDirs, runBank } from '../cli/run-bank.ts'

// `bank sandbox clock`, `bank sandbox advance 3d` / `--to <RFC 3339>` and
// `bank sandbox messages`, derived from the ops.sandbox.* operations, run as an operator would.

const tb = useTestBank()
after(() => removeTempDirs())
before(async () => {
  await tb.ready
})

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

test('cli - sandbox clock shows the bank time; sandbox advance 3d and --to move it forward', async () => {
  const start = tb.clock.now().getTime()
  assert.deepEqual(json(await bank('sandbox', 'clock')), { now: new Date(start).toISOString() })
  const advanced = json(await bank('sandbox', 'advance', '3d'))
  assert.equal(advanced.now, new Date(start + 3 * 86_400_000).toISOString())
  assert.equal(typeof advanced.jobs_run, 'number')
  assert.equal(json(await bank('sandbox', 'advance', '90m')).now,
    new Date(start + 3 * 86_400_000 + 90 * 60_000).toISOString())
  const to = new Date(start + 5 * 86_400_000).toISOString()
  assert.equal(json(await bank('sandbox', 'advance', '--to', to)).now, to)
  assert.equal(tb.clock.now().toISOString(), to)
})

test('cli - sandbox advance: a duration it cannot read exits 2; a time before now exits 1 with the 400', async () => {
  const unreadable = await bank('sandbox', 'advance', '3 days')
  assert.equal(unreadable.code, 2)
  assert.match(unreadable.stderr, /cannot read the duration/)
  const back = await bank('sandbox', 'advance', '--to', '2020-01-01T00:00:00Z')
  assert.equal(back.code, 1)
  const refusal = JSON.parse(back.stderr).error
  assert.equal(refusal.code, 400)
  assert.match(refusal.message, /never moves back/)
  const neither = await bank('sandbox', 'advance')
  assert.equal(neither.code, 1)
  assert.equal(JSON.parse(neither.stderr).error.code, 400)
})

test('cli - sandbox messages lists what the notifier sent', async () => {
  const to = `cli-${randomUUID()}@example.com`
  await tb.bank.services.notifier.send({ key: `cli-${to}`, to, subject: 'Your PIN',
    text: 'PIN 123456' })
  const listed = json(await bank('sandbox', 'messages', '--to', to, '--limit', '5'))
  assert.deepEqual(listed.messages.map((m: { to: string; subject: string }) => [m.to, m.subject]),
    [[to, 'Your PIN']])
})
