import assert from 'node:assert/strict'
import { afterEach, before, test } from 'node:test'
import { webhook_breaker_default, webhook_limits_default, type WebhookLimits } from '../../src/webhooks/webhook-limits.ts'
import { BankMetrics } from '../../src/metrics/bank-metrics.ts'
import { useTestBank } from '../support/harness.ts'
import { appendCommitted, deliveryOf, onboardWithSecret, partnerEvent, resourceId, type WebhookPartner } from './helpers.ts'
import { answeringReceiver, cleanUp, hangingReceiver, startInstance, type Instance } from './live-instance.ts'

// The per-endpoint circuit breaker beside the delivery pool (issue 45): receivers that
// accept connections and never answer fail each attempt at its time limit; three failures
// in a row back their endpoint off (its deliveries wait, holding no slot), and a day of
// failures pauses it, until the partner sets its endpoint again or an operator resumes it.
// A healthy partner's events all arrive meanwhile, however many receivers hang.
//
// A live instance of the bank's delivery (live-instance.ts) polls every 100 ms against real
// receivers on 127.0.0.1; its attempts give up after a short time limit, so that hanging
// receivers fail quickly, yet long enough that a healthy receiver (served by this process)
// answers within it while PGlite's work holds up the process on a loaded machine: an attempt
// of the healthy partner's that timed out would wait for its retry on the bank's clock,
// which only the test moves (1.5 s was too short under load: the test waited for it).
// Backoffs and the day that pauses an endpoint pass on the bank's injected clock, which the
// tests move; what they check is states, never how long anything took
// (bench/webhook-breaker.ts measures that).

const tb = useTestBank({ env: { BANK_SANDBOX: 'true', BANK_JOBS_POLL_MS: '100' } })
const limits = (breaker = webhook_breaker_default): WebhookLimits => ({
  ...webhook_limits_default, attempt_timeout_ms: 4000, instance_slots: tb.config.webhookConcurrency,
  partner_slots_max: tb.config.webhookPartnerSlotsMax, breaker })

before(async () => {
  await tb.ready
  // The instances below deliver.
  await tb.bank.services.jobRunner.stop()
})

afterEach(cleanUp)

async function partnerAt(url: string): Promise<WebhookPartner> {
  const partner = await onboardWithSecret(tb)
  await partner.client.webhooks.setEndpoint({ url })
  return partner
}

/** `perLane` events on each of `lanes` resources of the partner; the ids per lane, in order. */
async function laneEvents(partner: WebhookPartner, lanes: number,
    perLane = 1): Promise<string[][]> {
  const resources = Array.from({ length: lanes }, () => resourceId())
  const ids = await appendCommitted(tb, resources.flatMap((resource) => Array.from(
    { length: perLane }, () => partnerEvent(tb, partner.partnerId, resource))))
  return resources.map((_, lane) => ids.slice(lane * perLane, (lane + 1) * perLane))
}

/** The partner's endpoint's breaker state as operators see it (undefined: healthy). */
async function endpointState(partner: WebhookPartner): Promise<string | undefined> {
  const { endpoints } = await tb.operator.webhooks.endpoints({ partner_id: partner.partnerId })
  return endpoints[0]?.state
}

/** The partners' endpoints' states, in one operator call. */
async function endpointStates(partners: WebhookPartner[]): Promise<Array<string | undefined>> {
  const { endpoints } = await tb.operator.webhooks.endpoints({ limit: 200 })
  return partners.map((p) => endpoints.find((e) => e.partner_id === p.partnerId)?.state)
}

/** Waits, tick by tick, until every partner's endpoint is in `state`. */
async function allIn(instance: Instance, partners: WebhookPartner[], state: string) {
  for (;;) {
    const states = await endpointStates(partners)
    if (states.every((s) => s === state)) return
    await instance.nextTicks(1)
  }
}

for (const hangingCount of [3, 30]) {
  test(`webhooks - ${hangingCount} receivers that hang beside a healthy one: the healthy partner gets every event, the hanging endpoints are backed off, then paused`, { timeout: 180_000 }, async () => {
    // Paused after a day of failures, at the fourth (the default asks ten: hours of probes).
    const instance = startInstance(tb, limits({ ...webhook_breaker_default,
      pause_failures_min: 4 }), { ownPool: false })
    const receivers = await Promise.all(Array.from({ length: hangingCount }, hangingReceiver))
    const stuck = await Promise.all(receivers.map((r) => partnerAt(r.url)))
    // Four resources of each, due at once: more than the three failures that back one off.
    for (const partner of stuck) await laneEvents(partner, 4)
    const healthy = await onboardWithSecret(tb)
    const receiver = await answeringReceiver(healthy.secret)
    await healthy.client.webhooks.setEndpoint({ url: receiver.url })
    const first = (await laneEvents(healthy, 5, 3)).flat()
    await receiver.all(first)

    await allIn(instance, stuck, 'backed_off')
    const backedOff = receivers.map((r) => r.state.received)
    // Backed off, the hanging endpoints take no attempt while the healthy partner's next
    // events arrive.
    const later = (await laneEvents(healthy, 5, 3)).flat()
    await receiver.all(later)
    assert.deepEqual(receivers.map((r) => r.state.received), backedOff)
    // (An attempt may time out before its request reached a receiver of this busy process.)
    assert.ok(backedOff.every((n) => n <= 3), 'three attempts in a row at most, then none')

    // A day later their probes fail too: a day of failures pauses each of them.
    tb.clock.advance(25 * 3_600_000)
    await allIn(instance, stuck, 'paused')
    assert.equal(await endpointState(healthy), undefined, 'the healthy endpoint never failed')
    // Operators see them counted (bank_webhook_endpoints), from the database, on any instance.
    const metrics = new BankMetrics()
    metrics.readFrom(tb.bank.database.db)
    const gauge = (await metrics.registry.getSingleMetric('bank_webhook_endpoints')!.get()).values
    const paused = gauge.find((v) => v.labels.state === 'paused')?.value ?? 0
    assert.ok(paused >= hangingCount, `${paused} paused endpoints counted`)
    for (const id of [...first, ...later]) {
      assert.equal((await deliveryOf(healthy, id)).state === 'pending', false)
    }
  })
}

test('webhooks - a paused endpoint is not attempted; its deliveries wait and go out in order when the partner sets its endpoint again, or an operator resumes it', { timeout: 120_000 }, async () => {
  // Paused at its third failure in a row (no day to wait for).
  const instance = startInstance(tb, limits({ ...webhook_breaker_default, pause_after_ms: 0,
    pause_failures_min: 3 }), { ownPool: false })
  const hanging = await hangingReceiver()
  const partner = await partnerAt(hanging.url)
  const lanes = await laneEvents(partner, 4, 2)
  await allIn(instance, [partner], 'paused')
  const [shown] = (await tb.operator.webhooks.endpoints({ state: 'paused' })).endpoints.filter(
    (e) => e.partner_id === partner.partnerId)
  assert.equal(shown?.url, hanging.url)
  assert.equal(shown?.failures, 3)
  assert.ok(shown?.paused_at)
  const attempted = hanging.state.received

  // A day later nothing more was attempted, and nothing failed: every event waits.
  tb.clock.advance(86_400_000)
  await instance.nextTicks(5)
  assert.equal(hanging.state.received, attempted)
  for (const id of lanes.flat()) assert.equal((await deliveryOf(partner, id)).state, 'pending')

  // An operator resumes it: attempted again (it still hangs), so it fails its way back.
  const resumed = await tb.operator.webhooks.resumeEndpoint({ partner_id: partner.partnerId })
  assert.deepEqual(resumed, { resumed: [hanging.url], lanes: 4 })
  await allIn(instance, [partner], 'paused')
  const { endpoints: again } = await tb.operator.webhooks.endpoints(
    { partner_id: partner.partnerId })
  assert.equal(again[0]?.failures, 3, 'three more failures in a row paused it again')

  // The partner mends its receiver and sets its endpoint: every event arrives, in order.
  const mended = await answeringReceiver(partner.secret)
  await partner.client.webhooks.setEndpoint({ url: mended.url })
  await mended.all(lanes.flat())
  for (const lane of lanes) {
    assert.deepEqual(mended.arrivals.filter((a) => lane.includes(a.id)).map((a) => a.id), lane)
  }
  assert.equal(await endpointState(partner), undefined)
  await tb.operator.webhooks.resumeEndpoint({ partner_id: partner.partnerId }).then((r) =>
    assert.deepEqual(r, { resumed: [], lanes: 0 }, 'nothing left to resume'))
})
