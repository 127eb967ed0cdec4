import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { sast } from '../transfers/helpers.ts'
import {
  cardOnNewAccount,
  expectApproved,
  expectDecline,
  holderAction,
  limits,
  listedCard,
  moneyState,
  purchase,
} from './rule-helpers.ts'

// Every reason the card network declines for, each triggered on a card of its own account:
// the decline holds nothing, writes no transaction, leaves balance and available as they were,
// and is recorded with its reason. Bad input is refused (400, 404) and changes nothing.
// The clock only moves forward here: the test that moves it past the cards' expiry is last.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const allFeatures = {
  domestic: true,
  international: true,
  e_commerce: true,
  atm: true,
  pos: true,
  contactless: true,
}

async function authorizationsOf(cardId: string): Promise<number> {
  const rows = await tb.bank.database.db
    .selectFrom('card_authorizations')
    .select('id')
    .where('card_id', '=', cardId)
    .execute()
  return rows.length
}

test('card authorization - insufficient_funds: one cent more than available is declined; exactly available is approved', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, {}, 5_000)
  await expectDecline(tb, p, s.accountId, purchase(cardId, 5_001), 'insufficient_funds')
  const auth = await expectApproved(tb, purchase(cardId, 5_000))
  // An increment the account cannot cover is declined too, and moves nothing.
  const before = await moneyState(p, s.accountId)
  const more = await tb.operator.cardNetwork.increment({
    authorization_id: auth.authorization_id,
    amount: 1,
  })
  assert.equal(more.approved, false)
  assert.equal(more.decline_reason, 'insufficient_funds')
  assert.equal(more.held, 5_000)
  assert.deepEqual(await moneyState(p, s.accountId), before)
})

test('card authorization - card_inactive: a physical card not yet activated, and a cancelled card', async () => {
  const physical = await cardOnNewAccount(tb, p, { type: 1, name: 'Plastic' })
  const body = purchase(physical.cardId, 1_000)
  await expectDecline(tb, p, physical.s.accountId, body, 'card_inactive')
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await expectApproved(tb, purchase(cardId, 1_000))
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'cancelled' })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_inactive')
})

test('card authorization - card_frozen: frozen by update_status, approved again once unfrozen', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'frozen' })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_frozen')
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'active' })
  await expectApproved(tb, purchase(cardId, 1_000))
})

test('card authorization - card_frozen: an auto_lock time that has passed freezes the card', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const lockAt = new Date(tb.clock.now().getTime() + 3_600_000)
  await p.client.cards.edit({
    entity_id: s.entityId,
    card_id: cardId,
    extras: { auto_lock: lockAt.toISOString() },
  })
  await expectApproved(tb, purchase(cardId, 1_000))
  tb.clock.set(new Date(lockAt.getTime() + 60_000))
  assert.equal((await listedCard(p, s, cardId)).status, 'frozen')
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_frozen')
  // Unfreezing clears the passed auto-lock time, or the card would freeze again at once.
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'active' })
  assert.equal((await listedCard(p, s, cardId)).extras.auto_lock, null)
  await expectApproved(tb, purchase(cardId, 1_000))
})

test('card authorization - card_stopped: a card reported lost or stolen', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'stopped' })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_stopped')
})

test('card authorization - feature_disabled: domestic (ZAF) and international (another country)', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const edit = (features: Partial<typeof allFeatures>) =>
    p.client.cards.edit({ entity_id: s.entityId, card_id: cardId, features })
  const abroad = purchase(cardId, 1_000, { merchant_country: 'USA' })
  await edit({ domestic: false })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'feature_disabled')
  await expectApproved(tb, abroad)
  await edit({ domestic: true, international: false })
  await expectDecline(tb, p, s.accountId, abroad, 'feature_disabled')
  await expectApproved(tb, purchase(cardId, 1_000))
})

test('card authorization - feature_disabled: the e_commerce and pos channels, and contactless entry', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const cases = [
    { feature: 'e_commerce', body: { channel: 'e_commerce', entry_mode: 'manual' } },
    { feature: 'pos', body: { channel: 'pos' } },
    { feature: 'contactless', body: { entry_mode: 'contactless' } },
  ] as const
  for (const { feature, body } of cases) {
    const features = { ...allFeatures, [feature]: false }
    await p.client.cards.edit({ entity_id: s.entityId, card_id: cardId, features })
    const declined = purchase(cardId, 1_000, body)
    await expectDecline(tb, p, s.accountId, declined, 'feature_disabled')
    await p.client.cards.edit({ entity_id: s.entityId, card_id: cardId, features: allFeatures })
    await expectApproved(tb, declined)
  }
})

test('card authorization - feature_disabled: atm, by the atm channel and by MCC 6011 on another channel', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.setPin({ ...holderAction(s, cardId), pin: '4321' })
  const atm = purchase(cardId, 1_000, { channel: 'atm', mcc: '6011', pin: '4321' })
  const cashAtTill = purchase(cardId, 1_000, { mcc: '6011' })
  await p.client.cards.edit({ entity_id: s.entityId, card_id: cardId, features: { atm: false } })
  await expectDecline(tb, p, s.accountId, atm, 'feature_disabled')
  await expectDecline(tb, p, s.accountId, { ...atm, mcc: '5812' }, 'feature_disabled')
  await expectDecline(tb, p, s.accountId, cashAtTill, 'feature_disabled')
  await expectApproved(tb, purchase(cardId, 1_000))
  await p.client.cards.edit({ entity_id: s.entityId, card_id: cardId, features: { atm: true } })
  await expectApproved(tb, atm)
  await expectApproved(tb, cashAtTill)
})

test('card authorization - limit_exceeded: one cent over the transaction limit', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ transaction: 10_000 }) })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 10_001), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 10_000))
})

test('card authorization - incorrect_pin: an ATM without a PIN, and a wrong PIN', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.setPin({ ...holderAction(s, cardId), pin: '1234' })
  const atm = purchase(cardId, 1_000, { channel: 'atm', mcc: '6011' })
  await expectDecline(tb, p, s.accountId, atm, 'incorrect_pin')
  await expectDecline(tb, p, s.accountId, { ...atm, pin: '9999' }, 'incorrect_pin')
  // A right PIN forgets the wrong ones before it: two more wrong ones are not yet a block.
  await expectApproved(tb, { ...atm, pin: '1234' })
  const chipAndPin = purchase(cardId, 1_000, { pin: '1111' })
  await expectDecline(tb, p, s.accountId, chipAndPin, 'incorrect_pin')
  await expectDecline(tb, p, s.accountId, { ...atm, pin: '0000' }, 'incorrect_pin')
  await expectApproved(tb, { ...chipAndPin, pin: '1234' })
})

test('card authorization - pin_blocked: three wrong PINs block even the right one until set_pin', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.setPin({ ...holderAction(s, cardId), pin: '1234' })
  const atm = purchase(cardId, 1_000, { channel: 'atm', mcc: '6011' })
  for (const wrong of ['0001', '0002', '0003']) {
    await expectDecline(tb, p, s.accountId, { ...atm, pin: wrong }, 'incorrect_pin')
  }
  await expectDecline(tb, p, s.accountId, { ...atm, pin: '1234' }, 'pin_blocked')
  await expectDecline(tb, p, s.accountId, { ...atm, pin: '0004' }, 'pin_blocked')
  // A payment that asks for no PIN is not a PIN use.
  await expectApproved(tb, purchase(cardId, 1_000))
  await p.client.cards.setPin({ ...holderAction(s, cardId), pin: '1234' })
  await expectApproved(tb, { ...atm, pin: '1234' })
})

test('card authorization - bad input is refused with 400 and changes nothing', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const before = { money: await moneyState(p, s.accountId), count: await authorizationsOf(cardId) }
  const bad = [
    [{ mcc: 'ABCD' }, 'mcc'],
    [{ mcc: '601' }, 'mcc'],
    [{ merchant_country: 'ZZZ' }, 'merchant_country'],
    [{ merchant_country: 'ZA' }, 'merchant_country'],
    [{ amount: 0 }, 'amount'],
    [{ amount: -100 }, 'amount'],
    [{ amount: 10.5 }, 'amount'],
    [{ pin: '12345' }, 'pin'],
    [{ channel: 'phone' }, 'channel'],
  ] as const
  for (const [override, field] of bad) {
    const body = { ...purchase(cardId, 1_000), ...override } as never
    await expectRefusal(tb.operator.cardNetwork.authorize(body), 400, field)
  }
  assert.deepEqual(
    { money: await moneyState(p, s.accountId), count: await authorizationsOf(cardId) },
    before,
  )
})

test('card authorization - an unknown card is 404 on the network; another partner cannot reach the card (404)', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const before = await moneyState(p, s.accountId)
  await expectRefusal(tb.operator.cardNetwork.authorize(purchase(randomUUID(), 1_000)), 404)
  await expectRefusal(
    tb.operator.cardNetwork.refund({ card_id: randomUUID(), amount: 100, merchant_name: 'X' }),
    404,
  )
  const other = await onboardPartner(tb, { approve: true })
  const action = holderAction(s, cardId)
  await expectRefusal(other.client.cards.updateStatus({ ...action, status: 'stopped' }), 404)
  await expectRefusal(other.client.cards.setPin({ ...action, pin: '1234' }), 404)
  await expectRefusal(
    other.client.cards.edit({ entity_id: s.entityId, card_id: cardId, name: 'Taken over' }),
    404,
  )
  const card = await listedCard(p, s, cardId)
  assert.equal(card.status, 'active')
  assert.equal(card.name, 'Travel card')
  assert.deepEqual(await moneyState(p, s.accountId), before)
  await expectApproved(tb, purchase(cardId, 1_000))
})

// Last: it moves the clock three years on, past every card's expiry.
test('card authorization - card_expired: valid to the last day of its 36th month (SAST), expired the day after', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  // Issued in November 2026: valid until 2029-11-30, SAST.
  tb.clock.set(sast('2029-11-30', '23:30'))
  assert.equal((await listedCard(p, s, cardId)).status, 'active')
  await expectApproved(tb, purchase(cardId, 1_000))
  tb.clock.set(sast('2029-12-01', '00:30'))
  assert.equal((await listedCard(p, s, cardId)).status, 'expired')
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_expired')
})
