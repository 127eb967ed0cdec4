import assert from 'node:assert/strict'
import { afterEach, before, test } from 'node:test'
import { webhook_limits_default } from '../../src/webhooks/webhook-limits.ts'
import { useTestBank } from '../support/harness.ts'
import { appendCommitted, deliveryOf, onboardWithSecret, partnerEvent, resourceId, type WebhookPartner } from './helpers.ts'
import {
  answeringReceiver,
  cleanUp,
  hangingReceiver,
  startInstance as startLiveInstance,
  type Arrival,
} from './live-instance.ts'

// One partner's webhook receiver that accepts connections and never answers must cost only
// that partner (issue 28). Delivery slots are shared out by partner: one partner's
// deliveries hold at most BANK_WEBHOOK_PARTNER_SLOTS_MAX of them, counted on every
// instance, and a free slot goes to the partner with the fewest deliveries running.
//
// Instances here are the bank's own parts on the test bank's database (job runner, outbox
// dispatcher, webhook service, HTTP sender) with its settings, running live and polling
// every 100 ms, against real receivers on 127.0.0.1: a hanging one, which holds every
// request open until the test ends it, and answering ones, which check each signature as
// a partner's would. Their attempts may wait far longer than the 10 s of the interface, so
// that the hanging receiver's requests stay open however slow the machine: the healthy
// partners' events must all arrive while it still holds them (none has ended).

// A small delivery pool (BANK_WEBHOOK_CONCURRENCY), so a backlog can outnumber its slots.
const tb = useTestBank({ env: { BANK_SANDBOX: 'true', BANK_JOBS_POLL_MS: '100',
  BANK_WEBHOOK_CONCURRENCY: '3' } })
/**
 * An attempt's time limit here: beyond the test's own, so a hanging request ends only when the test
 * ends it.
 */
const hang_attempt_timeout_ms = 600_000

/** Delivery slots of one instance: the pool of the job runner's that deliveries have. */
const slotsPerInstance = () => tb.config.webhookConcurrency

before(async () => {
  await tb.ready
  // The instances below deliver; the bank's own runner would take their jobs with its 10 s
  // attempts.
  await tb.bank.services.jobRunner.stop()
})

afterEach(async () => {
  // Newest first: a hanging receiver ends (the attempts it holds fail at once) before the
  // instance holding them stops, and that instance before its connection pool.
  await cleanUp()
})

/**
 * An instance of the bank's delivery with the bank's settings but for its attempts, which
 * wait as long as the test may (see above); with `ownPool` on PostgreSQL it has a connection
 * pool of its own, as another process would.
 */
function startInstance(options: { ownPool: boolean }) {
  return startLiveInstance(tb, { ...webhook_limits_default,
    attempt_timeout_ms: hang_attempt_timeout_ms,
    partner_slots_max: tb.config.webhookPartnerSlotsMax,
    instance_slots: tb.config.webhookConcurrency }, options)
}

/** A partner whose endpoint is `url`. */
async function partnerAt(url: string): Promise<WebhookPartner> {
  const partner = await onboardWithSecret(tb)
  await partner.client.webhooks.setEndpoint({ url })
  return partner
}

/**
 * One event on each of `lanes` resources of the partner (each resource is a lane of its own, and a
 * delivery job).
 */
function backlog(partner: WebhookPartner, lanes: number): Promise<string[]> {
  return appendCommitted(tb, Array.from({ length: lanes }, () => partnerEvent(tb, partner.partnerId,
    resourceId())))
}

/** `perLane` events on each of `lanes` resources, in order; returns the ids per lane. */
async function laneEvents(partner: WebhookPartner, lanes: number,
    perLane: number): Promise<string[][]> {
  const resources = Array.from({ length: lanes }, () => resourceId())
  const events = resources.flatMap((resource) =>
    Array.from({ length: perLane }, (_, i) => partnerEvent(tb, partner.partnerId, resource,
      { data: { bulk_payment_id: resource, payment_id: `p${i}`, status: 'successful' } })),
  )
  const ids = await appendCommitted(tb, events)
  return resources.map((_, lane) => ids.slice(lane * perLane, (lane + 1) * perLane))
}

/** Each lane's events arrived in the order they happened. */
function assertLaneOrder(arrivals: Arrival[], lanes: string[][]): void {
  for (const lane of lanes) {
    assert.deepEqual(arrivals.filter((a) => lane.includes(a.id)).map((a) => a.id), lane,
      'a resource’s events arrive in order')
  }
}

/**
 * Every event is recorded as delivered. A receiver has an event as soon as the bank's request
 * reaches it; the bank records the delivery once the answer is back, a moment later: the
 * instance's ticks are waited for until it has (the test's own timeout bounds the wait).
 */
async function recorded(instance: { nextTicks: (count: number) => Promise<void> },
    partner: WebhookPartner, ids: string[]): Promise<void> {
  for (const id of ids) {
    while ((await deliveryOf(partner, id)).state !== 'delivered') await instance.nextTicks(1)
  }
}

test("webhooks - a receiver that never answers holds only its partner's share of the delivery slots: another partner's events all arrive while it hangs", async () => {
  assert.equal(tb.config.webhookPartnerSlotsMax, 1,
    'the default share: one delivery of a partner at a time')
  const instance = startInstance({ ownPool: false })
  const hanging = await hangingReceiver()
  const stuck = await partnerAt(hanging.url)
  // More lanes waiting than the instance has delivery slots, all due at once.
  const stuckIds = await backlog(stuck, slotsPerInstance() * 4)
  await hanging.holding()
  // The instance has had its turns to give the stuck partner more slots.
  await instance.nextTicks(3)

  const partner = await onboardWithSecret(tb)
  const receiver = await answeringReceiver(partner.secret)
  await partner.client.webhooks.setEndpoint({ url: receiver.url })
  const lanes = await laneEvents(partner, slotsPerInstance() + 2, 3)
  await receiver.all(lanes.flat())

  assert.equal(hanging.state.ended, 0,
    'every request the hanging receiver got is still open: no delivery waited for one to time out')
  assert.ok(hanging.state.open >= 1)
  assert.equal(hanging.state.openMax, 1, 'the hanging partner never held more than its one slot')
  assertLaneOrder(receiver.arrivals, lanes)
  await recorded(instance, partner, lanes.flat())

  // Once its receiver answers, the stuck partner's backlog is delivered, every event of it:
  // the attempts cut short are failures, retried after their backoff. The bank's clock
  // moves on ten minutes at a time (past the first few backoffs), two ticks apart, until
  // all have arrived: an attempt failing just after a move waits for the next. At most 100
  // moves, well inside the day of retries.
  await hanging.end()
  const mended = await answeringReceiver(stuck.secret)
  await stuck.client.webhooks.setEndpoint({ url: mended.url })
  const arrived = () => stuckIds.every((id) => mended.arrivals.some((a) => a.id === id))
  for (let moves = 0; !arrived(); moves++) {
    assert.ok(moves < 100, 'the stuck partner\'s events arrive while they are still retried')
    tb.clock.advance(10 * 60_000)
    await instance.nextTicks(2)
  }
  await recorded(instance, stuck, stuckIds)
})

test("webhooks - across instances a hanging receiver still holds only its partner's share, and the other partners' events arrive while it hangs", async () => {
  const first = startInstance({ ownPool: false })
  const second = startInstance({ ownPool: true })
  const hanging = await hangingReceiver()
  const stuck = await partnerAt(hanging.url)
  // More lanes waiting than both instances have delivery slots together.
  await backlog(stuck, slotsPerInstance() * 2 * 3)
  await hanging.holding()
  // Both instances have had their turns to take more of the stuck partner's deliveries.
  await Promise.all([first.nextTicks(3), second.nextTicks(3)])

  const partners = [await onboardWithSecret(tb), await onboardWithSecret(tb)]
  const receivers = await Promise.all(partners.map((p) => answeringReceiver(p.secret)))
  for (const [i, p] of partners.entries()) await p.client.webhooks.setEndpoint(
    { url: receivers[i]!.url })
  const lanes = await Promise.all(partners.map((p) => laneEvents(p, slotsPerInstance() * 2, 2)))
  await Promise.all(receivers.map((r, i) => r.all(lanes[i]!.flat())))

  assert.equal(hanging.state.ended, 0, 'every request the hanging receiver got is still open')
  assert.equal(hanging.state.openMax, tb.config.webhookPartnerSlotsMax,
    'one delivery of the stuck partner at a time, across both instances')
  for (const [i, r] of receivers.entries()) assertLaneOrder(r.arrivals, lanes[i]!)
})
