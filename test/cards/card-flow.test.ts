import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, transactionsOf } from '../transfers/helpers.ts'
import { cardRequest, cardSetup, issueCard, purchase, type CardSetup } from './helpers.ts'
import { luhnValid } from '../../src/contract/fields.ts'

// Cards end to end, through the partner's SDK and the sandbox's card network: request,
// approval with four eyes, an authorization that holds, its clearing that posts, a reversal
// that releases, a refund that credits; the ledger stays whole throughout.

const tb = useTestBank()
let p: TestPartner
let s: CardSetup

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  s = await cardSetup(tb, p)
})

async function ledgerClean(): Promise<void> {
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [], 'ledger verify finds nothing')
}

test('a request waits for a user of the entity; the holder may not approve their own card (four eyes)', async () => {
  const { id } = await p.client.cards.request(cardRequest(s, { name: 'Four eyes' }))
  const { requests } = await p.client.cards.listRequests({ account_id: s.accountId })
  const listed = requests.find((r) => r.id === id)
  assert.equal(listed?.status, 'pending')
  assert.equal(listed?.assigned_to, s.holderId)
  await assert.rejects(
    p.client.cards.respondToRequest({
      entity_id: s.entityId,
      account_id: s.accountId,
      initiator: s.holderId,
      request_id: id,
      approved: true,
    }),
    (e: any) => e.code === 400 && /four eyes/.test(e.message),
  )
  await p.client.cards.respondToRequest({
    entity_id: s.entityId,
    account_id: s.accountId,
    initiator: s.approverId,
    request_id: id,
    approved: true,
  })
  const again = (await p.client.cards.listRequests({ account_id: s.accountId })).requests.find(
    (r) => r.id === id,
  )
  assert.equal(again?.status, 'approved')
  await assert.rejects(
    p.client.cards.respondToRequest({
      entity_id: s.entityId,
      account_id: s.accountId,
      initiator: s.approverId,
      request_id: id,
      approved: false,
    }),
    (e: any) => e.code === 409,
  )
})

test('a virtual card is active at once and shows only its last four digits; details need card_details', async () => {
  const cardId = await issueCard(p, s, { name: 'Virtual one' })
  const { cards } = await p.client.cards.list({ entity_id: s.entityId, account_id: s.accountId })
  const card = cards.find((c) => c.id === cardId)!
  assert.equal(card.status, 'active')
  assert.match(card.last_4, /^\d{4}$/)
  assert.equal(card.org_id, s.entityId)
  assert.deepEqual(card.extras, { auto_lock: null })
  assert.ok(!JSON.stringify(cards).includes('card_number'))
  await assert.rejects(
    p.client.cards.getDetails({ account_id: s.accountId, initiator: s.holderId, id: cardId }),
    (e: any) => e.code === 403,
  )
  const { token } = await tb.operator.credentials.create({
    partner_id: p.partnerId,
    permissions: ['card_details'],
  })
  const { clientFor } = await import('../support/harness.ts')
  const details = await clientFor(tb, p.partnerId, token).cards.getDetails({
    account_id: s.accountId,
    initiator: s.holderId,
    id: cardId,
  })
  assert.match(details.card_number, /^\d{16}$/)
  assert.ok(luhnValid(details.card_number), 'the number is Luhn-valid')
  assert.ok(details.card_number.endsWith(card.last_4))
  assert.ok(details.card_number.startsWith(tb.config.cardBin))
  assert.match(details.cvv, /^\d{3}$/)
  assert.match(details.expiry_date, /^\d{2}\/\d{2}$/)
})

test('a physical card is inactive until activated with its last four digits', async () => {
  const cardId = await issueCard(p, s, { name: 'Plastic', type: 1 })
  const card = () =>
    p.client.cards
      .list({ entity_id: s.entityId, account_id: s.accountId })
      .then((r) => r.cards.find((c) => c.id === cardId)!)
  assert.equal((await card()).status, 'inactive')
  const declined = await tb.operator.cardNetwork.authorize(purchase(cardId, 1000))
  assert.equal(declined.decline_reason, 'card_inactive')
  const last4 = (await card()).last_4
  const wrong = last4 === '0000' ? '1111' : '0000'
  await assert.rejects(
    p.client.cards.activate({
      account_id: s.accountId,
      initiator: s.holderId,
      id: cardId,
      last_4: wrong,
    }),
    (e: any) => e.code === 400,
  )
  await p.client.cards.activate({
    account_id: s.accountId,
    initiator: s.holderId,
    id: cardId,
    last_4: last4,
  })
  assert.equal((await card()).status, 'active')
})

test('an authorization holds; its clearing posts and releases; the ledger verifies', async () => {
  const cardId = await issueCard(p, s, { name: 'Spender' })
  const before = await balances(p, s.accountId)
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 12_345))
  assert.equal(auth.approved, true)
  assert.equal(auth.decline_reason, null)
  assert.ok(auth.tx_id)
  const held = await balances(p, s.accountId)
  assert.equal(held.balance, before.balance)
  assert.equal(BigInt(held.available), BigInt(before.available) - 12_345n)
  const pending = (await transactionsOf(p, s.accountId)).find((t) => t.tx_id === auth.tx_id)!
  assert.equal(pending.status, 'Pending')
  assert.equal(pending.tx_payment_type, 'CARD')
  assert.equal(pending.recipient_name, 'Corner Cafe')

  const cleared = await tb.operator.cardNetwork.clear({
    authorization_id: auth.authorization_id,
    amount: 12_000,
  })
  assert.equal(cleared.status, 'cleared')
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(before.balance) - 12_000n)
  assert.equal(after.available, after.balance)
  // A repeat of the same clearing moves nothing.
  await tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 12_000 })
  assert.deepEqual(await balances(p, s.accountId), after)
  await ledgerClean()
})

test('an increment, a partial reversal and a clearing above the hold', async () => {
  const cardId = await issueCard(p, s, { name: 'Hotel' })
  const before = await balances(p, s.accountId)
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 10_000))
  const more = await tb.operator.cardNetwork.increment({
    authorization_id: auth.authorization_id,
    amount: 5_000,
  })
  assert.equal(more.held, 15_000)
  const less = await tb.operator.cardNetwork.reverse({
    authorization_id: auth.authorization_id,
    amount: 3_000,
  })
  assert.equal(less.held, 12_000)
  assert.equal(
    BigInt((await balances(p, s.accountId)).available),
    BigInt(before.available) - 12_000n,
  )
  await assert.rejects(
    tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 13_801 }),
    (e: any) => e.code === 400,
  )
  await tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 13_800 })
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(before.balance) - 13_800n)
  assert.equal(after.available, after.balance)
  await ledgerClean()
})

test('a whole reversal releases everything; a refund credits', async () => {
  const cardId = await issueCard(p, s, { name: 'Refunds' })
  const before = await balances(p, s.accountId)
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 7_000))
  const reversed = await tb.operator.cardNetwork.reverse({
    authorization_id: auth.authorization_id,
  })
  assert.equal(reversed.status, 'reversed')
  assert.deepEqual(await balances(p, s.accountId), before)
  await assert.rejects(
    tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 7_000 }),
    (e: any) => e.code === 409,
  )
  const refund = await tb.operator.cardNetwork.refund({
    card_id: cardId,
    amount: 2_500,
    merchant_name: 'Corner Cafe',
  })
  assert.equal(BigInt((await balances(p, s.accountId)).balance), BigInt(before.balance) + 2_500n)
  const row = (await transactionsOf(p, s.accountId)).find((t) => t.tx_id === refund.tx_id)!
  assert.equal(row.tx_type, 'refund')
  assert.equal(row.status, 'Successful')
  await ledgerClean()
})

test('a single-use card is cancelled by its first clearing', async () => {
  const cardId = await issueCard(p, s, { name: 'Once', use_type: 1 })
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  await tb.operator.cardNetwork.clear({ authorization_id: auth.authorization_id, amount: 1_000 })
  const { cards } = await p.client.cards.list({ entity_id: s.entityId, account_id: s.accountId })
  assert.equal(cards.find((c) => c.id === cardId)?.status, 'cancelled')
  assert.equal(
    (await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))).decline_reason,
    'card_inactive',
  )
})
