import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestBank, type TestPartner } from '../support/harness.ts'
import { balances, fund, sast } from '../transfers/helpers.ts'
import { deliverDue, onboardWithSecret, startReceiver } from '../webhooks/helpers.ts'
import { batchBody, otpOf, payment } from './helpers.ts'

// A bulk batch's callback_url meets the webhook URL policy at initiate (README "Bulk
// payments", "Where the bank will send"), the rule every delivery applies again: in
// production only https to public addresses; the sandbox also takes http and loopback.
// Private, link-local and special addresses are refused in both modes. A refused URL is a
// 400 naming callback_url, and the batch is not stored: nothing held, no PIN sent.

async function messagesSent(tb: TestBank): Promise<number> {
  return (await tb.bank.database.db.selectFrom('notifier_messages').select('id').execute()).length
}

async function fundedPartner(tb: TestBank): Promise<{ p: TestPartner; pool: string }> {
  const p = await onboardPartner(tb, { approve: true })
  const pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 1_000_000)
  return { p, pool }
}

/** Each URL is refused at initiate, naming callback_url, and leaves no trace. */
async function expectRefusedAtInitiate(tb: TestBank, urls: string[]): Promise<void> {
  const { p, pool } = await fundedPartner(tb)
  const before = await balances(p, pool)
  const sent = await messagesSent(tb)
  for (const url of urls) {
    const body = batchBody(p.rootEntityId, [payment(1)], { callback_url: url })
    const error = await expectRefusal(p.client.bulkPayments.initiate(body), 400, 'callback_url')
    assert.match(error.message, /^callback_url: must (be an https|not carry|not lead to a loopback, private or link-local address)/, url)
    await expectRefusal(p.client.bulkPayments.status(
      { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id }), 404)
  }
  assert.deepEqual(await balances(p, pool), before, 'nothing held')
  assert.equal(await messagesSent(tb), sent, 'no PIN sent')
}

describe('production', () => {
  const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'false' } })

  before(async () => {
    await tb.ready
    await tb.bank.services.jobRunner.stop()
    tb.clock.set(sast('2026-11-23', '09:00'))
  })

  test('bulk - callback_url in production: loopback, private, link-local, special and http URLs are 400 at initiate and nothing is stored', async () => {
    await expectRefusedAtInitiate(tb, [
      'http://127.0.0.1/hooks',
      'https://127.0.0.1/hooks',
      'https://localhost:8443/hooks',
      'https://[::1]/hooks',
      'https://10.0.0.1/hooks',
      'https://172.16.4.2/hooks',
      'https://192.168.1.20/hooks',
      'https://100.64.0.1/hooks',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fe80::1]/hooks',
      'https://[fd00::1]/hooks',
      'https://[::ffff:10.0.0.1]/hooks',
      'https://0.0.0.0/hooks',
      'https://user:secret@8.8.8.8/hooks',
      'http://8.8.8.8/hooks',
    ])
  })

  test('bulk - callback_url in production: an https URL to a public address is taken and the batch events carry it', async () => {
    const { p } = await fundedPartner(tb)
    const url = 'https://8.8.8.8/bulk-hooks'
    const body = batchBody(p.rootEntityId, [payment(1)], { callback_url: url })
    assert.equal((await p.client.bulkPayments.initiate(body)).status, 'pending_otp')
    await p.client.bulkPayments.cancel(
      { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id })
    const events = await tb.bank.database.db.selectFrom('events').select(['type', 'endpoint_url'])
      .where('partner_id', '=', p.partnerId).execute()
    assert.deepEqual(events, [{ type: 'bulk_payment.cancelled', endpoint_url: url }])
    await assertLedgerClean(tb)
  })
})

describe('sandbox', () => {
  const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'true' } })

  before(async () => {
    await tb.ready
    await tb.bank.services.jobRunner.stop()
    tb.clock.set(sast('2026-11-23', '09:00'))
  })

  test('bulk - callback_url in the sandbox: private, link-local and special addresses are still 400 at initiate', async () => {
    await expectRefusedAtInitiate(tb, [
      'http://10.0.0.1/hooks',
      'http://169.254.169.254/latest/meta-data/',
      'http://192.168.1.20:8080/hooks',
      'http://[fe80::1]/hooks',
      'http://[::ffff:169.254.169.254]/hooks',
      'http://0.0.0.0:8787/hooks',
    ])
  })

  test('bulk - callback_url in the sandbox: a loopback http receiver is taken at initiate and the delivery reaches it', async () => {
    const p = await onboardWithSecret(tb)
    await tb.operator.entities.review({ entity_id: p.rootEntityId, decision: 'approve' })
    const pool =
      (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
    await fund(tb, pool, 1_000_000)
    const receiver = await startReceiver([p.secret])
    try {
      const body = batchBody(p.rootEntityId, [payment(1, { real_time: true })],
        { callback_url: receiver.url })
      assert.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+\/hooks$/)
      await p.client.bulkPayments.initiate(body)
      await p.client.bulkPayments.verify({ entity_id: p.rootEntityId,
        bulk_payment_id: body.bulk_payment_id, otp: await otpOf(tb, p, body.bulk_payment_id) })
      await deliverDue(tb)
      await deliverDue(tb)
      const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type)
      assert.deepEqual(types, ['bulk_payment.verified', 'payment.success',
        'bulk_payment.completed'])
      for (const r of receiver.received) assert.ok(!(r.verified[0] instanceof Error),
        'signed with the partner secret')
    } finally {
      await receiver.close()
    }
    await assertLedgerClean(tb)
  })
})
