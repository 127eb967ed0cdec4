import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, sast, txById } from '../transfers/helpers.ts'
import {
  authorizationRow,
  cardOnNewAccount,
  expectApproved,
  expectDecline,
  ledgerClean,
  limits,
  purchase,
  type CardLimitsBody,
} from './rule-helpers.ts'

// A card's limits at, under and over: the transaction's (increments included), and the
// spending of the SAST day, month and year, where a reversed amount no longer counts and a
// cleared one counts what was cleared. Then the expiry of an authorization never cleared.
// The clock only moves forward, so the tests run in time order: each sets the SAST time it
// is about, later than the test before.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

async function limitedCard(on: Partial<CardLimitsBody>) {
  return cardOnNewAccount(tb, p, { limits: limits(on) })
}

test('card authorization - transaction limit: under and at are approved, one cent over is declined', async () => {
  const { s, cardId } = await limitedCard({ transaction: 10_000 })
  await expectApproved(tb, purchase(cardId, 9_999))
  await expectApproved(tb, purchase(cardId, 10_000))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 10_001), 'limit_exceeded')
  // The limit is per transaction, not a running total.
  await expectApproved(tb, purchase(cardId, 10_000))
})

test('card authorization - transaction limit: increments count toward it; a partial reversal makes room again', async () => {
  const { s, cardId } = await limitedCard({ transaction: 10_000 })
  const auth = await expectApproved(tb, purchase(cardId, 6_000))
  const id = auth.authorization_id
  const atLimit = await tb.operator.cardNetwork.increment({ authorization_id: id, amount: 4_000 })
  assert.equal(atLimit.approved, true)
  assert.equal(atLimit.held, 10_000)
  const before = await balances(p, s.accountId)
  const over = await tb.operator.cardNetwork.increment({ authorization_id: id, amount: 1 })
  assert.equal(over.approved, false)
  assert.equal(over.decline_reason, 'limit_exceeded')
  assert.equal(over.held, 10_000)
  assert.deepEqual(await balances(p, s.accountId), before, 'a declined increment moves nothing')
  assert.equal(BigInt((await authorizationRow(tb, id))?.held ?? -1), 10_000n)
  await tb.operator.cardNetwork.reverse({ authorization_id: id, amount: 1_000 })
  const again = await tb.operator.cardNetwork.increment({ authorization_id: id, amount: 1_000 })
  assert.equal(again.approved, true)
  assert.equal(again.held, 10_000)
  const overAgain = await tb.operator.cardNetwork.increment({ authorization_id: id, amount: 1 })
  assert.equal(overAgain.decline_reason, 'limit_exceeded')
})

test('card authorization - daily limit: 23:30 and 00:30 SAST the next day fall on different days', async () => {
  const { s, cardId } = await limitedCard({ daily: 10_000 })
  tb.clock.set(sast('2026-11-24', '23:30')) // 21:30 UTC
  await expectApproved(tb, purchase(cardId, 6_000))
  tb.clock.set(sast('2026-11-24', '23:45'))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 4_001), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 4_000))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1), 'limit_exceeded')
  // 22:30 UTC, the same UTC day, but the next SAST day: a new daily limit.
  tb.clock.set(sast('2026-11-25', '00:30'))
  await expectApproved(tb, purchase(cardId, 10_000))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1), 'limit_exceeded')
})

test('card authorization - daily limit: a reversed amount no longer counts; a cleared one counts what was cleared', async () => {
  const { s, cardId } = await limitedCard({ daily: 10_000 })
  tb.clock.set(sast('2026-11-25', '10:00'))
  const first = await expectApproved(tb, purchase(cardId, 8_000))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 2_001), 'limit_exceeded')
  await tb.operator.cardNetwork.reverse({ authorization_id: first.authorization_id, amount: 3_000 })
  // 5,000 held: 5,000 left today.
  await expectDecline(tb, p, s.accountId, purchase(cardId, 5_001), 'limit_exceeded')
  await tb.operator.cardNetwork.clear({ authorization_id: first.authorization_id, amount: 4_000 })
  // 4,000 cleared: 6,000 left today.
  await expectDecline(tb, p, s.accountId, purchase(cardId, 6_001), 'limit_exceeded')
  const second = await expectApproved(tb, purchase(cardId, 6_000))
  await tb.operator.cardNetwork.reverse({ authorization_id: second.authorization_id })
  // Reversed whole: 6,000 left again. A clearing above the hold counts the amount cleared.
  const third = await expectApproved(tb, purchase(cardId, 5_000))
  await tb.operator.cardNetwork.clear({ authorization_id: third.authorization_id, amount: 5_750 })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 251), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 250))
  await ledgerClean(tb)
})

test('card authorization - monthly limit: the SAST month; cleared spending earlier in the month counts', async () => {
  const { s, cardId } = await limitedCard({ monthly: 20_000 })
  tb.clock.set(sast('2026-11-30', '23:30')) // 21:30 UTC
  const november = await expectApproved(tb, purchase(cardId, 15_000))
  await tb.operator.cardNetwork.clear({
    authorization_id: november.authorization_id,
    amount: 15_000,
  })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 5_001), 'limit_exceeded')
  tb.clock.set(sast('2026-12-01', '00:30')) // still November in UTC
  const december = await expectApproved(tb, purchase(cardId, 20_000))
  await tb.operator.cardNetwork.clear({
    authorization_id: december.authorization_id,
    amount: 19_000,
  })
  tb.clock.set(sast('2026-12-20', '12:00'))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_001), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 1_000))
})

test('card authorization - yearly limit: the SAST year', async () => {
  const { s, cardId } = await limitedCard({ yearly: 30_000 })
  tb.clock.set(sast('2026-12-31', '23:30')) // 21:30 UTC
  const auth = await expectApproved(tb, purchase(cardId, 25_000))
  await tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 25_000 })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 5_001), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 5_000))
  tb.clock.set(sast('2027-01-01', '00:30')) // still 2026 in UTC
  await expectApproved(tb, purchase(cardId, 30_000))
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1), 'limit_exceeded')
})

test('card authorization - an authorization not cleared in 7 days is released by the expiry job when the sandbox clock advances', async () => {
  const { s, cardId } = await limitedCard({ monthly: 10_000 })
  tb.clock.set(sast('2027-01-01', '10:00'))
  const before = await balances(p, s.accountId)
  const auth = await expectApproved(tb, purchase(cardId, 7_000))
  const held = await balances(p, s.accountId)
  assert.equal(BigInt(held.available), BigInt(before.available) - 7_000n)
  await tb.operator.sandbox.advance({ seconds: 6 * 86_400 })
  assert.equal((await authorizationRow(tb, auth.authorization_id))?.status, 'pending')
  assert.deepEqual(await balances(p, s.accountId), held, 'not yet: 6 days')
  await expectDecline(tb, p, s.accountId, purchase(cardId, 3_001), 'limit_exceeded')
  await tb.operator.sandbox.advance({ seconds: 2 * 86_400 })
  const row = await authorizationRow(tb, auth.authorization_id)
  assert.equal(row?.status, 'expired')
  assert.equal(BigInt(row?.held ?? -1), 0n)
  assert.equal((await txById(p, auth.tx_id!)).status, 'Reversed')
  assert.deepEqual(await balances(p, s.accountId), before, 'available restored')
  // Released, it no longer counts toward the month's limit, and it can no longer be cleared.
  await expectApproved(tb, purchase(cardId, 10_000))
  await assert.rejects(
    tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 7_000 }),
    (e: any) => e.code === 409,
  )
  await ledgerClean(tb)
})
