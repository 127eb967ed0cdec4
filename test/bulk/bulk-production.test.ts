import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'
import { fund, sast } from '../transfers/helpers.ts'
import { batchBody, otpOf, payment } from './helpers.ts'

// Outside sandbox mode the bank never keeps a PIN in plain text, and no operator can read one.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'false' } })
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  const pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 1_000_000)
  tb.clock.set(sast('2026-11-23', '09:00'))
})

test('bulk - in production the PIN is kept only as a hash and ops.sandbox.otp is refused', async () => {
  const body = batchBody(p.rootEntityId, [payment(1)])
  await p.client.bulkPayments.initiate(body)
  const row = await tb.bank.database.db.selectFrom('bulk_payments').selectAll().where(
    'bulk_payment_id', '=', body.bulk_payment_id).executeTakeFirstOrThrow()
  assert.equal(row.otp_sandbox, null)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  for (const value of Object.values(row)) assert.notEqual(String(value), otp)
  const refused =
    await expectApiError(tb.operator.sandbox.otp({ bulk_payment_id: body.bulk_payment_id }), 403)
  assert.ok(!JSON.stringify(refused).includes(otp))
  const verified = await p.client.bulkPayments.verify(
    { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id, otp })
  assert.equal(verified.status, 'processing')
})
