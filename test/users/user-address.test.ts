import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { holderAddress } from '../cards/helpers.ts'
import { numberedPersonalEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal } from '../support/assertions.ts'
import { newAccount } from '../transfers/helpers.ts'
import { asUpdate } from './helpers.ts'

// A holder's address set with user update (issue 44): a physical card needs it, the refusal
// says to set it "with the user's update", and until then only user create took one, so a
// personal entity's automatic user could never have one.

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

/** A KYC-approved user of the partner's root entity, created without an address. */
async function approvedUser(partner: TestPartner, email: string): Promise<string> {
  const request = userRequest(partner.rootEntityId, { email, verified: true })
  return (await partner.client.users.create(request as never)).userId
}

function physical(accountId: string, userId: string) {
  return { account_id: accountId, user_id: userId, name: 'Plastic', type: 1, use_type: 0 } as const
}

test("user update - an address set by update lets a business's user have a physical card", async () => {
  const accountId = await newAccount(p)
  const holderId = await approvedUser(p, 'holder@acme.example')
  const approverId = await approvedUser(p, 'approver@acme.example')
  const refused = await expectRefusal(p.client.cards.request(physical(accountId, holderId)), 400,
    'type')
  assert.match(refused.message, /user's update/)
  assert.deepEqual(await p.client.users.update({ user_id: holderId, address: holderAddress }),
    { userId: holderId, screening_status: 'clear' })
  const { id } = await p.client.cards.request(physical(accountId, holderId))
  await p.client.cards.respondToRequest({ entity_id: p.rootEntityId, account_id: accountId,
    initiator: approverId, request_id: id, approved: true })
  const { cards } = await p.client.cards.list({ entity_id: p.rootEntityId, account_id: accountId })
  const card = cards.find((c) => c.user_id === holderId)
  assert.equal(card?.type, 1)
  assert.equal(card?.status, 'inactive', 'a physical card waits to be activated')
})

test("user update - a personal entity's automatic user gets an address, then a physical card", async () => {
  const created = await p.client.entities.create(numberedPersonalEntity())
  const userId = created.user_id!
  await tb.operator.entities.review({ entity_id: created.id, decision: 'approve' })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: created.id })
  const accountId = accounts[0]!.account_id
  await expectRefusal(p.client.cards.request(physical(accountId, userId)), 400, 'type')
  await p.client.users.update({ user_id: userId, address: { address_line_1: '5 Vilakazi Street',
    city: 'Soweto', country: 'ZAF' } })
  const { id } = await p.client.cards.request(physical(accountId, userId))
  // A personal entity has one user, who approves their own card.
  await p.client.cards.respondToRequest({ entity_id: created.id, account_id: accountId,
    initiator: userId, request_id: id, approved: true })
  const { cards } = await p.client.cards.list({ entity_id: created.id, account_id: accountId })
  assert.deepEqual(cards.map((c) => [c.user_id, c.type, c.status]), [[userId, 1, 'inactive']])
})

test('user update - an update without address (or with null) keeps the stored one', async () => {
  const accountId = await newAccount(p)
  const holderId = await approvedUser(p, 'kept@acme.example')
  await p.client.users.update({ user_id: holderId, address: holderAddress })
  await p.client.users.update({ user_id: holderId, first_name: 'Themba' })
  // As the incumbent's SDK sends it: every component, a missing one as null.
  await p.client.users.update(asUpdate({ user_id: holderId, last_name: 'Zulu', address: null }))
  const { id } = await p.client.cards.request(physical(accountId, holderId))
  assert.match(id, /^[0-9a-f-]{36}$/)
})

test('user update - a bad address → 400 naming the field, and nothing changes', async () => {
  const accountId = await newAccount(p)
  const holderId = await approvedUser(p, 'bad-address@acme.example')
  const { user: before } = await p.client.users.get({ user_id: holderId })
  tb.clock.advance(60_000)
  const cases: Array<[string, unknown]> = [
    ['address', 'Long Street'],
    ['address', ['1 Long Street']],
    ['address.address_line_1', { city: 'Cape Town' }],
    ['address.address_line_1', { address_line_1: '   ' }],
    ['address.country', { address_line_1: '1 Long Street', country: 'ZA' }],
    ['address.postcode', { address_line_1: '1 Long Street', postcode: '8'.repeat(21) }],
    ['address.floor', { address_line_1: '1 Long Street', floor: '3' }],
  ]
  for (const [field, address] of cases) {
    await expectRefusal(p.client.users.update(asUpdate({ user_id: holderId, address })), 400,
      field)
  }
  assert.deepEqual((await p.client.users.get({ user_id: holderId })).user, before)
  await expectRefusal(p.client.cards.request(physical(accountId, holderId)), 400, 'type')
})

test("user update - another partner's user's address → 404, and it is left without one", async () => {
  const theirs = await approvedUser(other, 'theirs@acme.example')
  await expectRefusal(p.client.users.update({ user_id: theirs, address: holderAddress }), 404)
  const accountId = await newAccount(other)
  await expectRefusal(other.client.cards.request(physical(accountId, theirs)), 400, 'type')
})
