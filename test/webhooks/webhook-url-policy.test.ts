import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { expectRefusal } from '../support/assertions.ts'
import { useTestBank } from '../support/harness.ts'
import { appendCommitted, deliverDue, deliveryOf, partnerWithReceiver, partnerEvent, resourceId,  type Receiver, type WebhookPartner } from './helpers.ts'

// Production mode: only https:// to public addresses, checked when an endpoint is set and
// again when a webhook is sent.
const tb = useTestBank({ env: { BANK_SANDBOX: 'false' } })
let partner: WebhookPartner
let receiver: Receiver

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  ;({ partner, receiver } = await partnerWithReceiver(tb, { endpoint: false }))
})

after(async () => {
  await receiver?.close()
})

test('webhooks - production refuses endpoints that are not https:// or lead to loopback, private or link-local addresses', async () => {
  const refused = [
    'http://hooks.example.com/bank',
    'https://127.0.0.1/hooks',
    'https://127.1.2.3:8443/hooks',
    'https://localhost/hooks',
    'https://api.localhost/hooks',
    'https://10.0.0.7/hooks',
    'https://172.16.4.4/hooks',
    'https://192.168.1.20/hooks',
    'https://100.64.0.1/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hooks',
    'https://[::1]/hooks',
    'https://[fe80::1]/hooks',
    'https://[fd12:3456::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
    'https://[::ffff:a00:1]/hooks',
    'https://user:password@hooks.example.com/',
    'hooks.example.com/bank',
    `https://hooks.example.com/${'x'.repeat(2048)}`,
  ]
  for (const url of refused) await expectRefusal(partner.client.webhooks.setEndpoint({ url }), 400,
    'url')
  assert.deepEqual(await partner.client.webhooks.getEndpoint({}), { url: null })

  // A public address, and a name that does not resolve (yet): decided again at delivery.
  for (const url of ['https://93.184.215.14/hooks', 'https://hooks.invalid/bank']) {
    assert.deepEqual(await partner.client.webhooks.setEndpoint({ url }), { url })
  }
  // A read-only credential may look, not change.
  const reader = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'] })
  const { BankClient } = await import('../../src/client/index.ts')
  const readOnly =
    new BankClient({ connection: tb.nc, token: reader.token, partnerId: partner.partnerId })
  assert.deepEqual(await readOnly.webhooks.getEndpoint({}), { url: 'https://hooks.invalid/bank' })
  await readOnly.webhooks.listDeliveries({})
  await expectRefusal(readOnly.webhooks.setEndpoint({ url: '' }), 403)
  await expectRefusal(readOnly.webhooks.rotateSecret({}), 403)
})

test('webhooks - production re-checks at delivery: a callback_url to loopback is refused and nothing is sent', async () => {
  const port = new URL(receiver.url).port
  const cases = [
    { url: `https://127.0.0.1:${port}/hooks`, error: /refused: 127\.0\.0\.1 is a loopback address/ },
    { url: `https://localhost:${port}/hooks`, error: /refused: .* is a loopback address/ },
    { url: `http://127.0.0.1:${port}/hooks`, error: /must be an https:\/\/ URL/ },
  ]
  for (const { url, error } of cases) {
    const [eventId] = await appendCommitted(tb,
      [partnerEvent(tb, partner.partnerId, resourceId(), { endpoint_url: url })])
    await deliverDue(tb)
    const delivery = await deliveryOf(partner, eventId!)
    assert.equal(delivery.state, 'pending', 'a refused attempt is retried like any failed one')
    assert.equal(delivery.attempts, 1)
    assert.equal(delivery.last_status_code, null)
    assert.match(delivery.last_error!, error)
  }
  assert.equal(receiver.received.length, 0)
})
