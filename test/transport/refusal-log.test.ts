import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import { pino } from 'pino'
import { startBank, type Bank } from '../../src/app.ts'
import { onboardPartner, rawRequest, startTestBank, type TestBank, type TestPartner }
  from '../support/harness.ts'

// Every request's log line (transport/nats/endpoint.ts); a refusal's (4xx) also names the
// error type and the partner: the caller's, or, when no credential was accepted, the one the
// subject names. The bank here logs into the test, which reads the JSON lines it wrote.

let tb: TestBank
let bank: Bank
let p: TestPartner
const lines: Array<Record<string, unknown>> = []

before(async () => {
  tb = await startTestBank()
  p = await onboardPartner(tb, { approve: true })
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(
        JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  // The harness's bank steps aside for one on the same storage that logs here.
  await tb.bank.stop()
  bank = await startBank({ config: tb.config, clock: tb.clock, log: pino({ level: 'info' }, sink),
    natsUrl: tb.natsUrl, validateResponses: true })
})

after(async () => {
  await bank?.stop()
  await tb?.stop()
})

/** The request log line of the endpoint's reply with this code (the newest). */
function requestLine(endpoint: string, code: number): Record<string, unknown> {
  const found = lines.filter((l) => l.msg === 'request' && l.endpoint === endpoint
    && l.code === code).at(-1)
  assert.ok(found, `a request line of ${endpoint} with code ${code}`)
  return found
}

const infoSubject = () => `svc.entity.${p.partnerId}.info`

test('refusal log - a partner\'s refusal names the partner and the error type', async () => {
  const notFound = await rawRequest(tb, infoSubject(),
    JSON.stringify({ entity_id: randomUUID() }), { token: p.token })
  assert.equal(notFound.code, 404)
  const line = requestLine('entity_info', 404)
  assert.equal(line.partner_id, p.partnerId)
  assert.equal(line.error_type, 'not_found')
  assert.equal(typeof line.ms, 'number')

  const invalid = await rawRequest(tb, infoSubject(), JSON.stringify({ entity_id: 'x' }),
    { token: p.token })
  assert.equal(invalid.code, 400)
  assert.deepEqual([requestLine('entity_info', 400).partner_id,
    requestLine('entity_info', 400).error_type], [p.partnerId, 'invalid_request'])
})

test('refusal log - without an accepted credential, the partner the subject names', async () => {
  const refused = await rawRequest(tb, infoSubject(), JSON.stringify({ entity_id: randomUUID() }),
    { token: 'not-a-token' })
  assert.equal(refused.code, 401)
  const line = requestLine('entity_info', 401)
  assert.equal(line.partner_id, p.partnerId)
  assert.equal(line.error_type, 'unauthorized')
})

test('refusal log - a partner on another partner\'s subject: the caller is named', async () => {
  const other = randomUUID()
  const refused = await rawRequest(tb, `svc.entity.${other}.info`,
    JSON.stringify({ entity_id: randomUUID() }), { token: p.token })
  assert.equal(refused.code, 403)
  const line = requestLine('entity_info', 403)
  assert.equal(line.partner_id, p.partnerId)
  assert.equal(line.error_type, 'forbidden')
})

test('refusal log - an answered request\'s line has neither', async () => {
  const ok = await rawRequest(tb, `svc.entity.${p.partnerId}.list-entities`, '{}',
    { token: p.token })
  assert.equal(ok.code, 200)
  const line = requestLine('entity_list', 200)
  assert.equal('error_type' in line, false)
  assert.equal('partner_id' in line, false)
})
