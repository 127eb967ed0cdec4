import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import { pino } from 'pino'
import { startBank } from '../../src/app.ts'
import { allOperations } from '../../src/contract/index.ts'
import { assertErrorReply } from '../transport/error-reply.ts'
import { rawRequest, useTestBank } from '../support/harness.ts'
import { pgliteSeed } from '../support/templates.ts'
import { fixtureBankEnv, prepareFixture, rightfulToken, sampledOperationNames, subjectOf, validBody,
  type OperationFixture } from '../transport/operation-bodies.ts'

// Production (BANK_SANDBOX=false) refuses every ops.sandbox subject (and a partner's own
// svc.sandbox.<partner_id> ones) with 403, whatever the
// body, after checking who calls; start-up says which mode the bank runs in.

const tb = useTestBank({ env: { ...fixtureBankEnv, BANK_SANDBOX: 'false' } })
let f: OperationFixture
const sandboxOperations = allOperations().filter((op) => op.subject.startsWith('ops.sandbox.') ||
  op.subject.startsWith('svc.sandbox.'))
const dirs: string[] = []

before(async () => {
  await tb.ready
  f = await prepareFixture(tb)
})
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('sandbox - production refuses every ops.sandbox and svc.sandbox subject with 403 before reading the body', async () => {
  assert.ok(sandboxOperations.length >= 5, sandboxOperations.map((op) => op.subject).join(', '))
  for (const op of sandboxOperations) {
    const subject = subjectOf(op, f.partner.partnerId)
    const token = rightfulToken(op, f)
    // A sample body where one exists (an operation added meanwhile may not have one yet).
    const body = sampledOperationNames.includes(op.name) ? validBody(op, f) : {}
    const valid = await rawRequest(tb, subject, JSON.stringify(body), { token })
    assertErrorReply(valid, 403, 'forbidden', op.name)
    assert.match(valid.body.error.message, /sandbox mode only/, op.name)
    const unreadable = await rawRequest(tb, subject, '{not json', { token })
    assertErrorReply(unreadable, 403, 'forbidden', `${op.name}: the body is not read`)
    const anonymous = await rawRequest(tb, subject, '{}')
    assert.equal(anonymous.code, 401, `${op.name}: who calls is still checked first`)
  }
  assert.equal(tb.config.sandbox, false)
})

/**
 * Starts a bank of its own (embedded, in memory, its own queue group) and returns its start-up log
 * lines.
 */
async function startupLog(sandbox: boolean): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line))
      done()
    },
  })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-sandbox-mode-'))
  dirs.push(dataDir)
  const group = `sandbox-mode-${sandbox}-${process.pid}`
  const bank = await startBank({
    config: { ...tb.config, databaseUrl: undefined, dataDir, sandbox, serviceName: group,
      queueGroup: group },
    clock: tb.clock,
    log: pino({ level: 'info' }, sink),
    natsUrl: tb.natsUrl,
    pgliteDir: 'memory://',
    pgliteSeed: await pgliteSeed(),
    // Production on the file's open server: what is tested here is the mode's log line.
    allowOpenNats: true,
  })
  await bank.stop()
  return lines
}

test('sandbox - start-up logs the mode', async () => {
  for (const sandbox of [true, false]) {
    const started = (await startupLog(sandbox)).find((line) => line.sandbox !== undefined)
    assert.ok(started, 'a start-up line names the mode')
    assert.equal(started.sandbox, sandbox)
    assert.match(String(started.msg), sandbox ? /sandbox mode/ : /production mode/)
  }
})
