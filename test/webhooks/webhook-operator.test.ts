import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { expectApiError, expectRefusal } from '../support/assertions.ts'
import { useTestBank } from '../support/harness.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import {
  appendCommitted,
  deliverDue,
  partnerEvent,
  partnerWithReceiver,
  resourceId,
  type Receiver,
  type WebhookPartner,
} from './helpers.ts'

// The operators' view of webhook deliveries across partners (ops.webhook.deliveries) and a
// redelivery on a partner's behalf (ops.webhook.redeliver), audited as the operator's action.
// The job runner is stopped: the test hands events over and runs due jobs itself, moving the
// bank's clock to make retries fall due. Receivers are real HTTP servers on loopback.

const tb = useTestBank({ env: { BANK_SANDBOX: 'true' } })
let failing: { partner: WebhookPartner; receiver: Receiver }
let healthy: { partner: WebhookPartner; receiver: Receiver }
let failedEventId: string
let deliveredEventId: string

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  failing = await partnerWithReceiver(tb, { endpoint: true })
  healthy = await partnerWithReceiver(tb, { endpoint: true })
  failing.receiver.respond = () => 500
  failedEventId = (
    await appendCommitted(tb, [
      partnerEvent(tb, failing.partner.partnerId, resourceId(), { type: 'payment.failed' }),
    ])
  )[0]!
  deliveredEventId = (
    await appendCommitted(tb, [partnerEvent(tb, healthy.partner.partnerId, resourceId())])
  )[0]!
  await deliverDue(tb)
  // Retried with backoff for a day after the first attempt, then failed.
  for (let round = 0; round < 100; round++) {
    const { deliveries } = await tb.operator.webhooks.deliveries({
      partner_id: failing.partner.partnerId,
    })
    const delivery = deliveries.find((d) => d.event_id === failedEventId)!
    if (delivery.state !== 'pending') break
    tb.clock.set(new Date(Date.parse(delivery.next_attempt_at!)))
    await deliverDue(tb)
  }
})

after(async () => {
  await failing?.receiver.close()
  await healthy?.receiver.close()
})

test('webhook operators - deliveries across partners, filtered by partner, state and event type', async () => {
  const all = await tb.operator.webhooks.deliveries({})
  const ids = all.deliveries.map((d) => d.event_id)
  assert.ok(ids.includes(failedEventId) && ids.includes(deliveredEventId), 'both partners')
  const failed = await tb.operator.webhooks.deliveries({ state: 'failed' })
  assert.deepEqual(
    failed.deliveries.map((d) => [d.event_id, d.partner_id, d.state, d.last_status_code]),
    [[failedEventId, failing.partner.partnerId, 'failed', 500]],
  )
  assert.ok(failed.deliveries[0]!.attempts > 5, 'retried before it failed')
  const theirs = await tb.operator.webhooks.deliveries({ partner_id: healthy.partner.partnerId })
  assert.deepEqual(
    theirs.deliveries.map((d) => [d.event_id, d.state]),
    [[deliveredEventId, 'delivered']],
  )
  const byType = await tb.operator.webhooks.deliveries({ event_type: 'payment.failed' })
  assert.deepEqual(
    byType.deliveries.map((d) => d.event_id),
    [failedEventId],
  )
})

test('webhook operators - pages follow the cursor, newest first, each delivery once', async () => {
  const more = await appendCommitted(
    tb,
    [1, 2, 3].map(() => partnerEvent(tb, healthy.partner.partnerId, resourceId())),
  )
  await deliverDue(tb)
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 10; page++) {
    const reply = await tb.operator.webhooks.deliveries({ limit: 2, ...(cursor ? { cursor } : {}) })
    seen.push(...reply.deliveries.map((d) => d.event_id))
    cursor = reply.next_cursor
    if (!cursor) break
  }
  assert.deepEqual(seen, [...more].reverse().concat([deliveredEventId, failedEventId]))
})

test('webhook operators - a redelivery on the partner’s behalf is sent and audited', async () => {
  failing.receiver.respond = () => 200
  const asked = await tb.operator.webhooks.redeliver({ event_id: failedEventId })
  assert.equal(asked.delivery.state, 'pending')
  assert.equal(asked.delivery.partner_id, failing.partner.partnerId)
  await deliverDue(tb)
  const { deliveries } = await tb.operator.webhooks.deliveries({ state: 'delivered' })
  const delivered = deliveries.find((d) => d.event_id === failedEventId)!
  assert.equal(delivered.last_status_code, 200)
  assert.equal(failing.receiver.received.at(-1)!.id, failedEventId)
  const { entries } = await tb.operator.audit.list({ action: 'webhook.redeliver' })
  assert.equal(entries.length, 1)
  assert.equal(entries[0]!.actor, await operatorCredentialId(tb))
  assert.equal(entries[0]!.result, 'ok')
  assert.ok(entries[0]!.targets.includes(failing.partner.partnerId), 'the partner is a target')
  assert.ok(entries[0]!.targets.includes(failedEventId), 'the event is a target')
})

test('webhook operators - bad input is a 400 naming the field; an unknown event is a 404', async () => {
  await expectRefusal(tb.operator.webhooks.deliveries({ state: 'lost' as 'failed' }), 400, 'state')
  await expectRefusal(tb.operator.webhooks.deliveries({ partner_id: 'nope' }), 400, 'partner_id')
  await expectRefusal(tb.operator.webhooks.deliveries({ cursor: 'x' }), 400, 'cursor')
  await expectRefusal(tb.operator.webhooks.deliveries({ limit: 201 }), 400, 'limit')
  await expectApiError(
    tb.operator.webhooks.redeliver({ event_id: '00000000-0000-4000-8000-000000000000' }),
    404,
  )
  await expectRefusal(tb.operator.webhooks.redeliver({ event_id: 'x' }), 400, 'event_id')
})
