import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, expectRefusal } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { fund, sast } from '../transfers/helpers.ts'
import { batchBody, otpOf, payment, wrongOtp } from './helpers.ts'

// The events of batches that end without paying (cancelled, expired, locked out), batches
// of another entity of the same partner, and a bulk_payment_id raced by two initiates.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  const pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 100_000_000)
  tb.clock.set(sast('2026-11-23', '09:00'))
})

const callback = 'https://hooks.example.com/batches'

async function eventsOf(bulkPaymentId: string) {
  const db = tb.bank.database.db
  const batch = await db.selectFrom('bulk_payments').select('id').where('bulk_payment_id', '=',
    bulkPaymentId).executeTakeFirstOrThrow()
  const rows = await db.selectFrom('events').selectAll().where('resource_id', '=', batch.id)
    .orderBy('seq').execute()
  return rows.map((e) => ({ type: e.type, endpoint_url: e.endpoint_url,
    data: typeof e.data === 'string' ? JSON.parse(e.data) : e.data }))
}

test('bulk - a cancelled batch announces bulk_payment.cancelled to its callback_url, with the reason', async () => {
  const body = batchBody(p.rootEntityId, [payment(1)], { callback_url: callback })
  await p.client.bulkPayments.initiate(body)
  await p.client.bulkPayments.cancel(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id, reason: 'typo in amounts' })
  const events = await eventsOf(body.bulk_payment_id)
  assert.deepEqual(events.map((e) => [e.type, e.endpoint_url]),
    [['bulk_payment.cancelled', callback]])
  assert.equal(events[0]!.data.status, 'cancelled')
  assert.equal(events[0]!.data.reason, 'typo in amounts')
})

test('bulk - expiry and lock-out announce bulk_payment.failed with their reason; a batch without callback_url has no endpoint', async () => {
  const expiring = batchBody(p.rootEntityId, [payment(1)])
  await p.client.bulkPayments.initiate(expiring)
  tb.clock.advance(5 * 60_000)
  await tb.bank.services.jobRunner.runDue()
  const expired = await eventsOf(expiring.bulk_payment_id)
  assert.deepEqual(expired.map((e) => [e.type, e.endpoint_url, e.data.reason]),
    [['bulk_payment.failed', null, 'otp_expired']])
  const locking = batchBody(p.rootEntityId, [payment(1)], { callback_url: callback })
  await p.client.bulkPayments.initiate(locking)
  const otp = await otpOf(tb, p, locking.bulk_payment_id)
  for (let i = 0; i < 3; i++) {
    await expectApiError(p.client.bulkPayments.verify({ entity_id: p.rootEntityId,
      bulk_payment_id: locking.bulk_payment_id, otp: wrongOtp(otp) }), 400)
  }
  const locked = await eventsOf(locking.bulk_payment_id)
  assert.deepEqual(locked.map((e) => [e.type, e.endpoint_url, e.data.reason]),
    [['bulk_payment.failed', callback, 'otp_locked']])
  await tb.bank.services.jobRunner.runDue()
  await assertLedgerClean(tb)
})

test("bulk - a batch is found only on its own entity's subject; another entity of the partner gets 404", async () => {
  const body = batchBody(p.rootEntityId, [payment(1)])
  await p.client.bulkPayments.initiate(body)
  const second = await p.client.entities.create(businessEntity({ name: 'Second Co (Pty) Ltd' }))
  const ref = { entity_id: second.id, bulk_payment_id: body.bulk_payment_id }
  await expectRefusal(p.client.bulkPayments.status(ref), 404)
  await expectRefusal(p.client.bulkPayments.cancel(ref), 404)
  await expectRefusal(
    p.client.bulkPayments.verify({ ...ref, otp: await otpOf(tb, p, body.bulk_payment_id) }), 404)
  assert.equal((await p.client.bulkPayments.status(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id })).status, 'pending_otp')
})

test('bulk - two initiates racing with one bulk_payment_id: one is taken, the other is 409 and holds nothing', async () => {
  const body = batchBody(p.rootEntityId, [payment(1)])
  const outcomes = await Promise.allSettled([p.client.bulkPayments.initiate(body),
    p.client.bulkPayments.initiate(body)])
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1)
  const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
  assert.equal((refused.reason as { code: number }).code, 409)
  await assertLedgerClean(tb)
})
