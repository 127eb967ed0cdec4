import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { businessEntity, userRequest, without } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, uuidPattern } from '../support/assertions.ts'
import { asCreate } from './helpers.ts'

// permit_number is optional on user create (docs/guides/decisions.md): only a
// non-citizen has a work permit, and the reference SDK's own sample sends `null` for a
// citizen. Absent or null stores an empty string; given, it is 2 to 50 characters.

const tb = useTestBank()
let p: TestPartner
let entityId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  entityId = (await p.client.entities.create(businessEntity())).id
})

/** user create exactly as the bytes say, with the partner's token. */
function createRaw(body: Record<string, unknown>) {
  return rawRequest(tb, `svc.user.${p.partnerId}.create`, JSON.stringify(body), { token: p.token })
}

async function storedPermit(userId: string): Promise<string> {
  const { user } = await p.client.users.get({ user_id: userId })
  const listed = (await p.client.users.list({ entity_id: entityId })).users.find(
    (u) => u.id === userId)
  assert.equal(listed?.permit_number, user.permit_number, 'list and get agree')
  return user.permit_number
}

test('user create - permit_number null (as the reference SDK sends for a citizen) is created with an empty permit', async () => {
  const reply = await createRaw(
    userRequest(entityId, { permit_number: null, email: 'null.permit@acme.example' }))
  assert.equal(reply.code, 200, JSON.stringify(reply.body))
  // The reply is as before: only `userId` (the reference SDK's record fails on any other key).
  assert.deepEqual(Object.keys(reply.body), ['userId'])
  assert.match(reply.body.userId, uuidPattern)
  assert.equal(await storedPermit(reply.body.userId), '')
})

test('user create - permit_number absent is created with an empty permit', async () => {
  const reply = await createRaw(without(userRequest(entityId, { email: 'no.permit@acme.example' }),
    'permit_number'))
  assert.equal(reply.code, 200, JSON.stringify(reply.body))
  assert.deepEqual(Object.keys(reply.body), ['userId'])
  assert.equal(await storedPermit(reply.body.userId), '')
  // Through the SDK too, whose type now lets it out.
  const { userId } =
    await p.client.users.create(asCreate(without(userRequest(entityId), 'permit_number')))
  assert.equal(await storedPermit(userId), '')
})

test('user create - a given permit_number has 2 to 50 characters: 1, blank or 51 → 400 naming it, nothing stored', async () => {
  const before = (await p.client.users.list({ entity_id: entityId })).users.length
  for (const [permit, message] of [
    ['A', 'must be at least 2 characters'],
    [' B ', 'must be at least 2 characters'],
    ['', 'must be at least 2 characters'],
    ['W'.repeat(51), 'must be at most 50 characters'],
  ] as const) {
    const reply = await createRaw(userRequest(entityId, { permit_number: permit }))
    assert.equal(reply.code, 400, permit)
    assert.deepEqual(reply.body.error.details, [{ field: 'permit_number', message }], permit)
    await expectRefusal(p.client.users.create(userRequest(entityId, { permit_number: permit })),
      400, 'permit_number')
  }
  assert.equal((await p.client.users.list({ entity_id: entityId })).users.length, before,
    'nothing stored after the refusals')

  for (const permit of ['WP', 'W'.repeat(50), 'WP-2024-001']) {
    const { userId } = await p.client.users.create(userRequest(entityId, { permit_number: permit }))
    assert.equal(await storedPermit(userId), permit)
  }
})

test('user create - a permit_number of a wrong type is still 400', async () => {
  for (const permit of [7, true, ['WP'], { number: 'WP' }]) {
    const reply = await createRaw(userRequest(entityId, { permit_number: permit }))
    assert.equal(reply.code, 400, JSON.stringify(permit))
    const details = reply.body.error.details as Array<{ field: string; message: string }>
    assert.ok(details.every((d) => d.field === 'permit_number'), JSON.stringify(details))
    assert.ok(details.some((d) => d.message === 'must be a string'), JSON.stringify(details))
  }
})
