import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { fund, newAccount, poolAccount, transferBody } from '../transfers/helpers.ts'
import { batchBody, payment } from '../bulk/helpers.ts'
import { appendCommitted, deliverDue, deliveryOf, partnerEvent, partnerWithReceiver,
  resourceId } from '../webhooks/helpers.ts'

// Each partner's own sandbox clock (svc.sandbox.<partner_id>.clock and .clock.advance, and
// the operators' ops.sandbox.clock* with a partner_id): a partner's advance runs its own work
// that falls due on the way (its EFTs' clearing cycles, its batches' PIN expiry) by its
// clock, and moves nothing of another partner's; the bank's advance moves every clock. The
// test bank's clock is the injected ManualClock (the bank's time); partners' leads over it
// are kept in the database.

const tb = useTestBank({ env: { BANK_CLEARING_SCHEDULE: 'on', BANK_JOBS_POLL_MS: '60000' } })
let a: TestPartner
let b: TestPartner
const hour_ms = 3_600_000

before(async () => {
  await tb.ready
  ;[a, b] = await Promise.all([onboardPartner(tb, { approve: true }),
    onboardPartner(tb, { approve: true })])
})

const clockOf = async (p: TestPartner) => new Date((await p.client.sandbox.clock()).now).getTime()
const statusOf = async (p: TestPartner, txId: string) =>
  (await p.client.accounts.getTransaction({ tx_id: txId })).transaction.status

async function pendingEft(p: TestPartner): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const { tx_id } = await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  assert.equal(await statusOf(p, tx_id), 'Pending')
  return tx_id
}

test('sandbox - two partners\' clocks move independently: one partner\'s advance clears its own EFTs only', async () => {
  // Monday 7 December 2026, 08:30 SAST: the 10:00 cycle is next.
  await tb.operator.sandbox.advance({ to: '2026-12-07T06:30:00Z' })
  const bankStart = tb.clock.now().getTime()
  assert.equal(await clockOf(a), bankStart, 'a partner\'s clock starts with the bank\'s')
  const [eftA, eftB] = [await pendingEft(a), await pendingEft(b)]

  const moved = await a.client.sandbox.advance({ seconds: 2 * 3600 })
  assert.equal(moved.now, new Date(bankStart + 2 * hour_ms).toISOString())
  assert.ok(moved.jobs_run >= 1, `jobs_run ${moved.jobs_run}`)
  assert.equal(await statusOf(a, eftA), 'Successful', 'its own cycle at 10:00 on its clock ran')
  assert.equal(await statusOf(b, eftB), 'Pending', 'nothing of another partner\'s ran')
  assert.equal(await clockOf(b), bankStart, 'another partner\'s clock did not move')
  assert.equal(tb.clock.now().getTime(), bankStart, 'nor did the bank\'s')
  const both = await a.client.sandbox.clock()
  assert.deepEqual(both, { now: new Date(bankStart + 2 * hour_ms).toISOString(),
    bank_now: new Date(bankStart).toISOString() })

  // What the partner does now happens at its time.
  const account = await newAccount(a)
  await fund(tb, account, 5_000)
  const { tx_id } = await a.client.accounts.transfer(transferBody(account, { amount: 100 }))
  const { transaction } = await a.client.accounts.getTransaction({ tx_id })
  assert.ok(new Date(transaction.date).getTime() >= bankStart + 2 * hour_ms,
    `stamped ${transaction.date} on the partner's clock`)

  await b.client.sandbox.advance({ seconds: 2 * 3600 })
  assert.equal(await statusOf(b, eftB), 'Successful')
  assert.equal(await clockOf(a), bankStart + 2 * hour_ms)
})

test('sandbox - a bulk batch\'s PIN expires by its partner\'s clock; another partner\'s batch waits', async () => {
  const start = async (p: TestPartner) => {
    await fund(tb, await poolAccount(p), 100_000)
    const body = batchBody(p.rootEntityId, [payment(1)])
    await p.client.bulkPayments.initiate(body)
    return () => p.client.bulkPayments.status({ entity_id: p.rootEntityId,
      bulk_payment_id: body.bulk_payment_id }).then((s) => s.status)
  }
  const [statusA, statusB] = [await start(a), await start(b)]
  assert.equal(await statusA(), 'pending_otp')
  await a.client.sandbox.advance({ seconds: 6 * 60 })
  assert.equal(await statusA(), 'failed', 'the PIN lived five minutes on its partner\'s clock')
  assert.equal(await statusB(), 'pending_otp', 'the other partner\'s five minutes have not passed')
  await b.client.sandbox.advance({ seconds: 6 * 60 })
  assert.equal(await statusB(), 'failed')
})

test('sandbox - the bank\'s advance moves every partner\'s clock with it; a partner\'s clock is never behind it', async () => {
  const [leadA, leadB] = [await clockOf(a) - tb.clock.now().getTime(),
    await clockOf(b) - tb.clock.now().getTime()]
  assert.ok(leadA > 0 && leadB > 0)
  await tb.operator.sandbox.advance({ seconds: 600 })
  assert.equal(await clockOf(a) - tb.clock.now().getTime(), leadA)
  assert.equal(await clockOf(b) - tb.clock.now().getTime(), leadB)
  const fresh = await onboardPartner(tb)
  assert.equal(await clockOf(fresh), tb.clock.now().getTime())
  const back = new Date(await clockOf(a) - 1000).toISOString()
  const refused = await expectRefusal(a.client.sandbox.advance({ to: back }), 400, 'to')
  assert.match(refused.message, /never moves back/)
})

test('sandbox - operators read and move one partner\'s clock by its partner_id; an unknown partner is 404', async () => {
  const before = await clockOf(b)
  assert.deepEqual(await tb.operator.sandbox.clock({ partner_id: b.partnerId }),
    { now: new Date(before).toISOString() })
  const aBefore = await clockOf(a)
  const moved = await tb.operator.sandbox.advance({ partner_id: b.partnerId, seconds: 60 })
  assert.equal(moved.now, new Date(before + 60_000).toISOString())
  assert.equal(await clockOf(b), before + 60_000)
  assert.equal(await clockOf(a), aBefore)
  await expectRefusal(tb.operator.sandbox.clock({ partner_id: randomUUID() }), 404)
  await expectRefusal(tb.operator.sandbox.advance({ partner_id: randomUUID(), seconds: 60 }), 404)
  await expectRefusal(tb.operator.sandbox.advance({ partner_id: 'not-a-partner', seconds: 60 }),
    400, 'partner_id')
})

test('sandbox - a partner\'s webhook retries run by its clock: its advance retries its deliveries, not another\'s', async () => {
  const [ra, rb] = [await partnerWithReceiver(tb, { endpoint: true }),
    await partnerWithReceiver(tb, { endpoint: true })]
  try {
    ra.receiver.respond = () => 503
    rb.receiver.respond = () => 503
    const eventOf = async (p: TestPartner) =>
      (await appendCommitted(tb, [partnerEvent(tb, p.partnerId, resourceId())]))[0]!
    const [eventA, eventB] = [await eventOf(ra.partner), await eventOf(rb.partner)]
    await deliverDue(tb)
    assert.equal((await deliveryOf(ra.partner, eventA)).attempts, 1)
    assert.equal((await deliveryOf(rb.partner, eventB)).attempts, 1)
    await ra.partner.client.sandbox.advance({ seconds: 3600 })
    const retried = await deliveryOf(ra.partner, eventA)
    assert.ok(retried.attempts > 1, `its retries within the hour ran: ${retried.attempts}`)
    assert.equal(ra.receiver.received.length, retried.attempts)
    assert.ok(Date.parse(retried.next_attempt_at!) > tb.clock.now().getTime() + 3_000_000,
      `its next attempt is on its clock: ${retried.next_attempt_at}`)
    assert.equal((await deliveryOf(rb.partner, eventB)).attempts, 1, 'not another partner\'s')
    assert.equal(rb.receiver.received.length, 1)
  } finally {
    await Promise.all([ra.receiver.close(), rb.receiver.close()])
  }
})

test('sandbox - a partner\'s long advance runs every hourly job of its clock on the way, once each, and plans nothing past its target', async () => {
  const p = await onboardPartner(tb)
  const from = await clockOf(p)
  const days = 4
  const moved = await p.client.sandbox.advance({ seconds: days * 24 * 3600 })
  const to = from + days * 24 * hour_ms
  assert.equal(moved.now, new Date(to).toISOString())
  const jobs = await tb.bank.database.db.selectFrom('jobs').select(['key', 'state', 'due_at'])
    .where('kind', '=', 'card.authorization_expiry').where('clock_partner', '=', p.partnerId)
    .execute()
  // One expiry sweep for each hour its clock passed, each run once.
  const ran = jobs.filter((job) => job.state === 'done').map((job) => job.key).sort()
  const hours = Array.from({ length: days * 24 }, (_, n) =>
    `${new Date((Math.floor(from / hour_ms) + n + 1) * hour_ms).toISOString()}@${p.partnerId}`)
  assert.deepEqual(ran.filter((key) => hours.includes(key)), hours)
  assert.equal(new Set(ran).size, ran.length)
  // Nothing was planned past the target: the weeks ahead are not queued at once.
  const bankNow = tb.clock.now().getTime()
  const lead = to - bankNow
  const latest = Math.max(...jobs.map((job) => new Date(job.due_at).getTime() + lead))
  assert.ok(latest <= to, `a job due at ${new Date(latest).toISOString()}, after ${moved.now}`)
})
