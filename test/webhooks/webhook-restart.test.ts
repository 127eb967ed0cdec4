import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { appendCommitted, deliverDue, partnerWithReceiver, partnerEvent, resourceId,  type Receiver, type WebhookPartner } from './helpers.ts'

// The bank key that seals signing secrets is kept in the data directory when no
// BANK_SECRETS_KEY is set: a restart must find it and go on signing with the same secrets.
const tb = useTestBank({ persistent: true, env: { BANK_SANDBOX: 'true' } })
let partner: WebhookPartner
let receiver: Receiver

before(async () => {
  await tb.ready
  ;({ partner, receiver } = await partnerWithReceiver(tb, { endpoint: true }))
})

after(async () => {
  await receiver?.close()
})

test('webhooks - after a restart the bank signs with the same secrets (its key is kept in the data directory)', async () => {
  const keyFile = path.join(tb.config.dataDir, 'secrets-key')
  const key = fs.readFileSync(keyFile, 'utf8')
  assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600)
  // Two rotations: the first secret is retired at once by the second, so two sign.
  await partner.client.webhooks.rotateSecret({})
  const latest = await partner.client.webhooks.rotateSecret({})
  await tb.restart()
  await tb.bank.services.jobRunner.stop()
  assert.equal(fs.readFileSync(keyFile, 'utf8'), key)

  receiver.secrets = [partner.secret, latest.webhook_secret]
  const [eventId] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
  await deliverDue(tb)
  const post = receiver.received.find((r) => r.id === eventId)
  assert.ok(post, 'delivered after the restart')
  assert.equal(post.signature.split(' ').length, 2, 'the current secret and the one it replaced')
  assert.ok(post.verified[0] instanceof Error,
    'the first secret was retired by the second rotation')
  assert.ok(!(post.verified[1] instanceof Error), 'the latest secret verifies it')
})
