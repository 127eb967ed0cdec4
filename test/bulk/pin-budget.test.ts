import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import { bulkInitiateRequest } from '../../src/bulk/bulk-contract.ts'
import { BankError } from '../../src/errors.ts'
import { createLogger } from '../../src/logger.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, storage, useTestBank, type RawReply, type TestPartner } from '../support/harness.ts'
import { balances, fund, sast } from '../transfers/helpers.ts'
import { batchBody, otpOf, payment, wrongOtp } from './helpers.ts'

// The per-entity limits of bulk payments (docs/guides/bulk-payments.md): at most 10 wrong
// PINs in any rolling hour across an entity's batches, after
// which every verify of its batches is 429 until the oldest of them is an hour old; at most
// 20 batches waiting in pending_otp at once. A 429 changes nothing, is no wrong PIN and uses
// none of a batch's own 3 attempts. Each test has a partner of its own, so each starts with
// an unused budget. The bank's job loop is stopped: nothing expires unless a test says so.
// On PostgreSQL a second instance shares the database and the races are run across both.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'true' } })
const hour_ms = 60 * 60_000
const otp_ttl_ms = 5 * 60_000

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '09:00'))
})

interface Batch {
  ref: { entity_id: string; bulk_payment_id: string }
  otp: string
}

async function fundedPartner(): Promise<{ p: TestPartner; pool: string }> {
  const p = await onboardPartner(tb, { approve: true })
  const pool =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, pool, 10_000_000)
  return { p, pool }
}

async function pendingBatch(p: TestPartner, entityId = p.rootEntityId): Promise<Batch> {
  const body = batchBody(entityId, [payment(1)])
  await p.client.bulkPayments.initiate(body)
  return { ref: { entity_id: entityId, bulk_payment_id: body.bulk_payment_id },
    otp: await otpOf(tb, p, body.bulk_payment_id) }
}

/** A verify below the SDK, to read the reply's headers. */
function rawVerify(p: TestPartner, batch: Batch, otp: string): Promise<RawReply> {
  return rawRequest(tb, `svc.account.${batch.ref.entity_id}.bulk_payment.verify`,
    JSON.stringify({ ...batch.ref, otp }), { token: p.token })
}

function assertTooMany(reply: RawReply, retryAfterMs: number): void {
  assert.equal(reply.code, 429, JSON.stringify(reply.body))
  assert.equal(reply.body.error.type, 'too_many_attempts')
  assert.equal(reply.headers['Retry-After-Ms'], String(retryAfterMs))
}

async function expectWrong(p: TestPartner, batch: Batch, attemptsLeft: number): Promise<void> {
  const error = await expectApiError(
    p.client.bulkPayments.verify({ ...batch.ref, otp: wrongOtp(batch.otp) }), 400)
  assert.equal(error.type, 'otp_invalid')
  assert.equal((error.details[0] as { attempts_left: number }).attempts_left, attemptsLeft)
}

/** Three wrong PINs on each of three new batches: 9 wrong PINs, each batch ended failed. */
async function nineWrong(p: TestPartner, spacingMs = 0): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const batch = await pendingBatch(p)
    for (const left of [2, 1, 0]) {
      await expectWrong(p, batch, left)
      tb.clock.advance(spacingMs)
    }
  }
}

async function rowOf(bulkPaymentId: string) {
  return tb.bank.database.db.selectFrom('bulk_payments').selectAll().where('bulk_payment_id', '=',
    bulkPaymentId).executeTakeFirstOrThrow()
}

async function wrongPinsOf(entityId: string): Promise<number> {
  const rows = await tb.bank.database.db.selectFrom('bulk_wrong_pins').select('batch_id').where(
    'entity_id', '=', entityId).execute()
  return rows.length
}

async function messagesSent(): Promise<number> {
  return (await tb.bank.database.db.selectFrom('notifier_messages').select('id').execute()).length
}

test('bulk - PIN budget: the 10th wrong PIN of an entity across batches is taken; then every verify of its batches is 429 with Retry-After-Ms, the right PIN too, and changes nothing', async () => {
  const { p, pool } = await fundedPartner()
  const first = tb.clock.now().getTime()
  await nineWrong(p, 10_000)
  const last = await pendingBatch(p)
  await expectWrong(p, last, 2)
  const before = await balances(p, pool)
  const sent = await messagesSent()
  const other = await pendingBatch(p)
  for (const [batch, otp] of [[last, wrongOtp(last.otp)], [last, last.otp], [other, other.otp],
      [other, wrongOtp(other.otp)]] as const) {
    tb.clock.advance(1_000)
    assertTooMany(await rawVerify(p, batch, otp), first + hour_ms - tb.clock.now().getTime())
  }
  assert.equal((await p.client.bulkPayments.status(last.ref)).status, 'pending_otp')
  assert.equal((await p.client.bulkPayments.status(other.ref)).status, 'pending_otp')
  assert.equal((await rowOf(last.ref.bulk_payment_id)).otp_attempts, 1,
    'the 429s used none of the batch attempts')
  assert.equal((await rowOf(other.ref.bulk_payment_id)).otp_attempts, 0)
  assert.equal(await wrongPinsOf(p.rootEntityId), 10)
  assert.equal(await messagesSent(), sent + 1, 'only the PIN of the batch initiated meanwhile')
  const holdOfOther = BigInt(before.available) - BigInt((await balances(p, pool)).available)
  assert.equal(holdOfOther, 10_000n + BigInt(tb.config.fees.EFT), 'only the new batch held money')
  // Cancel is not a guess: it still works, and releases the holds.
  await p.client.bulkPayments.cancel(last.ref)
  await p.client.bulkPayments.cancel(other.ref)
  await assertLedgerClean(tb)
})

test('bulk - PIN budget: the hour is rolling; 1 ms before the oldest wrong PIN is an hour old verify is 429, at the hour the batch still has its attempts', async () => {
  const { p } = await fundedPartner()
  const early = tb.clock.now().getTime()
  await nineWrong(p)
  tb.clock.advance(58 * 60_000)
  const batch = await pendingBatch(p)
  await expectWrong(p, batch, 2)
  for (let i = 0; i < 3; i++) assertTooMany(await rawVerify(p, batch, wrongOtp(batch.otp)),
    2 * 60_000)
  tb.clock.set(new Date(early + hour_ms - 1))
  assertTooMany(await rawVerify(p, batch, batch.otp), 1)
  tb.clock.advance(1)
  // The nine early ones have left the hour; the batch lost one attempt, to the wrong PIN before the
  // 429s.
  await expectWrong(p, batch, 1)
  const verified = await p.client.bulkPayments.verify({ ...batch.ref, otp: batch.otp })
  assert.equal(verified.status, 'processing')
  assert.equal(await wrongPinsOf(p.rootEntityId), 2, 'wrong PINs older than an hour are forgotten')
  await tb.bank.services.jobRunner.runDue()
  await assertLedgerClean(tb)
})

test('bulk - PIN budget is per entity: another entity of the same partner verifies while the first is locked out', async () => {
  const { p } = await fundedPartner()
  const second =
    (await p.client.entities.create(businessEntity({ name: 'Second Co (Pty) Ltd' }))).id
  await tb.operator.entities.review({ entity_id: second, decision: 'approve' })
  const account =
    (await p.client.accounts.getByEntity({ entity_id: second })).accounts[0]!.account_id
  await fund(tb, account, 1_000_000)
  await nineWrong(p)
  const locked = await pendingBatch(p)
  await expectWrong(p, locked, 2)
  assertTooMany(await rawVerify(p, locked, locked.otp), hour_ms)
  const theirs = await pendingBatch(p, second)
  await expectWrong(p, theirs, 2)
  assert.equal((await p.client.bulkPayments.verify({ ...theirs.ref, otp: theirs.otp })).status,
    'processing')
  await p.client.bulkPayments.cancel(locked.ref)
  await tb.bank.services.jobRunner.runDue()
  await assertLedgerClean(tb)
})

test('bulk - pending limit: 20 batches wait for their PIN; the 21st initiate is 429 with Retry-After-Ms, holds nothing and sends no PIN; a cancel, a verify or an expiry makes room', async () => {
  const { p, pool } = await fundedPartner()
  const first = tb.clock.now().getTime()
  const waiting: Batch[] = []
  for (let i = 0; i < 20; i++) {
    waiting.push(await pendingBatch(p))
    tb.clock.advance(1_000)
  }
  const before = await balances(p, pool)
  const sent = await messagesSent()
  const extra = batchBody(p.rootEntityId, [payment(1)])
  const initiateRaw = () => rawRequest(tb, `svc.account.${p.rootEntityId}.bulk_payment.initiate`,
    JSON.stringify(extra), { token: p.token })
  assertTooMany(await initiateRaw(), first + otp_ttl_ms - tb.clock.now().getTime())
  assert.deepEqual(await balances(p, pool), before, 'nothing held')
  assert.equal(await messagesSent(), sent, 'no PIN sent')
  await expectApiError(p.client.bulkPayments.status(
    { entity_id: p.rootEntityId, bulk_payment_id: extra.bulk_payment_id }), 404)

  // A cancel makes room for one; the id refused before was never stored, so it is taken now.
  await p.client.bulkPayments.cancel(waiting[3]!.ref)
  assert.equal((await p.client.bulkPayments.initiate(extra)).status, 'pending_otp')
  await expectApiError(p.client.bulkPayments.initiate(batchBody(p.rootEntityId, [payment(1)])), 429)
  // So does a verify.
  await p.client.bulkPayments.verify({ ...waiting[5]!.ref, otp: waiting[5]!.otp })
  await p.client.bulkPayments.initiate(batchBody(p.rootEntityId, [payment(1)]))
  // And an expired PIN, before the expiry job has ended its batch: 1 ms before, still 429.
  tb.clock.set(new Date(first + otp_ttl_ms - 1))
  const refused = await rawRequest(tb, `svc.account.${p.rootEntityId}.bulk_payment.initiate`,
    JSON.stringify(batchBody(p.rootEntityId, [payment(1)])), { token: p.token })
  assertTooMany(refused, 1)
  tb.clock.advance(1)
  await p.client.bulkPayments.initiate(batchBody(p.rootEntityId, [payment(1)]))
  await expectApiError(p.client.bulkPayments.initiate(batchBody(p.rootEntityId, [payment(1)])), 429)
  // Another partner's entity is not crowded by this one.
  const other = await fundedPartner()
  await pendingBatch(other.p)
  tb.clock.advance(otp_ttl_ms)
  await tb.bank.services.jobRunner.runDue()
  await assertLedgerClean(tb)
})


function tally(outcomes: PromiseSettledResult<unknown>[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const key = o.status === 'fulfilled' ? 'ok' : o.reason instanceof BankError ? o.reason.type
      : String(o.reason)
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

/**
 * Requests of one entity at once, alternating between `instances` (two on PostgreSQL, the
 * one twice on PGlite): 25 initiates take exactly 20 places, and 12 wrong PINs on 6 batches
 * are exactly 10 wrong PINs and two 429s. Each instance's service is called directly, so
 * both instances certainly take part, each through its own connection pool.
 */
async function racesAcross(instances: [Bank, Bank]): Promise<void> {
  const { p } = await fundedPartner()
  const entity = p.rootEntityId
  // The partner's caller as the endpoint wrapper finds it, to call each instance's service
  // directly.
  const caller = await tb.bank.services.credentials.verify(p.token)
  const bodies = Array.from({ length: 25 }, () => bulkInitiateRequest.parse(
    batchBody(entity, [payment(1)])))
  const initiated = await Promise.allSettled(
    bodies.map((body, i) => instances[i % 2]!.services.bulk.initiate(caller, entity, body)))
  assert.deepEqual(tally(initiated), { ok: 20, too_many_attempts: 5 })
  const pending = await tb.bank.database.db.selectFrom('bulk_payments').select('id').where(
    'entity_id', '=', entity).where('status', '=', 'pending_otp').execute()
  assert.equal(pending.length, 20)

  const taken = bodies.filter((_, i) => initiated[i]!.status === 'fulfilled').slice(0, 6)
  const batches =
    await Promise.all(
    taken.map(async (b) => ({ ref: { entity_id: entity, bulk_payment_id: b.bulk_payment_id },
    otp: await otpOf(tb, p, b.bulk_payment_id) })))
  const guesses = batches.flatMap((b) => [b, b])
  const verified = await Promise.allSettled(
    guesses.map((b, i) => instances[i % 2]!.services.bulk.verify(p.partnerId, entity,
      { bulk_payment_id: b.ref.bulk_payment_id, otp: wrongOtp(b.otp) })),
  )
  assert.deepEqual(tally(verified), { otp_invalid: 10, too_many_attempts: 2 })
  assert.equal(await wrongPinsOf(entity), 10)
  const attempts = await tb.bank.database.db.selectFrom('bulk_payments').select('otp_attempts')
    .where('entity_id', '=', entity).execute()
  assert.equal(attempts.reduce((sum, row) => sum + row.otp_attempts, 0), 10,
    'the 429s used no batch attempts')
  // Now even the right PIN is refused, on either instance.
  for (const bank of instances) {
    const right = await Promise.allSettled([bank.services.bulk.verify(p.partnerId, entity,
      { bulk_payment_id: batches[0]!.ref.bulk_payment_id, otp: batches[0]!.otp })])
    assert.deepEqual(tally(right), { too_many_attempts: 1 })
  }
  tb.clock.advance(otp_ttl_ms)
  await tb.bank.services.jobRunner.runDue()
  await assertLedgerClean(tb)
}

if (storage === 'postgres') {
  describe('two instances sharing one PostgreSQL', () => {
    let second: Bank

    before(async () => {
      await tb.ready
      second = await startBank({ config: tb.config, clock: tb.clock, log: createLogger('silent'),
        natsUrl: tb.natsUrl, validateResponses: true })
      await second.services.jobRunner.stop()
    })

    after(async () => {
      await second?.stop()
    })

    test('bulk - two instances: 25 initiates and 12 wrong PINs of one entity at once, split between them, stop at 20 waiting and 10 wrong', async () => {
      await racesAcross([tb.bank, second])
    })
  })
} else {
  test('bulk - on PGlite one instance: 25 initiates and 12 wrong PINs of one entity at once stop at 20 waiting and 10 wrong', async () => {
    // PGlite is embedded in one process: a second instance cannot share its database.
    await racesAcross([tb.bank, tb.bank])
  })
}
