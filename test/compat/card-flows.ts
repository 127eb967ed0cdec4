import assert from 'node:assert/strict'
import { test } from 'node:test'
import { uuidPattern } from '../support/assertions.ts'
import { cardSetup, type CardSetup } from '../cards/helpers.ts'
import type { FlowContext } from './flows.ts'
import type { RecordValues } from './jackson.ts'
import { detailFor, ReferenceSdk } from './reference-sdk.ts'

// The reference SDK's CardService end to end, its nine methods as a partner's Java code calls
// them, over real NATS against a real bank: every request written as the SDK's default
// ObjectMapper writes it (every component, absent ones as null, 0 or false) and every reply
// read into the SDK's record by ReferenceSdk.call (docs/guides/cards.md and
// docs/guides/moving-from-the-incumbent.md). The cards are requested on a business's account
// for one KYC-approved user and approved by another (four eyes).
//
// No card here has an auto-lock time: the SDK's `auto_lock` is JsonTime, an empty record, so
// the partner writes `{}` or null, and reads a reply's auto_lock only while it is null. A set
// one (an RFC 3339 string, which the bank's own clients may set) could not be read into
// CardExtras; a Java partner cannot set one either.

const allFeatures = {
  domestic: true,
  international: true,
  e_commerce: true,
  atm: true,
  pos: true,
  contactless: true,
}

const noLimits = {
  transaction_enabled: false,
  transaction: 0,
  daily_enabled: false,
  daily: 0,
  monthly_enabled: false,
  monthly: 0,
  yearly_enabled: false,
  yearly: 0,
}

const unset = { auto_lock: null }

/** What the flows share: the setup, the two requests, then the two cards they issued. */
interface Requested {
  s: CardSetup
  virtualRequestId: string
  physicalRequestId: string
}

interface Issued extends Requested {
  virtualId: string
  physicalId: string
}

/** Registers the CardService flows; `context` is called inside each test, after `before`. */
export function referenceSdkCardFlows(label: string, context: () => FlowContext): void {
  let requested: Promise<Requested> | undefined
  let issued: Promise<Issued> | undefined
  const requests = () => (requested ??= requestCards(context()))
  const cards = () => (issued ??= requests().then((r) => issueCards(context(), r)))

  test(`reference SDK (${label}) - CardService request: a virtual card (extras {"auto_lock":{}}) and a physical one (features, limits and extras null); list_requests`, async () => {
    await listRequestsFlow(context(), await requests())
  })
  test(`reference SDK (${label}) - CardService respond_to_request: the holder is refused (four eyes), the other user approves; list_cards`, async () => {
    await listCardsFlow(context(), await cards())
  })
  test(`reference SDK (${label}) - CardService edit: name, features, limits and extras {"auto_lock":{}}, then the name alone (the rest null)`, async () => {
    await editFlow(context(), await cards())
  })
  test(`reference SDK (${label}) - CardService get_details: refused without the card_details permission, read with a credential that has it`, async () => {
    await detailsFlow(context(), await cards())
  })
  test(`reference SDK (${label}) - CardService update_status frozen then active; activate_card with the last 4; set_pin`, async () => {
    await statusFlow(context(), await cards())
  })
}

/** A card setup on a new funded account, and the two cards requested as the SDK writes them. */
async function requestCards(c: FlowContext): Promise<Requested> {
  const s = await cardSetup(c.tb, c.sdk.partner)
  const virtual = {
    account_id: s.accountId,
    user_id: s.holderId,
    name: 'Compat virtual',
    type: 0,
    use_type: 0,
    features: { ...allFeatures, atm: false },
    limits: { ...noLimits, daily_enabled: true, daily: 500_000 },
    extras: { auto_lock: {} },
  }
  const text = await c.sdk.write('cardRequest', virtual)
  assert.match(text, /"extras":\{"auto_lock":\{\}\}/)
  const first = await c.sdk.accept('cardRequest', await c.sdk.send('cardRequest', text))
  const physical = { account_id: s.accountId, user_id: s.holderId, name: 'Compat plastic', type: 1 }
  const written = await c.sdk.write('cardRequest', physical)
  assert.match(written, /"use_type":0,"features":null,"limits":null,"extras":null/)
  const second = await c.sdk.accept('cardRequest', await c.sdk.send('cardRequest', written))
  assert.match(first.id, uuidPattern)
  assert.match(second.id, uuidPattern)
  assert.deepEqual(Object.keys(first), ['id'])
  return { s, virtualRequestId: first.id, physicalRequestId: second.id }
}

async function listRequestsFlow(c: FlowContext, r: Requested): Promise<void> {
  const listed = await c.sdk.call('cardListRequests', { account_id: r.s.accountId, user_ids: {} })
  assert.equal(listed.id, r.s.accountId)
  assert.deepEqual(
    listed.requests.map((q: { id: string }) => q.id),
    [r.physicalRequestId, r.virtualRequestId],
    'newest first',
  )
  const [physical, virtual] = listed.requests
  for (const request of listed.requests) {
    assert.equal(request.status, 'pending')
    assert.equal(request.assigned_to, r.s.holderId)
    assert.deepEqual(request.extras, unset)
  }
  assert.equal(virtual.type, 0)
  assert.deepEqual(virtual.features, { ...allFeatures, atm: false })
  assert.deepEqual(virtual.limits, { ...noLimits, daily_enabled: true, daily: 500_000 })
  assert.equal(physical.type, 1)
  assert.deepEqual(physical.features, allFeatures, 'features null: every feature on')
  assert.deepEqual(physical.limits, noLimits, 'limits null: no limit')

  const withNull = { account_id: r.s.accountId, user_ids: null }
  assert.deepEqual((await c.sdk.call('cardListRequests', withNull)).requests, listed.requests)
}

/** Has the approver approve both requests, after the holder is refused; finds the cards. */
async function issueCards(c: FlowContext, r: Requested): Promise<Issued> {
  const respond = (requestId: string, initiator: string) => ({
    entity_id: r.s.entityId,
    account_id: r.s.accountId,
    initiator,
    request_id: requestId,
    approved: true,
  })
  const own = await c.sdk.write('cardRespond', respond(r.virtualRequestId, r.s.holderId))
  const refused = await c.sdk.expectError('cardRespond', own, 400)
  assert.match(detailFor(refused, 'initiator').message ?? '', /four eyes/)
  for (const id of [r.virtualRequestId, r.physicalRequestId]) {
    assert.deepEqual(await c.sdk.call('cardRespond', respond(id, r.s.approverId)), {})
  }
  const { cards } = await listCards(c, r.s)
  const byName = (cardName: string) =>
    cards.find((card: { name: string }) => card.name === cardName)
  return { ...r, virtualId: byName('Compat virtual').id, physicalId: byName('Compat plastic').id }
}

async function listCards(c: FlowContext, s: CardSetup, userIds: RecordValues | null = {}) {
  const values = { entity_id: s.entityId, account_id: s.accountId, user_ids: userIds }
  return c.sdk.call('cardList', values)
}

async function cardOf(c: FlowContext, i: Issued, id: string): Promise<any> {
  const card = (await listCards(c, i.s)).cards.find((listed: { id: string }) => listed.id === id)
  assert.ok(card, `card ${id} is listed`)
  return card
}

async function listCardsFlow(c: FlowContext, i: Issued): Promise<void> {
  const { requests } = await c.sdk.call('cardListRequests', { account_id: i.s.accountId })
  assert.deepEqual(
    requests.map((q: { status: string }) => q.status),
    ['approved', 'approved'],
  )

  const listed = await listCards(c, i.s)
  assert.equal(listed.id, i.s.entityId)
  assert.deepEqual(
    listed.cards.map((card: { id: string }) => card.id),
    [i.physicalId, i.virtualId],
  )
  for (const card of listed.cards) {
    assert.match(card.last_4, /^\d{4}$/)
    assert.equal(card.user_id, i.s.holderId)
    assert.equal(card.org_id, i.s.entityId)
    assert.deepEqual(card.extras, unset)
  }
  assert.deepEqual(
    listed.cards.map((card: { status: string; type: number }) => [card.type, card.status]),
    [
      [1, 'inactive'],
      [0, 'active'],
    ],
    'a virtual card is active when issued, a physical one inactive until activated',
  )
  assert.deepEqual((await listCards(c, i.s, null)).cards, listed.cards)
}

async function editFlow(c: FlowContext, i: Issued): Promise<void> {
  const features = { ...allFeatures, international: false, contactless: false }
  const limits = { ...noLimits, transaction_enabled: true, transaction: 150_000 }
  const edit = {
    entity_id: i.s.entityId,
    card_id: i.virtualId,
    name: 'Compat virtual (edited)',
    features,
    limits,
    extras: { auto_lock: {} },
  }
  assert.deepEqual(await c.sdk.call('cardEdit', edit), {})
  const edited = await cardOf(c, i, i.virtualId)
  assert.equal(edited.name, 'Compat virtual (edited)')
  assert.deepEqual(edited.features, features)
  assert.deepEqual(edited.limits, limits)
  assert.deepEqual(edited.extras, unset)

  const nameOnly = { entity_id: i.s.entityId, card_id: i.virtualId, name: 'Compat virtual' }
  assert.match(await c.sdk.write('cardEdit', nameOnly), /"features":null,"limits":null/)
  assert.deepEqual(await c.sdk.call('cardEdit', nameOnly), {})
  const renamed = await cardOf(c, i, i.virtualId)
  assert.equal(renamed.name, 'Compat virtual')
  assert.deepEqual([renamed.features, renamed.limits], [features, limits], 'null leaves them')
}

async function detailsFlow(c: FlowContext, i: Issued): Promise<void> {
  const values = { account_id: i.s.accountId, initiator: i.s.holderId, id: i.virtualId }
  await c.sdk.expectError('cardDetails', await c.sdk.write('cardDetails', values), 403)

  const { token } = await c.tb.operator.credentials.create({
    partner_id: c.sdk.partner.partnerId,
    permissions: ['card_details'],
  })
  const sdk = new ReferenceSdk(c.tb, { ...c.sdk.partner, token }, c.sdk.codec)
  const details = await sdk.call('cardDetails', values)
  const { last_4 } = await cardOf(c, i, i.virtualId)
  assert.match(details.card_number, /^\d{16}$/)
  assert.ok(details.card_number.endsWith(last_4), 'the number ends with the listed last 4')
  assert.match(details.expiry_date, /^\d{2}\/\d{2}$/)
  assert.match(details.cvv, /^\d{3}$/)
}

async function statusFlow(c: FlowContext, i: Issued): Promise<void> {
  const action = (id: string) => ({ account_id: i.s.accountId, initiator: i.s.holderId, id })
  for (const status of ['frozen', 'active']) {
    const reply = await c.sdk.call('cardUpdateStatus', { ...action(i.virtualId), status })
    assert.deepEqual(reply, {})
    assert.equal((await cardOf(c, i, i.virtualId)).status, status)
  }

  const { last_4 } = await cardOf(c, i, i.physicalId)
  assert.deepEqual(await c.sdk.call('cardActivate', { ...action(i.physicalId), last_4 }), {})
  assert.equal((await cardOf(c, i, i.physicalId)).status, 'active')

  for (const id of [i.physicalId, i.virtualId]) {
    assert.deepEqual(await c.sdk.call('cardSetPin', { ...action(id), pin: '4821' }), {})
  }
}
