import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import type { Bank } from '../../src/app.ts'
import {
  onboardPartner,
  useSecondInstance,
  storage,
  useTestBank,
  type TestPartner,
} from '../support/harness.ts'
import { balances } from '../transfers/helpers.ts'
import {
  authorizationRow,
  cardOnNewAccount,
  expectApproved,
  expectDecline,
  holderAction,
  ledgerClean,
  limits,
  purchase,
} from './rule-helpers.ts'

// An instance decides an authorization group from the cards and accounts it remembers
// (card-memory.ts) when it has them all, in one write that checks each card's version and
// each account; a card changed by anything else (an edit, a status, a wrong PIN, a clearing,
// another instance's authorization) fails that check and the group is decided again with
// its cards locked and read. These tests change the card behind the memory's back and
// assert the rules still hold, and that the memory was used where it could be.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const starts = (bank: Bank = tb.bank) => ({ ...bank.services.cardNetwork.groupStarts })

test('card authorization memory - the first authorization of a card is read under lock, the next from memory', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const before = starts()
  await expectApproved(tb, purchase(cardId, 1_000))
  await expectApproved(tb, purchase(cardId, 2_000))
  await expectApproved(tb, purchase(cardId, 3_000))
  const now = starts()
  assert.equal(now.locked - before.locked, 1, 'one group locked and read its card')
  assert.equal(now.remembered - before.remembered, 2, 'the next two started from memory')
  assert.equal(now.stale - before.stale, 0)
  const { balance, available } = await balances(p, s.accountId)
  assert.equal(balance, '1000000')
  assert.equal(available, String(1_000_000 - 6_000), 'each held once')
  await ledgerClean(tb)
})

test('card authorization memory - a card frozen since it was remembered is declined, not approved from memory', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await expectApproved(tb, purchase(cardId, 1_000))
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'frozen' })
  const before = starts()
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'card_frozen')
  assert.equal(starts().stale - before.stale, 1, 'the remembered card was found changed')
  await p.client.cards.updateStatus({ ...holderAction(s, cardId), status: 'active' })
  await expectApproved(tb, purchase(cardId, 1_000))
})

test('card authorization memory - a lowered limit is kept although the card was remembered with the old one', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ transaction: 50_000 }) })
  await expectApproved(tb, purchase(cardId, 40_000))
  await p.client.cards.edit({
    entity_id: s.entityId,
    card_id: cardId,
    limits: limits({ transaction: 10_000 }),
  })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 40_000), 'limit_exceeded')
})

test('card authorization memory - a clearing over the hold counts in the day: the remembered spending is not used', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ daily: 10_000 }) })
  const first = await expectApproved(tb, purchase(cardId, 5_000))
  await expectApproved(tb, purchase(cardId, 3_000)) // from memory: 8,000 spent today
  // Cleared 15 % over its hold: the day has now spent 5,750 + 3,000 = 8,750.
  await tb.operator.cardNetwork.clear({ authorization_id: first.authorization_id, amount: 5_750 })
  // 8,000 + 1,500 would pass; 8,750 + 1,500 does not.
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_500), 'limit_exceeded')
  await expectApproved(tb, purchase(cardId, 1_250))
  await ledgerClean(tb)
})

test('card authorization memory - a wrong PIN on a remembered card is counted on the card', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.cards.setPin({ ...holderAction(s, cardId), pin: '4821' })
  await expectApproved(tb, purchase(cardId, 1_000, { pin: '4821' }))
  await expectApproved(tb, purchase(cardId, 1_000, { pin: '4821' }))
  const wrong = await expectDecline(
    tb,
    p,
    s.accountId,
    purchase(cardId, 1_000, { pin: '0000' }),
    'incorrect_pin',
  )
  assert.equal(
    (await authorizationRow(tb, wrong.authorization_id))?.decline_reason,
    'incorrect_pin',
  )
  const card = await tb.bank.database.db
    .selectFrom('cards')
    .select('wrong_pins')
    .where('id', '=', cardId)
    .executeTakeFirstOrThrow()
  assert.equal(card.wrong_pins, 1)
  // The right PIN after it resets nothing it should not: still approved.
  await expectApproved(tb, purchase(cardId, 1_000, { pin: '4821' }))
})

test('card authorization memory - authorizations at once on one remembered card never pass its daily limit', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ daily: 20_000 }) })
  await expectApproved(tb, purchase(cardId, 1_000))
  const replies = await Promise.all(
    Array.from({ length: 40 }, () => tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))),
  )
  assert.equal(replies.filter((r) => r.approved).length, 19, '1,000 + 19 × 1,000 = the limit')
  assert.equal(replies.filter((r) => r.decline_reason === 'limit_exceeded').length, 21)
  const { available } = await balances(p, s.accountId)
  assert.equal(available, String(1_000_000 - 20_000))
})

if (storage === 'postgres') {
  describe('two instances sharing one PostgreSQL', () => {
    const second = useSecondInstance(tb)

    test('card authorization memory - what the other instance spent counts: its memory is found stale', () =>
      spentElsewhere(second()))

    test('card authorization memory - the account changed by the other instance: funds are checked as they are', () =>
      fundsElsewhere(second()))
  })
}

/** A daily limit spent through two instances: the one that remembers less finds it stale. */
async function spentElsewhere(second: Bank) {
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ daily: 10_000 }) })
  const here = tb.bank.services.cardNetwork
  const there = second.services.cardNetwork
  const operator = 'test-operator'
  assert.equal((await here.authorize(purchase(cardId, 5_000), operator)).approved, true)
  assert.equal((await here.authorize(purchase(cardId, 1_000), operator)).approved, true)
  // The other instance spends 3,000 more: 9,000 today; this one remembers 6,000.
  assert.equal((await there.authorize(purchase(cardId, 3_000), operator)).approved, true)
  const before = starts()
  const over = await here.authorize(purchase(cardId, 2_000), operator)
  assert.equal(over.decline_reason, 'limit_exceeded', '6,000 + 2,000 would pass; 9,000 does not')
  assert.equal(starts().stale - before.stale, 1)
  assert.equal((await here.authorize(purchase(cardId, 1_000), operator)).approved, true)
  const { available } = await balances(p, s.accountId)
  assert.equal(available, String(1_000_000 - 10_000))
  await ledgerClean(tb)
}

/** The account spent through the other instance: funds are checked as they are. */
async function fundsElsewhere(second: Bank) {
  const { s, cardId } = await cardOnNewAccount(tb, p, {}, 10_000)
  const here = tb.bank.services.cardNetwork
  const there = second.services.cardNetwork
  const operator = 'test-operator'
  assert.equal((await here.authorize(purchase(cardId, 1_000), operator)).approved, true)
  // Spent through the other instance: 8,500 more held, 500 left.
  assert.equal((await there.authorize(purchase(cardId, 8_500), operator)).approved, true)
  const short = await here.authorize(purchase(cardId, 1_000), operator)
  assert.equal(short.decline_reason, 'insufficient_funds', '500 is left, not 9,000')
  assert.equal((await here.authorize(purchase(cardId, 500), operator)).approved, true)
  const { available } = await balances(p, s.accountId)
  assert.equal(available, '0')
  await ledgerClean(tb)
}
