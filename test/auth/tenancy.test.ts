import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { contract, subjectFor, type Operation } from '../../src/contract/index.ts'
import { onboardPartner, rawRequest, useTestBank, type RawReply, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity, userRequest } from '../support/fixtures.ts'
import { assertErrorReply } from '../transport/error-reply.ts'

// Tenancy (docs/guides/wire-conventions.md): a resource looked up by id that belongs to
// another partner is answered exactly as if it did not exist. Partner B names partner A's ids in
// bodies sent on B's own subjects; every reply must be the 404 a random UUID gets, byte for byte.

const { entities, users, accounts, transfers } = contract

const tb = useTestBank()
let victim: TestPartner
let intruder: TestPartner
let victimUserId: string
let victimAccountId: string
/** Entities whose own rules would refuse the request with a 400 if ownership were checked late. */
let victimPendingEntityId: string
let victimPersonalEntityId: string
let victimTransactionId: string

before(async () => {
  await tb.ready
  victim = await onboardPartner(tb, { approve: true })
  intruder = await onboardPartner(tb, { approve: true })
  victimUserId = (await victim.client.users.create(userRequest(victim.rootEntityId))).userId
  const { accounts: list } = await victim.client.accounts.getByEntity(
    { entity_id: victim.rootEntityId })
  victimAccountId = list[0]!.account_id
  victimTransactionId =
    (await tb.operator.accounts.deposit({ account_id: victimAccountId, amount: 10_000_000 })).tx_id!
  victimPendingEntityId = (await victim.client.entities.create(businessEntity())).id
  victimPersonalEntityId = (await victim.client.entities.create(personalEntity())).id
})

function asIntruder(op: Operation, body: Record<string, unknown>): Promise<RawReply> {
  return rawRequest(tb, subjectFor(op, intruder.partnerId), JSON.stringify(body),
    { token: intruder.token })
}

async function victimState() {
  return {
    root: await victim.client.entities.info({ entity_id: victim.rootEntityId }),
    user: await victim.client.users.get({ user_id: victimUserId }),
    accounts: await victim.client.accounts.getByEntity({ entity_id: victim.rootEntityId }),
    details: await victim.client.accounts.getDetails({ account_id: victimAccountId }),
    transactions: await victim.client.accounts.listTransactions({ account_id: victimAccountId,
      limit: 1000 }),
  }
}

/** The intruder's request naming the victim's id, and the same with a random id. */
const cases: Array<{ op: Operation; body: (id: string) => Record<string,
    unknown>; victimId: () => string; label?: string }> = [
  { op: entities.info, body: (id) => ({ entity_id: id }), victimId: () => victim.rootEntityId },
  {
    op: entities.updateAddress,
    body: (id) => ({ entity_id: id, address_line_1: '13 Intruder Street', country: 'ZAF' }),
    victimId: () => victim.rootEntityId,
  },
  { op: users.get, body: (id) => ({ user_id: id }), victimId: () => victimUserId },
  { op: users.update, body: (id) => ({ user_id: id, first_name: 'Mallory' }),
    victimId: () => victimUserId },
  { op: users.create, body: (id) => userRequest(id), victimId: () => victim.rootEntityId },
  { op: accounts.create, body: (id) => ({ entity_id: id }), victimId: () => victim.rootEntityId },
  { op: accounts.create, body: (id) => ({ entity_id: id }), victimId: () => victimPendingEntityId,
    label: 'unapproved entity' },
  { op: users.create, body: (id) => userRequest(id), victimId: () => victimPersonalEntityId,
    label: 'personal entity' },
  // Payments and transactions: the same rule for accounts and transactions.
  {
    op: transfers.transfer,
    body: (id) => ({
      account_id: id,
      clientTxId: randomUUID(),
      amount: 100,
      ref: 'intruder',
      own_ref: 'intruder',
      account_number: '62000000001',
      branch_code: '250655',
      name: 'Mallory',
    }),
    victimId: () => victimAccountId,
  },
  { op: transfers.list, body: (id) => ({ account_id: id }), victimId: () => victimAccountId },
  { op: transfers.getTransaction, body: (id) => ({ tx_id: id }),
    victimId: () => victimTransactionId },
  { op: accounts.getByEntity, body: (id) => ({ entity_id: id }),
    victimId: () => victim.rootEntityId },
  { op: accounts.getDetails, body: (id) => ({ account_id: id }), victimId: () => victimAccountId },
]

for (const { op, body, victimId, label } of cases) {
  test(`tenancy - ${op.name} naming another partner's ${label ?? 'resource'} is the 404 of an unknown id`, async () => {
    const state = await victimState()
    const foreign = await asIntruder(op, body(victimId()))
    const unknown = await asIntruder(op, body(randomUUID()))
    assertErrorReply(foreign, 404, 'not_found', `${op.name} foreign id`)
    assert.deepEqual(foreign, unknown,
      `${op.name}: a foreign id is answered differently from an unknown one`)
    assert.ok(!JSON.stringify(foreign).includes(victimId()),
      `${op.name}: the reply names the victim's id`)
    assert.deepEqual(await victimState(), state,
      `${op.name}: the intruder changed the victim's data`)
    // The same request on the victim's own subject passes the lookup (200, or the 400 of
    // the entity's own rules), so the 404 above is about ownership alone.
    const own = await rawRequest(tb, subjectFor(op, victim.partnerId),
      JSON.stringify(body(victimId())), { token: victim.token })
    assert.equal(own.code, label ? 400 : 200,
      `${op.name} by the owner: ${JSON.stringify(own.body)}`)
  })
}

test("tenancy - an intruder's writes leave the victim's data as it was", async () => {
  const state = await victimState()
  for (const { op, body, victimId } of cases) {
    const reply = await asIntruder(op, body(victimId()))
    assert.equal(reply.code, 404, op.name)
  }
  assert.deepEqual(await victimState(), state)
})

test("tenancy - listing users of another partner's entity is the same as of an unknown entity", async () => {
  const foreign = await asIntruder(users.list, { entity_id: victim.rootEntityId })
  const unknown = await asIntruder(users.list, { entity_id: randomUUID() })
  assert.deepEqual(foreign, unknown)
  assert.equal(foreign.code, 200)
  assert.deepEqual(foreign.body, { users: [] })
  const own = await victim.client.users.list({ entity_id: victim.rootEntityId })
  assert.ok(own.users.some((u) => u.id === victimUserId),
    'the owner sees its user, so the empty list is about ownership')
})

test("tenancy - entity and user lists hold only the caller's own records", async () => {
  const mine = await intruder.client.entities.list()
  assert.deepEqual(
    mine.entities.map((e) => e.id),
    [intruder.rootEntityId],
  )
  const users = await intruder.client.users.list()
  assert.ok(users.users.every((u) => u.id !== victimUserId))
})
