import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { BankApiError, BankClient, BankConnectionError, OperatorClient } from '../../src/client/index.ts'
import { expectApiError } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { findNatsServerBinary, startNatsServer } from '../../dev/nats-server.ts'

// fromEnv/fromDataDir against a real bank, and errors that name the setting at fault: the
// URL tried and where it came from, a refused credential, a partner id that is not the
// credential's partner, one kind of credential where the other belongs.

const tb = useTestBank()
let p: TestPartner
const dirs: string[] = []
const clients: Array<{ close(): Promise<void> }> = []

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})
after(async () => {
  await Promise.all(clients.map((client) => client.close()))
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function keep<C extends { close(): Promise<void> }>(client: C): C {
  clients.push(client)
  return client
}

function dataDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-client-'))
  dirs.push(dir)
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name),
    `${text}\n`)
  return dir
}

const partnerEnv = (overrides: Record<string, string> = {}) => ({
  NATS_URL: tb.natsUrl,
  BANK_PARTNER_ID: p.partnerId,
  BANK_PARTNER_TOKEN: p.token,
  ...overrides,
})

test('client - fromEnv and fromDataDir reach the bank with what they found', async () => {
  const operator = keep(OperatorClient.fromEnv(
    { env: { NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: tb.operatorToken } }))
  const partners = (await operator.partners.list()).partners.map((row) => row.partner_id)
  assert.ok(partners.includes(p.partnerId))

  const dir = dataDir({ 'nats-url': tb.natsUrl, 'operator-token': tb.operatorToken })
  const fromDir = keep(OperatorClient.fromDataDir(dir))
  assert.deepEqual(await fromDir.partners.list(), await operator.partners.list())
  const viaVariable = keep(OperatorClient.fromEnv({ env: { BANK_DATA_DIR: dir } }))
  assert.deepEqual(await viaVariable.partners.list(), await operator.partners.list())

  const bank = keep(BankClient.fromEnv({ env: partnerEnv() }))
  assert.equal(bank.partnerId, p.partnerId)
  assert.equal((await bank.entities.list()).entities[0]!.id, p.rootEntityId)
  const bankFromDir = keep(BankClient.fromDataDir(dir, { env: { BANK_PARTNER_ID: p.partnerId, BANK_PARTNER_TOKEN: p.token, NATS_URL: 'nats://127.0.0.1:1' } }))
  assert.equal((await bankFromDir.entities.list()).entities[0]!.id, p.rootEntityId,
    'fromDataDir takes the URL from the directory, not NATS_URL')
})

test('client - NATS unreachable: the error names the URL tried and where it came from', async () => {
  const fromVariable = keep(OperatorClient.fromEnv({ env: { NATS_URL: 'nats://127.0.0.1:1', BANK_OPERATOR_TOKEN: tb.operatorToken } }))
  const error = await fromVariable.partners.list().then(() => undefined, (e: unknown) => e)
  assert.ok(error instanceof BankConnectionError, `got ${String(error)}`)
  assert.equal(error.url, 'nats://127.0.0.1:1')
  assert.equal(error.from, 'NATS_URL')
  assert.match(error.message, /^cannot reach NATS at nats:\/\/127\.0\.0\.1:1 \(from NATS_URL\): connection refused/)

  const dir = dataDir({ 'nats-url': 'nats://127.0.0.1:2', 'operator-token': tb.operatorToken })
  const fromFile = keep(OperatorClient.fromEnv({ env: { BANK_DATA_DIR: dir } }))
  const fileError = await fromFile.partners.list().then(() => undefined, (e: unknown) => e)
  assert.ok(fileError instanceof BankConnectionError)
  assert.ok(fileError.message.startsWith(`cannot reach NATS at nats://127.0.0.1:2 (from ${path.join(dir, 'nats-url')}): `), fileError.message)

  // The next call tries again rather than repeating the first failure.
  const again = await fromFile.partners.list().then(() => undefined, (e: unknown) => e)
  assert.ok(again instanceof BankConnectionError)
  assert.notEqual(again, fileError)
})

test('client - a NATS server with no bank on it: the 503 names the URL and where it came from', async () => {
  const binary = findNatsServerBinary()
  assert.ok(binary, 'the test bank found one')
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-client-nats-'))
  dirs.push(storeDir)
  const empty = await startNatsServer({ binary, storeDir })
  try {
    const bank = keep(BankClient.fromEnv({ env: partnerEnv({ NATS_URL: empty.url }) }))
    const error = await expectApiError(bank.entities.list(), 503)
    assert.equal(error.type, 'unavailable')
    assert.equal(error.message, `no bank instance is answering on ${empty.url} (from NATS_URL)`)
  } finally {
    await Promise.all(clients.splice(0).map((client) => client.close()))
    await empty.stop()
  }
})

test('client - a refused credential (401) names where the token came from', async () => {
  const forged = `pbk_${'A'.repeat(43)}`
  const bank = keep(BankClient.fromEnv({ env: partnerEnv({ BANK_PARTNER_TOKEN: forged }) }))
  const error = await expectApiError(bank.entities.list(), 401)
  assert.equal(error.type, 'unauthorized')
  assert.match(error.message, /^missing, malformed, expired or revoked credential: the credential from BANK_PARTNER_TOKEN was refused/)

  const dir = dataDir({ 'operator-token': `opk_${'B'.repeat(43)}` })
  const local = keep(OperatorClient.fromEnv({ env: { NATS_URL: tb.natsUrl, BANK_DATA_DIR: dir } }))
  const operatorError = await expectApiError(local.partners.list(), 401)
  assert.ok(operatorError.message.includes(
    `the credential from ${path.join(dir, 'operator-token')} was refused`), operatorError.message)

  // A revoked credential: the same message, for the same setting.
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  await tb.operator.credentials.revoke({ credential_id: issued.id })
  const revoked =
    keep(BankClient.fromEnv({ env: partnerEnv({ BANK_PARTNER_TOKEN: issued.token }) }))
  assert.match((await expectApiError(revoked.entities.list(), 401)).message, /the credential from BANK_PARTNER_TOKEN was refused/)
  // Told no source, the client leaves the bank's message as it is.
  const plain = keep(new BankClient({ servers: tb.natsUrl, token: forged, partnerId: p.partnerId }))
  assert.equal((await expectApiError(plain.entities.list(), 401)).message,
    'missing, malformed, expired or revoked credential')
})

test('client - a partner id that is not the credential\'s partner (403) names the partner id', async () => {
  const other = randomUUID()
  const bank = keep(BankClient.fromEnv({ env: partnerEnv({ BANK_PARTNER_ID: other }) }))
  const error = await expectApiError(bank.entities.list(), 403)
  assert.equal(error.type, 'forbidden')
  assert.equal(
    error.message,
    `the subject names another partner: the partner id ${other} from BANK_PARTNER_ID is not the ` +
      `partner the credential from BANK_PARTNER_TOKEN belongs to`,
  )
  // Told no source, the client leaves the bank's message as it is.
  const plain = keep(new BankClient({ servers: tb.natsUrl, token: p.token, partnerId: other }))
  assert.equal((await expectApiError(plain.entities.list(), 403)).message,
    'the subject names another partner')
})

test('client - one kind of credential where the other belongs (403) names the setting', async () => {
  const bank =
    keep(BankClient.fromEnv({ env: partnerEnv({ BANK_PARTNER_TOKEN: tb.operatorToken }) }))
  assert.equal(
    (await expectApiError(bank.entities.list(), 403)).message,
    "operator credentials act on ops. subjects only: the credential from BANK_PARTNER_TOKEN is " +
      "an operator credential; a partner client needs a partner's",
  )
  const operator =
    keep(OperatorClient.fromEnv({ env: { NATS_URL: tb.natsUrl, BANK_OPERATOR_TOKEN: p.token } }))
  assert.equal(
    (await expectApiError(operator.partners.list(), 403)).message,
    "an operator credential is required: the credential from BANK_OPERATOR_TOKEN is a partner " +
      "credential; an operator client needs an operator's",
  )
  const reader = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const readOnly =
    keep(BankClient.fromEnv({ env: partnerEnv({ BANK_PARTNER_TOKEN: reader.token }) }))
  const lacks =
    await expectApiError(readOnly.entities.create({ entity_type: 'business', email: 'x@y.example',
    country: 'ZAF', name: 'X Ltd', trading_name: 'X', registration_number: '202000000001' }), 403)
  assert.equal(lacks.message, 'the credential lacks the write permission: the credential from ' +
    'BANK_PARTNER_TOKEN lacks that permission: ask the bank for a credential that has it')
})

test('client - a refusal about the request, not the settings, is left as the bank said it', async () => {
  const stranger = await onboardPartner(tb)
  const bank = keep(BankClient.fromEnv({ env: partnerEnv() }))
  const error = await expectApiError(bank.bulkPayments.status({ entity_id: stranger.rootEntityId,
    bulk_payment_id: 'b-1' }), 403)
  assert.equal(error.message, 'the subject names an entity of another partner')
  assert.ok(error instanceof BankApiError)
})
