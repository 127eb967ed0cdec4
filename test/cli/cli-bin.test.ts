import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, test } from 'node:test'
import { onboardPartner, useTestBank } from '../support/harness.ts'
import { bankEnv, cleanEnv, removeTempDirs, runBankProcess } from './run-bank.ts'

// The other CLI tests call the CLI's program in their own process (see run-bank.ts); this
// file runs bin/bank.js itself, the TypeScript through tsx, as `npx bank` does: each exit
// status, and what reaches the real stdout and stderr.

const tb = useTestBank()
after(() => removeTempDirs())

test('cli - bin/bank.js runs the CLI through tsx and reaches the bank', async () => {
  const partner = await onboardPartner(tb)
  const run = await runBankProcess(['partner', 'list'], bankEnv(tb))
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stderr, '')
  const listed = JSON.parse(run.stdout) as { partners: { partner_id: string }[] }
  assert.deepEqual(listed.partners.map((p) => p.partner_id), [partner.partnerId])
  assert.deepEqual(listed, await tb.operator.partners.list())
})

test('cli - bin/bank.js with an unknown command exits 2 and points at bank --help', async () => {
  const run = await runBankProcess(['frobnicate'], bankEnv(tb))
  assert.equal(run.code, 2)
  assert.equal(run.stdout, '')
  const pointer = '(bank --help lists every command)'
  assert.equal(run.stderr, `error: unknown command 'frobnicate'\n${pointer}\n`)
})

test('cli - bin/bank.js prints --version and a command\'s help on stdout (exit 0) and every missing flag on stderr (exit 2)', async () => {
  const [version, help, missing] = await Promise.all([
    runBankProcess(['--version'], bankEnv(tb)),
    runBankProcess(['account', 'show', '-h'], bankEnv(tb)),
    runBankProcess(['credential', 'create'], bankEnv(tb)),
  ])
  assert.deepEqual(version, { code: 0, stdout: '0.1.0\n', stderr: '' })
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^Usage: bank account show <account_id>\n/)
  assert.equal(missing.code, 2)
  assert.equal(missing.stdout, '')
  assert.match(missing.stderr, /^error: --partner is required\nerror: --permissions is required\nusage: bank credential create /)
})

test('cli - bin/bank.js exits 1 with the error JSON on stderr when the bank refuses', async () => {
  const run = await runBankProcess(['credential', 'list', '--partner', randomUUID()], bankEnv(tb))
  assert.equal(run.code, 1, run.stderr)
  assert.equal(run.stdout, '')
  assert.equal(JSON.parse(run.stderr).error.code, 404)
})

test('cli - bin/bank.js exits 1 with a one-line message when NATS does not answer', async () => {
  const run = await runBankProcess(['partner', 'list'], cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_OPERATOR_TOKEN: tb.operatorToken }))
  assert.equal(run.code, 1)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, /^bank: .+\n$/)
})
