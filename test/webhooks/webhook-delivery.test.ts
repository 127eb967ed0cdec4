import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { WebhookVerificationError } from 'standardwebhooks'
import { expectRefusal } from '../support/assertions.ts'
import { useTestBank } from '../support/harness.ts'
import { webhook_limits_default } from '../../src/webhooks/webhook-limits.ts'
import {
  appendCommitted,
  deliverDue,
  deliveryOf,
  onboardWithSecret, partnerWithReceiver,
  partnerEvent,
  resourceId,
  startReceiver,
  type Receiver,
  type WebhookPartner,
} from './helpers.ts'

// Delivery in sandbox mode, so that the receivers may live on http://127.0.0.1.
const tb = useTestBank({ env: { BANK_SANDBOX: 'true' } })
let partner: WebhookPartner
let receiver: Receiver

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  ;({ partner, receiver } = await partnerWithReceiver(tb, { endpoint: true }))
})

after(async () => {
  await receiver?.close()
})

const hour_ms = 3_600_000

function postsOf(id: string) {
  return receiver.received.filter((r) => r.id === id)
}

test('webhooks - an event is POSTed with Standard Webhooks headers, signed with the partner secret, body {type, timestamp, data}', async () => {
  const batch = resourceId()
  const event = partnerEvent(tb, partner.partnerId, batch, { type: 'bulk_payment.verified',
    data: { bulk_payment_id: batch, status: 'processing' } })
  const [eventId] = await appendCommitted(tb, [event])
  await deliverDue(tb)

  const [post, ...more] = postsOf(eventId!)
  assert.ok(post, 'the receiver got the webhook')
  assert.equal(more.length, 0)
  assert.equal(post.contentType, 'application/json')
  assert.deepEqual(post.verified, [{ type: 'bulk_payment.verified',
    timestamp: '2026-11-23T08:00:00Z', data: { bulk_payment_id: batch, status: 'processing' } }])
  assert.deepEqual(JSON.parse(post.body), { type: 'bulk_payment.verified',
    timestamp: tb.clock.now().toISOString().replace('.000Z', 'Z'), data: event.data })
  assert.match(post.signature, /^v1,[A-Za-z0-9+/]+=*$/)
  // webhook-timestamp is the wall-clock time of the attempt, not the bank's clock
  // (2026-11-23 here), so the receiver's tolerance check passed above.
  const sentAt = Number(post.timestamp) * 1000
  assert.ok(Math.abs(sentAt - Date.now()) < 5 * 60_000,
    `webhook-timestamp ${post.timestamp} is near the wall clock`)
  assert.notEqual(Math.floor(tb.clock.now().getTime() / 1000), Number(post.timestamp))

  const delivery = await deliveryOf(partner, eventId!)
  assert.equal(delivery.state, 'delivered')
  assert.equal(delivery.attempts, 1)
  assert.equal(delivery.last_status_code, 200)
  assert.equal(delivery.last_error, null)
  assert.equal(delivery.event_type, 'bulk_payment.verified')
  assert.equal(delivery.resource_id, batch)
  assert.equal(delivery.delivered_at, '2026-11-23T08:00:00Z')
})

test('webhooks - a receiver answering 500 is retried with growing backoff and the same webhook-id until it answers 2xx', async () => {
  const [eventId] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
  let failures = 3
  receiver.respond = (id) => (id === eventId && failures-- > 0 ? 500 : 200)
  const delays: number[] = []
  try {
    await deliverDue(tb)
    for (let round = 0; round < 10; round++) {
      const delivery = await deliveryOf(partner, eventId!)
      if (delivery.state !== 'pending') break
      assert.equal(delivery.last_status_code, 500)
      assert.equal(delivery.last_error, 'receiver answered 500')
      const next = Date.parse(delivery.next_attempt_at!)
      delays.push(next - Date.parse(delivery.last_attempt_at!))
      // Not due yet: nothing is sent again.
      const before = postsOf(eventId!).length
      await deliverDue(tb)
      assert.equal(postsOf(eventId!).length, before)
      tb.clock.set(new Date(next))
      await deliverDue(tb)
    }
  } finally {
    receiver.respond = () => 200
  }
  const posts = postsOf(eventId!)
  assert.deepEqual(posts.map((p) => p.status), [500, 500, 500, 200])
  assert.ok(posts.every((p) => p.id === eventId && p.verified[0]
    && !(p.verified[0] instanceof Error)), 'every attempt is signed and carries the event id')
  assert.ok(posts.every((p) => p.body === posts[0]!.body), 'every attempt sends the same body')
  assert.equal(delays.length, 3)
  assert.ok(delays[0]! > 0 && delays[0]! < delays[1]! && delays[1]! < delays[2]!,
    `backoff grows: ${delays.join(', ')} ms`)
  const delivery = await deliveryOf(partner, eventId!)
  assert.equal(delivery.state, 'delivered')
  assert.equal(delivery.attempts, 4)
  assert.equal(delivery.last_status_code, 200)
  assert.equal(delivery.next_attempt_at, null)
})

test('webhooks - a delivery still refused 24 hours after its first attempt is failed and tried no more', async () => {
  const [eventId] = await appendCommitted(tb,
    [partnerEvent(tb, partner.partnerId, resourceId(), { type: 'payment.failed' })])
  receiver.respond = (id) => (id === eventId ? 503 : 200)
  const firstAttemptAt = tb.clock.now().getTime()
  try {
    await deliverDue(tb)
    for (let round = 0; round < 100; round++) {
      const delivery = await deliveryOf(partner, eventId!)
      if (delivery.state !== 'pending') break
      // Still pending: less than a day since the first attempt.
      assert.ok(Date.parse(delivery.last_attempt_at!) - firstAttemptAt < 24 * hour_ms)
      tb.clock.set(new Date(Date.parse(delivery.next_attempt_at!)))
      await deliverDue(tb)
    }
  } finally {
    receiver.respond = () => 200
  }
  const delivery = await deliveryOf(partner, eventId!)
  assert.equal(delivery.state, 'failed')
  assert.equal(delivery.last_status_code, 503)
  assert.equal(delivery.next_attempt_at, null)
  assert.ok(Date.parse(delivery.last_attempt_at!) - firstAttemptAt >= 24 * hour_ms,
    'retried for at least 24 hours')
  assert.equal(postsOf(eventId!).length, delivery.attempts)
  assert.ok(delivery.attempts > 5)
  tb.clock.advance(7 * 24 * hour_ms)
  await deliverDue(tb)
  assert.equal(postsOf(eventId!).length, delivery.attempts, 'a failed delivery is not tried again')
  const failed = await partner.client.webhooks.listDeliveries({ event_type: 'payment.failed' })
  assert.ok(failed.deliveries.some((d) => d.event_id === eventId && d.state === 'failed'))
  // A day of nothing but failures paused the endpoint (its circuit breaker); setting the
  // endpoint again resumes it.
  const { endpoints } = await tb.operator.webhooks.endpoints({ partner_id: partner.partnerId })
  assert.deepEqual(endpoints.map((e) => [e.url, e.state]), [[receiver.url, 'paused']])
  await partner.client.webhooks.setEndpoint({ url: receiver.url })
  assert.deepEqual((await tb.operator.webhooks.endpoints({ partner_id: partner.partnerId }))
    .endpoints, [])
})

test("webhooks - one resource's events arrive in order: a later event waits while an earlier one is retried", async () => {
  const batch = resourceId()
  const other = resourceId()
  const [paymentId, completedId, otherId] = await appendCommitted(tb, [
    partnerEvent(tb, partner.partnerId, batch, { type: 'payment.success' }),
    partnerEvent(tb, partner.partnerId, batch, { type: 'bulk_payment.completed',
      data: { bulk_payment_id: batch, status: 'completed' } }),
    partnerEvent(tb, partner.partnerId, other, { type: 'bulk_payment.cancelled' }),
  ])
  let failures = 1
  receiver.respond = (id) => (id === paymentId && failures-- > 0 ? 500 : 200)
  try {
    await deliverDue(tb)
    assert.equal(postsOf(paymentId!).length, 1)
    assert.equal(postsOf(completedId!).length, 0,
      'bulk_payment.completed waits behind its retrying payment')
    assert.equal(postsOf(otherId!).length, 1, "another resource's event does not wait")
    assert.equal((await deliveryOf(partner, completedId!)).state, 'pending')

    tb.clock.set(new Date(Date.parse((await deliveryOf(partner, paymentId!)).next_attempt_at!)))
    await deliverDue(tb)
  } finally {
    receiver.respond = () => 200
  }
  const lane = receiver.received.filter((r) => r.id === paymentId || r.id === completedId)
  assert.deepEqual(lane.map((r) => [r.id, r.status]), [[paymentId, 500], [paymentId, 200],
    [completedId, 200]])
  assert.equal((await deliveryOf(partner, completedId!)).state, 'delivered')
})

test('webhooks - one dispatch call of several lanes: each new lane head gets a job, an event behind a retrying head waits', async () => {
  const [waiting, busy, fresh] = [resourceId(), resourceId(), resourceId()]
  const [retrying] = await appendCommitted(tb,
    [partnerEvent(tb, partner.partnerId, waiting, { type: 'payment.success' })])
  receiver.respond = (id) => (id === retrying ? 503 : 200)
  let ids: string[] = []
  try {
    await deliverDue(tb)
    assert.equal((await deliveryOf(partner, retrying!)).state, 'pending')
    // One dispatch call: an event behind the retrying head, two on one new lane, one on another.
    ids = await appendCommitted(tb, [
      partnerEvent(tb, partner.partnerId, waiting, { type: 'bulk_payment.completed' }),
      partnerEvent(tb, partner.partnerId, busy,
        { data: { bulk_payment_id: busy, payment_id: 'p1', status: 'successful' } }),
      partnerEvent(tb, partner.partnerId, fresh, { type: 'bulk_payment.cancelled' }),
      partnerEvent(tb, partner.partnerId, busy,
        { data: { bulk_payment_id: busy, payment_id: 'p2', status: 'successful' } }),
    ])
    assert.equal(await tb.bank.services.events.dispatchPending(), 4)
    assert.equal(await tb.bank.services.jobRunner.runDue(), 2,
      'a job for each new lane, none for the lane whose head waits for its retry')
    const posts = receiver.received.filter((r) => ids.includes(r.id)).map((r) => r.id)
    assert.deepEqual(posts.filter((id) => id !== ids[2]), [ids[1], ids[3]],
      "one lane's events in order")
    assert.ok(posts.includes(ids[2]!))
    assert.equal((await deliveryOf(partner, ids[0]!)).state, 'pending')
    assert.equal((await deliveryOf(partner, ids[0]!)).attempts, 0,
      'behind the retrying head, not attempted')
  } finally {
    receiver.respond = () => 200
  }
  tb.clock.set(new Date(Date.parse((await deliveryOf(partner, retrying!)).next_attempt_at!)))
  await deliverDue(tb)
  const lane = receiver.received.filter((r) => r.id === retrying || r.id === ids[0])
  assert.deepEqual(lane.map((r) => [r.id, r.status]), [[retrying, 503], [retrying, 200],
    [ids[0], 200]])
})

test("webhooks - an event's own endpoint (a batch's callback_url) is used instead of the partner's", async () => {
  const callback = await startReceiver([partner.secret])
  try {
    const [eventId] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId(),
      { endpoint_url: `${callback.url}?batch=1` })])
    await deliverDue(tb)
    assert.equal(callback.received.filter((r) => r.id === eventId).length, 1)
    assert.ok(!(callback.received[0]!.verified[0] instanceof Error))
    assert.equal(postsOf(eventId!).length, 0)
  } finally {
    await callback.close()
  }
})

test('webhooks - without an endpoint an event is recorded failed at once; after set_endpoint a redeliver sends it', async () => {
  const quiet = await onboardWithSecret(tb)
  const own = await startReceiver([quiet.secret])
  try {
    const [eventId] = await appendCommitted(tb, [partnerEvent(tb, quiet.partnerId, resourceId())])
    await deliverDue(tb)
    const skipped = await deliveryOf(quiet, eventId!)
    assert.equal(skipped.state, 'failed')
    assert.equal(skipped.attempts, 0)
    assert.equal(skipped.last_error, 'no webhook endpoint is set')

    assert.deepEqual(await quiet.client.webhooks.getEndpoint({}), { url: null })
    assert.deepEqual(await quiet.client.webhooks.setEndpoint({ url: own.url }), { url: own.url })
    assert.deepEqual(await quiet.client.webhooks.getEndpoint({}), { url: own.url })
    const again = await quiet.client.webhooks.redeliver({ event_id: eventId! })
    assert.equal(again.delivery.state, 'pending')
    assert.equal(again.delivery.attempts, 0)
    await deliverDue(tb)
    assert.equal((await deliveryOf(quiet, eventId!)).state, 'delivered')

    // A delivered event may be sent again too, with the same webhook-id.
    await quiet.client.webhooks.redeliver({ event_id: eventId! })
    await deliverDue(tb)
    const posts = own.received.filter((r) => r.id === eventId)
    assert.equal(posts.length, 2)
    assert.equal(posts[0]!.body, posts[1]!.body)

    // An empty url clears the endpoint.
    assert.deepEqual(await quiet.client.webhooks.setEndpoint({ url: '' }), { url: null })
    assert.deepEqual(await quiet.client.webhooks.getEndpoint({}), { url: null })
  } finally {
    await own.close()
  }
})

test("webhooks - another partner's event ids are not found, and list_deliveries shows only the caller's", async () => {
  const stranger = await onboardWithSecret(tb)
  const [eventId] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
  await deliverDue(tb)
  await expectRefusal(stranger.client.webhooks.redeliver({ event_id: eventId! }), 404)
  await expectRefusal(stranger.client.webhooks.redeliver(
    { event_id: '00000000-0000-4000-8000-000000000000' }), 404)
  const seen = await stranger.client.webhooks.listDeliveries({})
  assert.deepEqual(seen.deliveries, [])
  assert.equal(postsOf(eventId!).length, 1, 'the refused redelivery sent nothing')
})

test('webhooks - list_deliveries pages newest first with next_cursor and filters by event type', async () => {
  const lister = await onboardWithSecret(tb)
  const types = ['payment.success', 'payment.failed', 'payment.success', 'bulk_payment.completed',
    'payment.failed'] as const
  const ids = await appendCommitted(
    tb,
    types.map((type) => partnerEvent(tb, lister.partnerId, resourceId(), { type })),
  )
  await deliverDue(tb)
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 10; page++) {
    const reply = await lister.client.webhooks.listDeliveries(cursor ? { limit: 2, cursor }
      : { limit: 2 })
    assert.ok(reply.deliveries.length <= 2)
    seen.push(...reply.deliveries.map((d) => d.event_id))
    if (!reply.next_cursor) break
    cursor = reply.next_cursor
  }
  assert.deepEqual(seen, [...ids].reverse())
  const failed = await lister.client.webhooks.listDeliveries({ event_type: 'payment.failed' })
  assert.deepEqual(failed.deliveries.map((d) => d.event_id), [ids[4], ids[1]])
  assert.equal(failed.next_cursor, undefined)
  assert.deepEqual((await lister.client.webhooks.listDeliveries({ limit: 200 })).deliveries.length,
    5)
  await expectRefusal(lister.client.webhooks.listDeliveries({ limit: 0 }), 400, 'limit')
  await expectRefusal(lister.client.webhooks.listDeliveries({ limit: 201 }), 400, 'limit')
  await expectRefusal(lister.client.webhooks.listDeliveries({ cursor: 'bm90LWEtY3Vyc29y' }), 400,
    'cursor')
  await expectRefusal(lister.client.webhooks.listDeliveries(
    { event_type: 'clearing.cycle_completed' as never }), 400, 'event_type')
})

test('webhooks - after rotate_secret both secrets sign for 24 hours, then only the new one', async () => {
  const rotated = await partner.client.webhooks.rotateSecret({})
  assert.match(rotated.webhook_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.notEqual(rotated.webhook_secret, partner.secret)
  assert.equal(Date.parse(rotated.previous_secret_retires_at!), tb.clock.now().getTime() + 24
    * hour_ms)
  receiver.secrets = [partner.secret, rotated.webhook_secret]
  try {
    const [during] = await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
    await deliverDue(tb)
    const [overlap] = postsOf(during!)
    assert.equal(overlap!.signature.split(' ').length, 2)
    assert.ok(overlap!.signature.split(' ').every((s) => s.startsWith('v1,')))
    assert.ok(overlap!.verified.every((v) => !(v instanceof Error)),
      'the old and the new secret each verify it')

    tb.clock.advance(24 * hour_ms)
    const [afterwards] =
      await appendCommitted(tb, [partnerEvent(tb, partner.partnerId, resourceId())])
    await deliverDue(tb)
    const [late] = postsOf(afterwards!)
    assert.equal(late!.signature.split(' ').length, 1)
    assert.ok(late!.verified[0] instanceof WebhookVerificationError,
      'the old secret no longer signs')
    assert.ok(!(late!.verified[1] instanceof Error), 'the new one does')
  } finally {
    partner.secret = rotated.webhook_secret
    receiver.secrets = [rotated.webhook_secret]
  }
})

test('webhooks - a sandbox endpoint may be http:// and loopback, never private or link-local', async () => {
  assert.deepEqual(await partner.client.webhooks.setEndpoint({ url: 'http://localhost:8080/hooks' }), { url: 'http://localhost:8080/hooks' })
  for (const url of ['http://10.0.0.7/hooks', 'https://192.168.1.20/hooks', 'http://169.254.169.254/latest', 'http://[fd00::1]/', 'ftp://127.0.0.1/']) {
    await expectRefusal(partner.client.webhooks.setEndpoint({ url }), 400, 'url')
  }
  await partner.client.webhooks.setEndpoint({ url: receiver.url })
})

test("webhooks - one job sends a lane's queued events in order; the first refused ends the run, the rest wait behind it", async () => {
  const lane = resourceId()
  const ids = await appendCommitted(
    tb,
    Array.from({ length: 6 }, (_, i) => partnerEvent(tb, partner.partnerId, lane,
      { data: { bulk_payment_id: lane, payment_id: `p${i}`, status: 'successful' } })),
  )
  receiver.respond = (id) => (id === ids[3] ? 503 : 200)
  try {
    while ((await tb.bank.services.events.dispatchPending()) > 0) {
      // hand every event over
    }
    // One job run: the head and the events queued behind it, up to the refused one.
    assert.equal(await tb.bank.services.jobRunner.runDue(), 1)
    assert.deepEqual(
      receiver.received.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.status]),
      [[ids[0], 200], [ids[1], 200], [ids[2], 200], [ids[3], 503]],
    )
    for (const id of ids.slice(0, 3)) {
      const delivery = await deliveryOf(partner, id!)
      assert.equal(delivery.state, 'delivered')
      assert.equal(delivery.attempts, 1)
      assert.equal(delivery.last_status_code, 200)
    }
    const refused = await deliveryOf(partner, ids[3]!)
    assert.equal(refused.state, 'pending')
    assert.equal(refused.attempts, 1)
    assert.equal(refused.last_status_code, 503)
    assert.ok(refused.next_attempt_at)
    for (const id of ids.slice(4)) assert.equal((await deliveryOf(partner, id!)).attempts, 0,
      'behind the refused one, not attempted')

    receiver.respond = () => 200
    tb.clock.set(new Date(Date.parse(refused.next_attempt_at!)))
    await deliverDue(tb)
  } finally {
    receiver.respond = () => 200
  }
  const posts = receiver.received.filter((r) => ids.includes(r.id))
  assert.deepEqual(posts.map((r) => r.id), [...ids.slice(0, 4), ...ids.slice(3)])
  for (const id of ids) assert.equal((await deliveryOf(partner, id!)).state, 'delivered')
  assert.ok(posts.every((post) => post.verified.every((v) => !(v instanceof Error))),
    'every post carries a valid signature')
})

test('webhooks - a run stops at run_deliveries_max and the next job carries on from there', async () => {
  const lane = resourceId()
  const count = webhook_limits_default.run_deliveries_max + 3
  const ids = await appendCommitted(
    tb,
    Array.from({ length: count }, (_, i) => partnerEvent(tb, partner.partnerId, lane,
      { data: { bulk_payment_id: lane, payment_id: `p${i}`, status: 'successful' } })),
  )
  while ((await tb.bank.services.events.dispatchPending()) > 0) {
    // hand every event over
  }
  assert.equal(await tb.bank.services.jobRunner.runDue(), 2,
    'two runs: a full one, then the three left')
  assert.deepEqual(
    receiver.received.filter((r) => ids.includes(r.id)).map((r) => r.id),
    ids,
  )
})
