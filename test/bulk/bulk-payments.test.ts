import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, expectRefusal } from '../support/assertions.ts'
import { balances, fund, magic, newAccount, sast, transactionsOf, txById } from '../transfers/helpers.ts'
import { batchBody, otpOf, payment, wrongOtp } from './helpers.ts'

// Bulk payments (docs/guides/bulk-payments.md): initiate holds total plus fees and sends a PIN;
// verify funds the batch in one ledger transaction; payments go out as jobs (RTC at once,
// EFT with the clearing cycle); failed and invalid payments are refunded. This file stops
// the bank's job loop and runs due jobs and events by hand, so each assertion knows what ran.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'true' } })
let p: TestPartner
let other: TestPartner
let pool: string
const fees = { EFT: 250, RTC: 700 }

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 1_000_000_000)
  tb.clock.set(sast('2026-11-23', '09:00'))
})

const runJobs = () => tb.bank.services.jobRunner.runDue()
const bulk = () => p.client.bulkPayments
const entity = () => p.rootEntityId

async function clearingCycle(): Promise<void> {
  await tb.operator.clearing.run({})
  await tb.bank.services.events.dispatchPending()
  await runJobs()
}

test('bulk - initiate holds total plus fees at once and answers pending_otp with a reference and expiry', async () => {
  const before = await balances(p, pool)
  const body = batchBody(entity(), [payment(1), payment(2, { real_time: true, amount: 5_000 })])
  const reply = await bulk().initiate(body)
  assert.equal(reply.bulk_payment_id, body.bulk_payment_id)
  assert.equal(reply.status, 'pending_otp')
  assert.match(reply.otp_reference, /^[A-Z2-9]{4}$/)
  assert.equal(reply.expires_at, new Date(tb.clock.now().getTime() + 5 * 60_000).toISOString()
    .replace('.000Z', 'Z'))
  assert.equal(reply.total_amount, '15000')
  assert.equal(reply.payment_count, 2)
  assert.ok(!JSON.stringify(reply).includes(await otpOf(tb, p, body.bulk_payment_id)),
    'the PIN is never in a reply')
  const after = await balances(p, pool)
  assert.equal(after.balance, before.balance)
  assert.equal(BigInt(before.available) - BigInt(after.available),
    15_000n + BigInt(fees.EFT + fees.RTC))
  const status = await bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'pending_otp')
  assert.deepEqual(status.payments.map((x) => [x.payment_id, x.status, x.tx_id]),
    [['p-1', 'pending', null], ['p-2', 'pending', null]])
})

test('bulk - the PIN is stored only as a keyed hash and goes to the entity e-mail', async () => {
  const body = batchBody(entity(), [payment(1)])
  await bulk().initiate(body)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  const row = await tb.bank.database.db.selectFrom('bulk_payments').selectAll().where(
    'bulk_payment_id', '=', body.bulk_payment_id).executeTakeFirstOrThrow()
  assert.match(row.otp_hash, /^[0-9a-f]{64}$/)
  assert.ok(!row.otp_hash.includes(otp))
  const message = await tb.bank.database.db.selectFrom('notifier_messages').selectAll().where('key',
    '=', `bulk_otp:${row.id}:1`).executeTakeFirstOrThrow()
  const info = await p.client.entities.info({ entity_id: entity() })
  assert.equal(message.recipient, (info as { email?: string }).email ?? message.recipient)
})

test('bulk - verify funds the batch in one transaction; RTC paid at once, EFT at the clearing cycle; refunds for failed and invalid', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000_000)
  const payments = [
    payment(1, { real_time: true, amount: 1_000 }),
    payment(2, { real_time: true, amount: 2_000, account_number: magic.failed }),
    payment(3, { amount: 3_000 }),
    payment(4, { amount: 4_000, account_number: magic.invalid }),
    payment(5, { amount: 5_000, branch_code: magic.invalidBranch, real_time: true }),
  ]
  const body = batchBody(entity(), payments, { account_id: account })
  await bulk().initiate(body)
  const verified = await bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id,
    otp: await otpOf(tb, p, body.bulk_payment_id) })
  assert.deepEqual(verified, {
    bulk_payment_id: body.bulk_payment_id, status: 'processing', processed_count: 0, total_count: 5,
    payments: payments.map(
      (x) => ({ payment_id: x.payment_id, status: 'processing', tx_id: null })),
  })
  const totalFees = 3 * fees.RTC + 2 * fees.EFT
  assert.deepEqual(await balances(p, account), { balance: String(10_000_000 - 15_000 - totalFees),
    available: String(10_000_000 - 15_000 - totalFees) })
  await runJobs()
  let status = await bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'processing')
  assert.deepEqual(status.payments.map((x) => x.status), ['success', 'failed', 'processing',
    'processing', 'failed'])
  await clearingCycle()
  status = await bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id })
  assertSettledBatch(status)
  await assertFundedOnceRefunded(account, status, totalFees)
  await assertLedgerClean(tb)
})

type BatchStatus = Awaited<ReturnType<ReturnType<typeof bulk>['status']>>

/** The verify test's batch after the clearing cycle: completed, 2 paid and 3 failed, all booked. */
function assertSettledBatch(status: BatchStatus): void {
  assert.equal(status.status, 'completed')
  assert.ok(status.completed_at)
  assert.deepEqual(status.payments.map((x) => x.status), ['success', 'failed', 'success', 'failed',
    'failed'])
  assert.equal(status.successful_amount, '4000')
  assert.equal(status.failed_amount, '11000')
  assert.equal(BigInt(status.successful_amount) + BigInt(status.failed_amount),
    BigInt(status.total_amount))
  assert.equal(status.successful_count, 2)
  assert.equal(status.failed_count, 3)
  for (const x of status.payments) {
    assert.ok(x.tx_id && x.processed_at)
    assert.equal(x.error_message === null, x.status === 'success')
  }
}

/**
 * The verify test's account after the batch settled: one funding debit, each payment a
 * transaction under it, and one refund (with its fee) for each payment that failed.
 */
async function assertFundedOnceRefunded(account: string, status: BatchStatus,
    totalFees: number): Promise<void> {
  // The failed ones came back with their fees: the account paid 4000 and two fees.
  assert.equal((await balances(p, account)).balance,
    String(10_000_000 - 4_000 - fees.RTC - fees.EFT))
  const rows = await transactionsOf(p, account)
  const funding = rows.find((r) => r.tx_type === 'bulk_payment' && r.parent_tx_id === '')!
  assert.equal(funding.debit, String(15_000 + totalFees))
  assert.equal(funding.status, 'Successful')
  for (const x of status.payments) {
    const row = await txById(p, x.tx_id!)
    assert.equal(row.tx_type, 'bulk_payment')
    assert.equal(row.parent_tx_id, funding.tx_id)
    assert.equal(row.status, x.status === 'success' ? 'Successful' : x.payment_id === 'p-2'
      ? 'Failed' : 'Invalid')
    const refunds = rows.filter((r) => r.tx_type === 'refund' && r.parent_tx_id === x.tx_id)
    assert.equal(refunds.length, x.status === 'success' ? 0 : 1)
  }
}

test('bulk - events: verified, one payment.* per payment, completed; all with the batch id as resource and callback_url as endpoint', async () => {
  const body = batchBody(entity(), [payment(1, { real_time: true }), payment(2, { real_time: true, account_number: magic.failed })], { callback_url: 'https://hooks.example.com/bulk' })
  await bulk().initiate(body)
  await bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id,
    otp: await otpOf(tb, p, body.bulk_payment_id) })
  await runJobs()
  const db = tb.bank.database.db
  const batch = await db.selectFrom('bulk_payments').select('id').where('bulk_payment_id', '=',
    body.bulk_payment_id).executeTakeFirstOrThrow()
  const events = await db.selectFrom('events').selectAll().where('resource_id', '=', batch.id)
    .orderBy('seq').execute()
  assert.deepEqual(events.map((e) => e.type), ['bulk_payment.verified', 'payment.success',
    'payment.failed', 'bulk_payment.completed'])
  for (const e of events) assert.equal(e.endpoint_url, 'https://hooks.example.com/bulk')
  const data = (e: (typeof events)[number]) => (typeof e.data === 'string' ? JSON.parse(e.data)
    : e.data)
  assert.equal(data(events[1]!).bulk_payment_id, body.bulk_payment_id)
  assert.equal(data(events[1]!).payment_id, 'p-1')
  assert.equal(data(events[2]!).error_message.length > 0, true)
  assert.equal(data(events[3]!).status, 'completed')
})

test('bulk - wrong PINs: 400 otp_invalid with attempts left; the third ends the batch failed and releases the hold; then 429 even with the right PIN', async () => {
  const before = await balances(p, pool)
  const body = batchBody(entity(), [payment(1)])
  await bulk().initiate(body)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  const ref = { entity_id: entity(), bulk_payment_id: body.bulk_payment_id }
  for (const left of [2, 1, 0]) {
    const error = await expectApiError(bulk().verify({ ...ref, otp: wrongOtp(otp) }), 400)
    assert.equal(error.type, 'otp_invalid')
    assert.equal(error.details[0]!.attempts_left, left)
  }
  assert.equal((await bulk().status(ref)).status, 'failed')
  assert.deepEqual(await balances(p, pool), before)
  const locked = await expectApiError(bulk().verify({ ...ref, otp }), 429)
  assert.equal(locked.type, 'too_many_attempts')
  await expectRefusal(bulk().cancel(ref), 400, 'bulk_payment_id', 'invalid_state')
  await assertLedgerClean(tb)
})

test('bulk - the PIN expires after 5 minutes: the expiry job fails the batch and releases the hold; verify then says otp_expired', async () => {
  // Earlier tests' batches expire first, so that the balance below moves for this batch only.
  tb.clock.advance(5 * 60_000)
  await runJobs()
  const before = await balances(p, pool)
  const body = batchBody(entity(), [payment(1)])
  await bulk().initiate(body)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  const ref = { entity_id: entity(), bulk_payment_id: body.bulk_payment_id }
  tb.clock.advance(5 * 60_000 - 1)
  await runJobs()
  assert.equal((await bulk().status(ref)).status, 'pending_otp', 'not yet at 4:59.999')
  tb.clock.advance(1)
  await runJobs()
  assert.equal((await bulk().status(ref)).status, 'failed')
  assert.deepEqual(await balances(p, pool), before)
  const expired = await expectApiError(bulk().verify({ ...ref, otp }), 400)
  assert.equal(expired.type, 'otp_expired')
  await assertLedgerClean(tb)
})

test('bulk - verify at expiry without the job having run is otp_expired too', async () => {
  const body = batchBody(entity(), [payment(1)])
  await bulk().initiate(body)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  tb.clock.advance(5 * 60_000)
  const expired = await expectApiError(
    bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id, otp }), 400)
  assert.equal(expired.type, 'otp_expired')
  assert.equal((await bulk().status(
    { entity_id: entity(), bulk_payment_id: body.bulk_payment_id })).status, 'failed')
  await runJobs()
})

test('bulk - cancel only in pending_otp: the hold is released; processing, completed, cancelled and failed batches are 400', async () => {
  const before = await balances(p, pool)
  const body = batchBody(entity(), [payment(1, { real_time: true })])
  await bulk().initiate(body)
  const ref = { entity_id: entity(), bulk_payment_id: body.bulk_payment_id }
  const cancelled = await bulk().cancel({ ...ref, reason: 'wrong month' })
  assert.equal(cancelled.status, 'cancelled')
  assert.equal(cancelled.reason, 'wrong month')
  assert.ok(cancelled.cancelled_at)
  assert.deepEqual(await balances(p, pool), before)
  await expectRefusal(bulk().cancel(ref), 400, 'bulk_payment_id', 'invalid_state')
  await expectRefusal(bulk().verify({ ...ref, otp: await otpOf(tb, p, body.bulk_payment_id) }), 400,
    'bulk_payment_id', 'invalid_state')
  const paid = batchBody(entity(), [payment(1, { real_time: true })])
  await bulk().initiate(paid)
  const paidRef = { entity_id: entity(), bulk_payment_id: paid.bulk_payment_id }
  await bulk().verify({ ...paidRef, otp: await otpOf(tb, p, paid.bulk_payment_id) })
  await expectRefusal(bulk().cancel(paidRef), 400, 'bulk_payment_id', 'invalid_state')
  await runJobs()
  assert.equal((await bulk().status(paidRef)).status, 'completed')
  await expectRefusal(bulk().cancel(paidRef), 400, 'bulk_payment_id', 'invalid_state')
  await expectRefusal(bulk().verify({ ...paidRef, otp: await otpOf(tb, p, paid.bulk_payment_id) }),
    400, 'bulk_payment_id', 'invalid_state')
  await assertLedgerClean(tb)
})

test('bulk - concurrent verifies of one batch: exactly one wins and the batch is funded once', async () => {
  const body = batchBody(entity(), [payment(1, { real_time: true })])
  await bulk().initiate(body)
  const otp = await otpOf(tb, p, body.bulk_payment_id)
  const ref = { entity_id: entity(), bulk_payment_id: body.bulk_payment_id, otp }
  const outcomes = await Promise.allSettled([bulk().verify(ref), bulk().verify(ref),
    bulk().verify(ref)])
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1)
  await runJobs()
  await assertLedgerClean(tb)
})

test('bulk - refused batches: counts and totals that do not add up, repeated payment ids, item rules named as payments[i].field', async () => {
  const e = entity()
  const two = [payment(1), payment(2)]
  await expectRefusal(bulk().initiate(batchBody(e, two, { payment_count: 3 })), 400,
    'payment_count')
  await expectRefusal(bulk().initiate(batchBody(e, two, { total_amount: 20_001 })), 400,
    'total_amount')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1), payment(1)])), 400,
    'payments[1].payment_id')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1), payment(2, { amount: 99 })])), 400,
    'payments[1].amount')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { ref: 'x' })])), 400,
    'payments[0].ref')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { ref: 'x'.repeat(26) })])), 400,
    'payments[0].ref')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { own_ref: 'x'.repeat(51) })])), 400,
    'payments[0].own_ref')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { branch_code: '12345' })])), 400,
    'payments[0].branch_code')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { notification_email: 'nope' })])),
    400, 'payments[0].notification_email')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { real_time: 'yes' })])), 400,
    'payments[0].real_time')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { surplus: 1 })])), 400,
    'payments[0].surplus')
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1)], { callback_url: 'not a url' })),
    400, 'callback_url')
  await expectRefusal(bulk().initiate(batchBody(e, [])), 400, 'payments')
  // RTC limits by SAST time: R250,000 after 16:00.
  tb.clock.set(sast('2026-11-23', '17:00'))
  await expectRefusal(bulk().initiate(batchBody(e,
    [payment(1), payment(2, { real_time: true, amount: 25_000_001 })])), 'limit_exceeded',
  'payments[1].amount')
  tb.clock.set(sast('2026-11-23', '09:00'))
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { amount: 500_000_001 })])),
    'limit_exceeded', 'payments[0].amount')
  // With any other fault, the whole batch is one invalid_request listing every issue.
  await expectRefusal(bulk().initiate(batchBody(e, [payment(1, { amount: 500_000_001 })],
    { payment_count: 2 })), 400, 'payments[0].amount')
})

test('bulk - 1000 payments are taken; 1001 are refused; a body over the limit is payload_too_large', async () => {
  const e = entity()
  const thousand = Array.from({ length: 1000 }, (_, i) => payment(i, { amount: 100 }))
  const taken = await bulk().initiate(batchBody(e, thousand))
  assert.equal(taken.payment_count, 1000)
  const tooMany = Array.from({ length: 1001 }, (_, i) => payment(i, { amount: 100 }))
  await expectRefusal(bulk().initiate(batchBody(e, tooMany)), 400, 'payments')
  // NATS carries at most 1 MiB, so the largest body a partner can send stands for the 2 MB one.
  const subject = `svc.account.${e}.bulk_payment.initiate`
  const big = JSON.stringify({ ...batchBody(e, [payment(1)]), description: 'x'.repeat(900_000) })
  const reply = await rawRequest(tb, subject, big, { token: p.token })
  assert.equal(reply.body.error.type, 'payload_too_large')
})

test('bulk - insufficient funds is a 400 insufficient_funds and stores nothing; a bulk_payment_id is unique per partner for ever (409 duplicate, or idempotency_key_reused for another batch)', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const body = batchBody(entity(), [payment(1, { amount: 9_800 })], { account_id: account })
  await expectRefusal(bulk().initiate(body), 'insufficient_funds', 'total_amount')
  await expectRefusal(bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id }),
    404)
  const fits = batchBody(entity(), [payment(1, { amount: 9_750 })], { account_id: account })
  await bulk().initiate(fits)
  await bulk().cancel({ entity_id: entity(), bulk_payment_id: fits.bulk_payment_id })
  const again = await expectRefusal(bulk().initiate({ ...fits }), 'duplicate', 'bulk_payment_id')
  assert.equal(again.details[0]!.bulk_payment_id, fits.bulk_payment_id)
  const changed = { ...fits, description: 'Another batch',
    payments: [payment(1, { amount: 9_700 })],
    total_amount: 9_700 }
  const reused = await expectRefusal(bulk().initiate(changed), 'idempotency_key_reused')
  assert.deepEqual(reused.details.map((d) => d.field),
    ['description', 'total_amount', 'payments[0].amount'])
  // Another partner may use the same id.
  const otherPool = (await other.client.accounts.getByEntity(
    { entity_id: other.rootEntityId })).accounts[0]!.account_id
  await fund(tb, otherPool, 100_000)
  await other.client.bulkPayments.initiate({ ...batchBody(other.rootEntityId, [payment(1)]),
    bulk_payment_id: fits.bulk_payment_id })
})

test("bulk - tenancy: another partner's entity is 403; another partner's batch ids are 404; an account not the entity's is 404", async () => {
  const body = batchBody(entity(), [payment(1)])
  await bulk().initiate(body)
  await expectRefusal(other.client.bulkPayments.initiate(batchBody(entity(), [payment(1)])), 403)
  const theirs = { entity_id: other.rootEntityId, bulk_payment_id: body.bulk_payment_id }
  await expectRefusal(other.client.bulkPayments.status(theirs), 404)
  await expectRefusal(other.client.bulkPayments.cancel(theirs), 404)
  await expectRefusal(other.client.bulkPayments.verify({ ...theirs, otp: '123456' }), 404)
  const otherPool = (await other.client.accounts.getByEntity(
    { entity_id: other.rootEntityId })).accounts[0]!.account_id
  await expectRefusal(bulk().initiate(batchBody(entity(), [payment(1)], { account_id: otherPool })),
    404)
  await expectRefusal(
    bulk().status({ entity_id: other.rootEntityId, bulk_payment_id: body.bulk_payment_id }), 403)
})

test('bulk - sandbox operators read the PIN; payment advices go out once paid', async () => {
  const to = `payee-${Date.now()}@example.com`
  const body = batchBody(entity(), [payment(1, { real_time: true, notification_email: to })])
  await bulk().initiate(body)
  const read = await tb.operator.sandbox.otp({ bulk_payment_id: body.bulk_payment_id,
    partner_id: p.partnerId })
  assert.equal(read.otp, await otpOf(tb, p, body.bulk_payment_id))
  await bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id, otp: read.otp })
  await runJobs()
  await runJobs()
  const sent = await tb.bank.database.db.selectFrom('notifier_messages').selectAll().where(
    'recipient', '=', to).execute()
  assert.equal(sent.length, 1)
  await assertLedgerClean(tb)
})

test('bulk - processing run again from the start (as after a crash) pays nothing twice', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const body = batchBody(entity(), [payment(1, { real_time: true }), payment(2),
    payment(3, { real_time: true, account_number: magic.failed })], { account_id: account })
  await bulk().initiate(body)
  await bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id,
    otp: await otpOf(tb, p, body.bulk_payment_id) })
  const batchId = (await tb.bank.database.db.selectFrom('bulk_payments').select('id').where(
    'bulk_payment_id', '=', body.bulk_payment_id).executeTakeFirstOrThrow()).id
  const processing = tb.bank.services.bulkProcessing
  await processing.process(batchId)
  const once = await transactionsOf(p, account)
  await processing.process(batchId)
  await runJobs()
  assert.equal((await transactionsOf(p, account)).length, once.length,
    'a second run adds no transaction')
  await processing.eftCycle(tb.clock.now())
  const afterEft = await transactionsOf(p, account)
  await processing.eftCycle(tb.clock.now())
  assert.equal((await transactionsOf(p, account)).length, afterEft.length)
  const status = await bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'completed')
  assert.deepEqual(status.payments.map((x) => x.status), ['success', 'success', 'failed'])
  // Every payment is in the account's statement.
  const ids = new Set(afterEft.map((r) => r.tx_id))
  for (const x of status.payments) assert.ok(ids.has(x.tx_id!))
  assert.equal((await balances(p, account)).balance,
    String(1_000_000 - 20_000 - fees.RTC - fees.EFT))
  await assertLedgerClean(tb)
})

test('bulk - a paid payment the recipient bank returns is reversed at the next clearing run; the ledger stays clean', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const body = batchBody(entity(), [payment(1, { real_time: true, account_number: magic.returned,
    amount: 7_000 })], { account_id: account })
  await bulk().initiate(body)
  await bulk().verify({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id,
    otp: await otpOf(tb, p, body.bulk_payment_id) })
  await runJobs()
  const status = await bulk().status({ entity_id: entity(), bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'completed')
  assert.equal(status.payments[0]!.status, 'success')
  await clearingCycle()
  const paid = await txById(p, status.payments[0]!.tx_id!)
  assert.equal(paid.status, 'Reversed')
  const reversal = (await transactionsOf(p, account)).find((r) => r.tx_type === 'reversal'
    && r.parent_tx_id === paid.tx_id)
  assert.equal(reversal?.credit, '7000')
  assert.equal((await balances(p, account)).balance, String(1_000_000 - fees.RTC))
  await assertLedgerClean(tb)
})
