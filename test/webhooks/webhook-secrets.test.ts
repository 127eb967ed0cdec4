import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { before, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookVerificationError } from '../../src/client/index.ts'
import { SecretBox } from '../../src/secrets/secret-box.ts'
import { useTestBank } from '../support/harness.ts'
import { onboardWithSecret } from './helpers.ts'

const tb = useTestBank({ env: { BANK_SANDBOX: 'true' } })

before(async () => {
  await tb.ready
})

test('webhooks - a sealed secret opens only with the same bank key and the same partner', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-box-'))
  try {
    const box = new SecretBox({ dataDir: dir })
    const sealed = box.seal('whsec_c2VjcmV0', 'partner-a')
    assert.ok(!sealed.includes('c2VjcmV0'))
    assert.equal(box.open(sealed, 'partner-a'), 'whsec_c2VjcmV0')
    assert.throws(() => box.open(sealed, 'partner-b'), /does not open with this bank key/)
    // The key was made on first use in <data dir>/secrets-key, readable by the owner only.
    const file = path.join(dir, 'secrets-key')
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    assert.equal(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64').length, 32)
    // A later start reads the same key; another key does not open what this one sealed.
    assert.equal(new SecretBox({ dataDir: dir }).open(sealed, 'partner-a'), 'whsec_c2VjcmV0')
    const other = new SecretBox({ key: randomBytes(32), dataDir: dir })
    assert.throws(() => other.open(sealed, 'partner-a'), /BANK_SECRETS_KEY/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('webhooks - the signing secret is stored sealed and appears in no reply but the ones that made it', async () => {
  const partner = await onboardWithSecret(tb)
  const rows = await tb.bank.database.db.selectFrom('webhook_secrets').selectAll().where(
    'partner_id', '=', partner.partnerId).execute()
  assert.equal(rows.length, 1)
  const key = (secret: string) => secret.slice('whsec_'.length)
  assert.ok(!JSON.stringify(rows).includes(key(partner.secret)),
    'the database holds no plain secret')

  const rotated = await partner.client.webhooks.rotateSecret({})
  const replies = [
    await partner.client.webhooks.setEndpoint({ url: 'http://127.0.0.1:9/hooks' }),
    await partner.client.webhooks.getEndpoint({}),
    await partner.client.webhooks.listDeliveries({}),
    await tb.operator.partners.list({}),
    await tb.operator.credentials.list({ partner_id: partner.partnerId }),
    await tb.operator.entities.list({ partner_id: partner.partnerId }),
    await partner.client.entities.info({ entity_id: partner.rootEntityId }),
  ]
  const text = JSON.stringify(replies)
  for (const secret of [partner.secret, rotated.webhook_secret]) assert.ok(
    !text.includes(key(secret)), 'a reply carries a secret')
  // A second rotation shows a third secret, once more only in its own reply.
  const third = await partner.client.webhooks.rotateSecret({})
  assert.ok(![partner.secret, rotated.webhook_secret].includes(third.webhook_secret))
})

test('webhooks - verifyWebhook checks a Standard Webhooks signature with one secret or several', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`
  const next = `whsec_${randomBytes(32).toString('base64')}`
  const body = JSON.stringify({ type: 'payment.success', timestamp: '2026-11-23T08:00:00Z',
    data: { payment_id: 'p-1' } })
  const sentAt = new Date()
  const headers = {
    'webhook-id': 'e1',
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign('e1', sentAt, body),
  }
  assert.deepEqual(verifyWebhook(headers, body, secret), JSON.parse(body))
  assert.deepEqual(verifyWebhook(new Headers(headers), Buffer.from(body), [next, secret]),
    JSON.parse(body))
  // Node writes header names in lower case; other frameworks may not.
  assert.deepEqual(
    verifyWebhook({ 'Webhook-Id': 'e1', 'Webhook-Timestamp': headers['webhook-timestamp'],
    'Webhook-Signature': headers['webhook-signature'] }, body, secret), JSON.parse(body))
  assert.throws(() => verifyWebhook(headers, body, next), WebhookVerificationError)
  assert.throws(() => verifyWebhook(headers, body.replace('p-1', 'p-2'), secret),
    WebhookVerificationError)
  assert.throws(() => verifyWebhook({ ...headers, 'webhook-id': 'e2' }, body, secret),
    WebhookVerificationError)
  const stale = new Date(sentAt.getTime() - 10 * 60_000)
  const old = { 'webhook-id': 'e1', 'webhook-timestamp': String(Math.floor(stale.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign('e1', stale, body) }
  assert.throws(() => verifyWebhook(old, body, secret), /too old/)
  assert.throws(() => verifyWebhook({ 'webhook-id': 'e1' }, body, secret), /Missing required headers/)
  assert.throws(() => verifyWebhook(headers, body, []), TypeError)
})

test('webhooks - BANK_SECRETS_KEY must be base64 of 32 bytes', async () => {
  const { loadConfig } = await import('../../src/config.ts')
  const key = randomBytes(32)
  assert.deepEqual(loadConfig({ BANK_SECRETS_KEY: key.toString('base64') }).secretsKey, key)
  assert.equal(loadConfig({}).secretsKey, undefined)
  for (const bad of [randomBytes(31).toString('base64'), randomBytes(33).toString('base64'),
      'not base64 at all!']) {
    assert.throws(() => loadConfig({ BANK_SECRETS_KEY: bad }), (error: Error) => {
      assert.match(error.message, /BANK_SECRETS_KEY is not valid: must be base64 of 32 bytes/)
      assert.ok(!error.message.includes(bad), 'the key given is not repeated in the error')
      return true
    })
  }
})

test('webhooks - a partner without a secret (onboarded before webhooks) gets one when the bank first signs for it', async () => {
  const { startReceiver, appendCommitted, partnerEvent, resourceId, deliverDue } =
    await import('./helpers.ts')
  const partner = await onboardWithSecret(tb)
  await tb.bank.database.db.deleteFrom('webhook_secrets').where('partner_id', '=',
    partner.partnerId).execute()
  const receiver = await startReceiver()
  try {
    await partner.client.webhooks.setEndpoint({ url: receiver.url })
    const [eventId] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
    await deliverDue(tb)
    const post = receiver.received.find((r) => r.id === eventId)
    assert.match(post!.signature, /^v1,\S+$/)
    // The partner learns a secret by rotating; the lazily made one signs beside it for a day.
    const rotated = await partner.client.webhooks.rotateSecret({})
    assert.notEqual(rotated.previous_secret_retires_at, null)
  } finally {
    await receiver.close()
  }
})
