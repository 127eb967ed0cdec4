import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { clientFor, onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'
import { errorBody, expectApiError } from '../support/assertions.ts'

// Tenancy (docs/guides/wire-conventions.md): another partner's entity is answered exactly as
// a missing one (404), and no operation reveals another partner's data. Permissions: read for
// info/list, write for create/update_address.

const tb = useTestBank()
let p: TestPartner
let other: TestPartner
let theirBusiness: string
let theirPersonal: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
  other = await onboardPartner(tb)
  theirBusiness =
    (await other.client.entities.create(businessEntity({ name: 'Secret Other Ltd' }))).id
  theirPersonal = (await other.client.entities.create(personalEntity({ first_name: 'Hidden' }))).id
  await other.client.entities.updateAddress(
    { entity_id: theirBusiness, address_line_1: 'Their Street' })
})

test("entities - info of another partner's entity is 404 exactly like a missing one", async () => {
  const missing =
    errorBody(await expectApiError(p.client.entities.info({ entity_id: randomUUID() })))
  assert.equal(missing.code, 404)
  assert.equal(missing.type, 'not_found')
  for (const entityId of [theirBusiness, theirPersonal, other.rootEntityId]) {
    const error = await expectApiError(p.client.entities.info({ entity_id: entityId }))
    assert.deepEqual(errorBody(error), missing)
    assert.ok(!error.message.includes(entityId))
    assert.ok(!error.message.includes('Secret'))
  }
})

test("entities - info of another partner's entity gives the same raw reply as a missing one", async () => {
  const subject = `svc.entity.${p.partnerId}.info`
  const missing = await rawRequest(tb, subject, JSON.stringify({ entity_id: randomUUID() }),
    { token: p.token })
  const theirs = await rawRequest(tb, subject, JSON.stringify({ entity_id: theirBusiness }),
    { token: p.token })
  assert.equal(theirs.code, 404)
  assert.deepEqual(theirs.body, missing.body)
  assert.deepEqual(theirs.headers, missing.headers)
})

test("entities - update_address of another partner's entity is 404 and changes nothing", async () => {
  const missing = errorBody(await expectApiError(p.client.entities.updateAddress(
    { entity_id: randomUUID(), address_line_1: 'Mine' })))
  assert.equal(missing.code, 404)
  const error = await expectApiError(p.client.entities.updateAddress(
    { entity_id: theirBusiness, address_line_1: 'Hijacked' }))
  assert.deepEqual(errorBody(error), missing)
  const personal = await expectApiError(p.client.entities.updateAddress(
    { entity_id: theirPersonal, address_line_1: 'Hijacked' }))
  assert.deepEqual(errorBody(personal), missing)

  assert.equal((await other.client.entities.getAddress(
    { entity_id: theirBusiness })).address?.address_line_1, 'Their Street')
  assert.equal((await other.client.entities.getAddress({ entity_id: theirPersonal })).address, null)
})

test("entities - list shows only the caller's own entities", async () => {
  const mine = await p.client.entities.create(businessEntity())
  const { entities } = await p.client.entities.list()
  const ids = entities.map((e) => e.id)
  assert.ok(ids.includes(mine.id))
  assert.ok(ids.includes(p.rootEntityId))
  for (const id of [theirBusiness, theirPersonal, other.rootEntityId]) assert.ok(!ids.includes(id))
  assert.ok(!JSON.stringify(entities).includes('Secret Other'))

  const theirs = (await other.client.entities.list()).entities.map((e) => e.id)
  assert.ok(!theirs.includes(mine.id))
})

test("entities - users of another partner's personal entity are not listed", async () => {
  const { users } = await p.client.users.list({ entity_id: theirPersonal })
  assert.deepEqual(users, [])
  assert.equal((await other.client.users.list({ entity_id: theirPersonal })).users.length, 1)
})

test("entities - a subject naming another partner is 403 and stores nothing", async () => {
  const intruder = clientFor(tb, other.partnerId, p.token)
  const theirsBefore = await other.client.entities.list()
  const mineBefore = await p.client.entities.list()

  const create = await expectApiError(intruder.entities.create(businessEntity()))
  assert.equal(create.code, 403)
  assert.equal(create.type, 'forbidden')
  const info = await expectApiError(intruder.entities.info({ entity_id: theirBusiness }))
  assert.equal(info.code, 403)
  const list = await expectApiError(intruder.entities.list())
  assert.equal(list.code, 403)
  const address = await expectApiError(intruder.entities.updateAddress(
    { entity_id: theirBusiness, address_line_1: 'x' }))
  assert.equal(address.code, 403)

  assert.deepEqual(await other.client.entities.list(), theirsBefore)
  assert.deepEqual(await p.client.entities.list(), mineBefore)
  assert.equal((await other.client.entities.getAddress(
    { entity_id: theirBusiness })).address?.address_line_1, 'Their Street')
})

test('entities - a read-only credential may read but not create or update_address', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const reader = clientFor(tb, p.partnerId, issued.token)
  const before = await p.client.entities.list()

  assert.deepEqual(await reader.entities.list(), before)
  assert.equal((await reader.entities.info({ entity_id: p.rootEntityId })).id, p.rootEntityId)

  const create = await expectApiError(reader.entities.create(businessEntity()))
  assert.equal(create.code, 403)
  const address = await expectApiError(reader.entities.updateAddress(
    { entity_id: p.rootEntityId, address_line_1: 'Read Only Road' }))
  assert.equal(address.code, 403)

  assert.deepEqual(await p.client.entities.list(), before)
  assert.notEqual((await p.client.entities.getAddress(
    { entity_id: p.rootEntityId })).address?.address_line_1, 'Read Only Road')
})

test('entities - a write-only credential may create but not read', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['write'] })
  const writer = clientFor(tb, p.partnerId, issued.token)

  const { id } = await writer.entities.create(businessEntity())
  assert.ok((await p.client.entities.list()).entities.some((e) => e.id === id))

  assert.equal((await expectApiError(writer.entities.info({ entity_id: id }))).code, 403)
  assert.equal((await expectApiError(writer.entities.list())).code, 403)
})

test('entities - a request without a credential is 401 and stores nothing', async () => {
  const before = await p.client.entities.list()
  const reply = await rawRequest(tb, `svc.entity.${p.partnerId}.create`,
    JSON.stringify(businessEntity()))
  assert.equal(reply.code, 401)
  assert.equal(reply.body.error.type, 'unauthorized')
  assert.deepEqual(await p.client.entities.list(), before)
})

test('entities - info without entity_id or with a bad one is 400', async () => {
  for (const request of [{}, { entity_id: 'nope' }, { entity_id: 42 },
      { entity_id: `${p.rootEntityId}x` }]) {
    const error = await expectApiError(p.client.entities.info(request as never))
    assert.equal(error.code, 400)
    assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field), ['entity_id'])
  }
  const extra = await expectApiError(
    p.client.entities.info({ entity_id: p.rootEntityId, verbose: true } as never))
  assert.equal(extra.code, 400)
  assert.deepEqual((extra.details as Array<{ field: string }>).map((d) => d.field), ['verbose'])
})

test('entities - list with fields in the body is 400', async () => {
  const error =
    await expectApiError(p.client.entities.list({ partner_id: other.partnerId } as never))
  assert.equal(error.code, 400)
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field), ['partner_id'])
})
