import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { expectRefusal } from '../support/assertions.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { clientFor, onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { cardRequest, cardSetup, holderAddress, issueCard, type CardSetup } from './helpers.ts'
import { holderAction, listedCard } from './rule-helpers.ts'

// Who may reach a card: another partner reaches none of a partner's cards or requests, not
// even with valid ids (404, as if they did not exist); the card's number needs the
// card_details permission (403 without); a business's card is approved by another user of
// the entity than its holder (four eyes), and never by a user of another entity (400).

const tb = useTestBank()
let a: TestPartner
let b: TestPartner
let sa: CardSetup
let sb: CardSetup
let cardA: string
let pendingA: string

before(async () => {
  await tb.ready
  a = await onboardPartner(tb, { approve: true })
  b = await onboardPartner(tb, { approve: true })
  sa = await cardSetup(tb, a)
  sb = await cardSetup(tb, b)
  cardA = await issueCard(a, sa)
  await issueCard(b, sb)
  pendingA = (await a.client.cards.request(cardRequest(sa, { name: 'Waiting' }))).id
})

async function detailsClient(p: TestPartner) {
  const { token } = await tb.operator.credentials.create({
    partner_id: p.partnerId,
    permissions: ['card_details'],
  })
  return clientFor(tb, p.partnerId, token)
}

test("another partner cannot list a partner's cards or card requests (404)", async () => {
  await expectRefusal(
    b.client.cards.list({ entity_id: sa.entityId, account_id: sa.accountId }),
    404,
  )
  await expectRefusal(b.client.cards.listRequests({ account_id: sa.accountId }), 404)
  // Its own listings show none of them.
  const own = await b.client.cards.list({ entity_id: sb.entityId, account_id: sb.accountId })
  assert.ok(own.cards.length > 0)
  assert.ok(!own.cards.some((c) => c.id === cardA))
  const requests = await b.client.cards.listRequests({ account_id: sb.accountId })
  assert.ok(!requests.requests.some((r) => r.id === pendingA))
})

test("another partner cannot edit, freeze, stop, activate or set the PIN of a partner's card (404)", async () => {
  const action = holderAction(sa, cardA)
  const calls = [
    () => b.client.cards.edit({ entity_id: sa.entityId, card_id: cardA, name: 'Taken over' }),
    () => b.client.cards.updateStatus({ ...action, status: 'frozen' }),
    () => b.client.cards.updateStatus({ ...action, status: 'stopped' }),
    () => b.client.cards.activate({ ...action, last_4: '1234' }),
    () => b.client.cards.setPin({ ...action, pin: '1234' }),
    // Its own entity, account and user, with the other partner's card.
    () => b.client.cards.edit({ entity_id: sb.entityId, card_id: cardA, name: 'Taken over' }),
    () => b.client.cards.updateStatus({ ...holderAction(sb, cardA), status: 'stopped' }),
  ]
  // One after another: each refusal is awaited as it is made.
  for (const call of calls) await expectRefusal(call(), 404)
  const card = await listedCard(a, sa, cardA)
  assert.equal(card.name, 'Travel card')
  assert.equal(card.status, 'active')
})

test("another partner cannot read a partner's card details, even with card_details (404)", async () => {
  const other = await detailsClient(b)
  await expectRefusal(other.cards.getDetails(holderAction(sa, cardA)), 404)
  await expectRefusal(other.cards.getDetails(holderAction(sb, cardA)), 404)
  // The partner's own credential with card_details reads them.
  const own = await detailsClient(a)
  const details = await own.cards.getDetails(holderAction(sa, cardA))
  assert.ok(details.card_number.endsWith((await listedCard(a, sa, cardA)).last_4))
})

test("another partner cannot request on, or approve, a partner's card (404)", async () => {
  await expectRefusal(b.client.cards.request(cardRequest(sa, { name: 'Intruder' })), 404)
  const respond = { initiator: sa.approverId, request_id: pendingA, approved: true }
  await expectRefusal(
    b.client.cards.respondToRequest({
      entity_id: sa.entityId,
      account_id: sa.accountId,
      ...respond,
    }),
    404,
  )
  await expectRefusal(
    b.client.cards.respondToRequest({
      entity_id: sb.entityId,
      account_id: sb.accountId,
      ...respond,
    }),
    404,
  )
  const { requests } = await a.client.cards.listRequests({ account_id: sa.accountId })
  assert.equal(requests.find((r) => r.id === pendingA)?.status, 'pending')
  assert.ok(!requests.some((r) => r.name === 'Intruder'))
})

test('a credential without card_details is refused get_details (403)', async () => {
  await expectRefusal(a.client.cards.getDetails(holderAction(sa, cardA)), 403)
  const { token } = await tb.operator.credentials.create({
    partner_id: a.partnerId,
    permissions: ['read', 'write'],
  })
  const readWrite = clientFor(tb, a.partnerId, token)
  await expectRefusal(readWrite.cards.getDetails(holderAction(sa, cardA)), 403)
  // The same credential does what its permissions allow.
  const { cards } = await readWrite.cards.list({ entity_id: sa.entityId, account_id: sa.accountId })
  assert.ok(cards.some((c) => c.id === cardA))
})

test('four eyes: the holder may not approve their own business card; nothing is issued', async () => {
  const { id } = await a.client.cards.request(cardRequest(sa, { name: 'Own approval' }))
  const before = (await a.client.cards.list({ entity_id: sa.entityId, account_id: sa.accountId }))
    .cards.length
  const error = await expectRefusal(
    a.client.cards.respondToRequest({
      entity_id: sa.entityId,
      account_id: sa.accountId,
      initiator: sa.holderId,
      request_id: id,
      approved: true,
    }),
    400,
    'initiator',
  )
  assert.match(error.message + JSON.stringify(error.details), /four eyes/)
  const after = await a.client.cards.list({ entity_id: sa.entityId, account_id: sa.accountId })
  assert.equal(after.cards.length, before)
  const { requests } = await a.client.cards.listRequests({ account_id: sa.accountId })
  assert.equal(requests.find((r) => r.id === id)?.status, 'pending')
})

test('a user of another entity of the same partner may not approve, hold or act on a card (400)', async () => {
  const { id: otherEntity } = await a.client.entities.create(businessEntity())
  const { userId: outsider } = await a.client.users.create(
    userRequest(otherEntity, {
      email: 'outsider@other.example',
      verified: true,
      address: holderAddress,
    }) as never,
  )
  const { id } = await a.client.cards.request(cardRequest(sa, { name: 'Outsider' }))
  const respond = { entity_id: sa.entityId, account_id: sa.accountId, request_id: id }
  await expectRefusal(
    a.client.cards.respondToRequest({ ...respond, initiator: outsider, approved: true }),
    400,
    'initiator',
  )
  await expectRefusal(
    a.client.cards.request(cardRequest(sa, { user_id: outsider, name: 'For outsider' })),
    400,
    'user_id',
  )
  await expectRefusal(
    a.client.cards.updateStatus({
      ...holderAction(sa, cardA),
      initiator: outsider,
      status: 'stopped',
    }),
    400,
    'initiator',
  )
  const { requests } = await a.client.cards.listRequests({ account_id: sa.accountId })
  assert.equal(requests.find((r) => r.id === id)?.status, 'pending')
  assert.equal((await listedCard(a, sa, cardA)).status, 'active')
})
