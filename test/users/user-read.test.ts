import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { businessEntity, personalEntity, userRequest } from '../support/fixtures.ts'
import { clientFor, onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { asCreate } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

const minute = 60_000

test('user get - returns { user } with the record and no date_registered', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(userRequest(entityId))
  const reply = await p.client.users.get({ user_id: userId })
  assert.deepEqual(Object.keys(reply), ['user', 'screening_status'], 'the SDK adds the header')
  assert.equal(reply.user.id, userId)
  assert.equal(reply.user.entity_id, entityId)
  assert.equal('date_registered' in reply.user, false)
  assert.equal('id_issue_expiry_date' in reply.user, false)
  assert.equal('id_issue_expiry' in reply.user, true)
})

test('user get - user_id missing, not a UUID or with extra fields → 400; unknown → 404', async () => {
  await expectRefusal(p.client.users.get({} as { user_id: string }), 400, 'user_id')
  await expectRefusal(p.client.users.get({ user_id: 'abc' }), 400, 'user_id')
  await expectRefusal(p.client.users.get({ user_id: randomUUID(), verbose: true } as {
    user_id: string }), 400, 'verbose')
  await expectRefusal(p.client.users.get({ user_id: randomUUID() }), 404)
})

test('user list - filtered by entity: only its users, oldest first, each with date_registered', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { id: otherEntityId } = await p.client.entities.create(businessEntity())
  const first = await p.client.users.create(userRequest(entityId, { first_name: 'First' }))
  const registeredFirst = iso(tb.clock.now())
  tb.clock.advance(minute)
  await p.client.users.create(userRequest(otherEntityId))
  const second = await p.client.users.create(userRequest(entityId, { first_name: 'Second' }))
  const registeredSecond = iso(tb.clock.now())

  const { users } = await p.client.users.list({ entity_id: entityId })
  assert.deepEqual(
    users.map((u) => [u.id, u.first_name, u.date_registered, u.created_at]),
    [
      [first.userId, 'First', registeredFirst, registeredFirst],
      [second.userId, 'Second', registeredSecond, registeredSecond],
    ],
  )
  // A list item is the get record plus date_registered.
  for (const item of users) {
    const { user } = await p.client.users.get({ user_id: item.id })
    assert.deepEqual(item, { ...user, date_registered: user.created_at })
  }
})

test("user list - without a filter: every user of the partner's entities, including a personal entity's own user", async () => {
  const partner = await onboardPartner(tb)
  const { id: business } = await partner.client.entities.create(businessEntity())
  const a = await partner.client.users.create(userRequest(business))
  const b = await partner.client.users.create(userRequest(partner.rootEntityId))
  const { id: personal } = await partner.client.entities.create(
    personalEntity({ first_name: 'Zanele', last_name: 'Mbeki' }))

  const { users } = await partner.client.users.list()
  assert.equal(users.length, 3)
  assert.deepEqual(users.slice(0, 2).map((u) => u.id), [a.userId, b.userId])
  const holder = users[2]!
  assert.equal(holder.entity_id, personal)
  assert.equal(holder.first_name, 'Zanele')
  assert.equal(holder.last_name, 'Mbeki')
  assert.equal(holder.kyc_status, 'pending', 'submitted with the entity')
  assert.equal(holder.kyc_submitted_at, holder.created_at)
  assert.equal('kyc_reviewed_at' in holder, false)
  assert.deepEqual(await partner.client.users.list({}), { users })
})

test('user list - an entity with no users, or an unknown entity → empty list; a bad entity_id → 400', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  assert.deepEqual(await p.client.users.list({ entity_id: entityId }), { users: [] })
  assert.deepEqual(await p.client.users.list({ entity_id: randomUUID() }), { users: [] })
  await expectRefusal(p.client.users.list({ entity_id: 'not-a-uuid' }), 400, 'entity_id')
  await expectRefusal(p.client.users.list({ partner_id: p.partnerId } as { entity_id?: string }),
    400, 'partner_id')
})

test('user create - under a personal entity → 400, which keeps exactly its one user', async () => {
  const { id: personal } = await p.client.entities.create(personalEntity())
  await expectRefusal(p.client.users.create(userRequest(personal)), 400, 'entity_id')
  const { users } = await p.client.users.list({ entity_id: personal })
  assert.equal(users.length, 1)
})

test('user create - under an unknown entity → 404, nothing stored', async () => {
  const before = await p.client.users.list()
  const ghost = randomUUID()
  await expectRefusal(p.client.users.create(userRequest(ghost)), 404)
  assert.deepEqual(await p.client.users.list(), before)
})

test("user create - under another partner's entity → 404, nothing stored for either partner", async () => {
  const { id: theirEntity } = await other.client.entities.create(businessEntity())
  const mineBefore = await p.client.users.list()
  await expectRefusal(p.client.users.create(userRequest(theirEntity)), 404)
  await expectRefusal(p.client.users.create(userRequest(other.rootEntityId)), 404)
  assert.deepEqual(await other.client.users.list({ entity_id: theirEntity }), { users: [] })
  assert.deepEqual(await p.client.users.list(), mineBefore)
})

test("user get/update/list - another partner's user is invisible: 404 on get and update, absent from list", async () => {
  const { id: theirEntity } = await other.client.entities.create(businessEntity())
  const { userId } = await other.client.users.create(
    userRequest(theirEntity, { first_name: 'Private' }))
  const theirs = (await other.client.users.get({ user_id: userId })).user

  const missing = await expectRefusal(p.client.users.get({ user_id: randomUUID() }), 404)
  const foreign = await expectRefusal(p.client.users.get({ user_id: userId }), 404)
  assert.equal(foreign.message, missing.message, 'answered exactly as a missing user')
  await expectRefusal(p.client.users.update({ user_id: userId, first_name: 'Hijacked' }), 404)
  assert.ok(!(await p.client.users.list()).users.some((u) => u.id === userId))
  assert.deepEqual(await p.client.users.list({ entity_id: theirEntity }), { users: [] })
  assert.deepEqual((await other.client.users.get({ user_id: userId })).user, theirs)
})

test("user operations - a subject naming another partner → 403", async () => {
  const intruder = clientFor(tb, other.partnerId, p.token)
  const { id: theirEntity } = await other.client.entities.create(businessEntity())
  await expectRefusal(intruder.users.list(), 403)
  await expectRefusal(intruder.users.get({ user_id: randomUUID() }), 403)
  await expectRefusal(intruder.users.create(userRequest(theirEntity)), 403)
  await expectRefusal(intruder.users.update({ user_id: randomUUID(), first_name: 'Nope' }), 403)
  assert.deepEqual(await other.client.users.list({ entity_id: theirEntity }), { users: [] })
})

test('user operations - get and list need read; create and update need write', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(userRequest(entityId))
  const readOnly = clientFor(tb, p.partnerId, (await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })).token)
  const writeOnly = clientFor(tb, p.partnerId, (await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['write'] })).token)
  const paymentsOnly = clientFor(tb, p.partnerId, (await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['payments'] })).token)

  assert.equal((await readOnly.users.get({ user_id: userId })).user.id, userId)
  assert.equal((await readOnly.users.list({ entity_id: entityId })).users.length, 1)
  await expectRefusal(readOnly.users.create(userRequest(entityId)), 403)
  await expectRefusal(readOnly.users.update({ user_id: userId, first_name: 'Nope' }), 403)

  const { userId: second } = await writeOnly.users.create(userRequest(entityId))
  assert.deepEqual(await writeOnly.users.update({ user_id: second, first_name: 'Writer' }),
    { userId: second, screening_status: 'clear' })
  await expectRefusal(writeOnly.users.get({ user_id: userId }), 403)
  await expectRefusal(writeOnly.users.list(), 403)

  await expectRefusal(paymentsOnly.users.get({ user_id: userId }), 403)
  await expectRefusal(paymentsOnly.users.list(), 403)
  await expectRefusal(paymentsOnly.users.create(userRequest(entityId)), 403)
  await expectRefusal(paymentsOnly.users.update({ user_id: userId, first_name: 'Nope' }), 403)
  const { users } = await p.client.users.list({ entity_id: entityId })
  assert.deepEqual(users.map((u) => [u.id, u.first_name]), [
    [userId, 'Sipho'],
    [second, 'Writer'],
  ])
})

test('user operations - a missing, unknown or revoked credential → 401 before the body is looked at', async () => {
  const unknown = clientFor(tb, p.partnerId, `pbk_${'A'.repeat(43)}`)
  const malformed = clientFor(tb, p.partnerId, 'let-me-in')
  const missing = clientFor(tb, p.partnerId, '')
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read', 'write'] })
  const revoked = clientFor(tb, p.partnerId, issued.token)
  await tb.operator.credentials.revoke({ credential_id: issued.id })
  for (const client of [missing, unknown, malformed, revoked]) {
    await expectRefusal(client.users.list(), 401)
    await expectRefusal(client.users.get({ user_id: randomUUID() }), 401)
    await expectRefusal(client.users.create(asCreate({ nonsense: true })), 401)
    await expectRefusal(client.users.update({ user_id: randomUUID() }), 401)
  }
})
