import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'
import { expectApiError, type FieldIssue } from '../support/assertions.ts'

// svc.entity.<partner_id>.update_address writes (replaces) an entity's address, and so does
// entity create when it carries one; svc.entity.<partner_id>.get_address reads it, null
// until one is written. Entity info does not carry it: the incumbent's reference client
// reads info into a record without an address, and fails on a key it does not know.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})

const fullAddress = {
  address_line_1: '12 Long Street',
  address_line_2: 'Unit 4',
  city: 'Cape Town',
  state: 'Western Cape',
  postcode: '8001',
  country: 'ZAF',
}

const addressOf = async (entityId: string) => (await p.client.entities.getAddress(
  { entity_id: entityId })).address

test('entities - update_address returns an empty object and get_address shows the address', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  assert.deepEqual(await p.client.entities.getAddress({ entity_id: id }),
    { entity_id: id, address: null })
  const infoBefore = await p.client.entities.info({ entity_id: id })

  const reply = await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  assert.deepEqual(reply, {})

  assert.deepEqual(await p.client.entities.getAddress({ entity_id: id }),
    { entity_id: id, address: fullAddress })
  // Info carries no address, before or after, and the rest of the entity is unchanged.
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal('address' in info, false)
  assert.deepEqual(info, infoBefore)
})

test('entities - update_address on a personal entity shows in get_address, not in info', async () => {
  const { id } = await p.client.entities.create(personalEntity())
  const before = await p.client.entities.info({ entity_id: id })
  assert.equal(await addressOf(id), null)

  await p.client.entities.updateAddress({ entity_id: id, ...fullAddress, country: 'NAM' })
  assert.deepEqual(await addressOf(id), { ...fullAddress, country: 'NAM' })
  assert.deepEqual(await p.client.entities.info({ entity_id: id }), before)
})

test('entities - an address given at create is stored as the entity address', async () => {
  const business = await p.client.entities.create({ ...businessEntity(),
    address: { address_line_1: '5 Dock Road', city: 'Cape Town', postcode: '8001' } })
  assert.deepEqual(await addressOf(business.id), {
    address_line_1: '5 Dock Road', address_line_2: '', city: 'Cape Town', state: '',
      postcode: '8001', country: '',
  })
  const person = await p.client.entities.create({ ...personalEntity(), address: fullAddress })
  assert.deepEqual(await addressOf(person.id), fullAddress)
})

test('entities - get_address of another partner\'s entity or an unknown one is 404', async () => {
  const other = await onboardPartner(tb)
  const { id } = await other.client.entities.create(businessEntity())
  await other.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  for (const entityId of [id, randomUUID()]) {
    const error = await expectApiError(p.client.entities.getAddress({ entity_id: entityId }))
    assert.equal(error.code, 404)
    assert.equal(error.type, 'not_found')
  }
})

test('entities - update_address with only address_line_1 gives empty strings for the rest', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: id, address_line_1: '1 Main Road' })
  assert.deepEqual((await addressOf(id)), {
    address_line_1: '1 Main Road',
    address_line_2: '',
    city: '',
    state: '',
    postcode: '',
    country: '',
  })
})

test('entities - update_address replaces the whole address', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  await p.client.entities.updateAddress({ entity_id: id, address_line_1: '99 New Street',
    city: 'Durban' })
  assert.deepEqual((await addressOf(id)), {
    address_line_1: '99 New Street',
    address_line_2: '',
    city: 'Durban',
    state: '',
    postcode: '',
    country: '',
  })
})

test('entities - update_address touches only the named entity', async () => {
  const first = await p.client.entities.create(businessEntity())
  const second = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: first.id, ...fullAddress })
  assert.equal((await addressOf(second.id)), null)
})

test('entities - update_address trims and accepts values at their limits', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({
    entity_id: id,
    address_line_1: `  ${'A'.repeat(200)}  `,
    address_line_2: 'B'.repeat(200),
    postcode: 'P'.repeat(20),
  })
  const address = (await addressOf(id))
  assert.equal(address?.address_line_1, 'A'.repeat(200))
  assert.equal(address?.address_line_2, 'B'.repeat(200))
  assert.equal(address?.postcode, 'P'.repeat(20))
})

test('entities - update_address on the root entity works', async () => {
  await p.client.entities.updateAddress(
    { entity_id: p.rootEntityId, address_line_1: 'Head Office' })
  assert.equal((await addressOf(p.rootEntityId))?.address_line_1, 'Head Office')
})

// Refusals: 400 naming the field, and the stored address is unchanged.

const refusals: Array<[string, Record<string, unknown>, string]> = [
  ['without address_line_1', { city: 'Cape Town' }, 'address_line_1'],
  ['with an empty address_line_1', { address_line_1: '  ' }, 'address_line_1'],
  ['with address_line_1 as a number', { address_line_1: 12 }, 'address_line_1'],
  ['with address_line_1 too long', { address_line_1: 'A'.repeat(201) }, 'address_line_1'],
  ['with address_line_2 too long', { address_line_1: 'x', address_line_2: 'B'.repeat(201) },
    'address_line_2'],
  ['with city as a list', { address_line_1: 'x', city: ['Cape Town'] }, 'city'],
  ['with state as a number', { address_line_1: 'x', state: 3 }, 'state'],
  ['with postcode too long', { address_line_1: 'x', postcode: 'P'.repeat(21) }, 'postcode'],
  ['with country ZZZ', { address_line_1: 'x', country: 'ZZZ' }, 'country'],
  ['with country za', { address_line_1: 'x', country: 'za' }, 'country'],
  ['with an unknown field', { address_line_1: 'x', province: 'Gauteng' }, 'province'],
]
for (const [label, fields, field] of refusals) {
  test(`entities - update_address ${label} is 400`, async () => {
    const { id } = await p.client.entities.create(businessEntity())
    await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
    const error =
      await expectApiError(p.client.entities.updateAddress({ entity_id: id, ...fields } as never))
    assert.equal(error.code, 400)
    assert.equal(error.type, 'invalid_request')
    assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), [field])
    assert.deepEqual((await addressOf(id)), fullAddress)
  })
}

test('entities - update_address without entity_id or with a bad one is 400', async () => {
  const missing =
    await expectApiError(p.client.entities.updateAddress({ address_line_1: 'x' } as never))
  assert.equal(missing.code, 400)
  assert.deepEqual((missing.details as FieldIssue[]).map((d) => d.field), ['entity_id'])
  const bad = await expectApiError(p.client.entities.updateAddress(
    { entity_id: 'not-a-uuid', address_line_1: 'x' }))
  assert.equal(bad.code, 400)
  assert.deepEqual((bad.details as FieldIssue[]).map((d) => d.field), ['entity_id'])
})

test('entities - update_address of an unknown entity is 404', async () => {
  const error = await expectApiError(p.client.entities.updateAddress(
    { entity_id: randomUUID(), address_line_1: 'x' }))
  assert.equal(error.code, 404)
  assert.equal(error.type, 'not_found')
})

test('entities - update_address with a malformed body is 400 and changes nothing', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  const subject = `svc.entity.${p.partnerId}.update_address`
  const broken = await rawRequest(tb, subject, `{"entity_id":"${id}","address_line_1":`,
    { token: p.token })
  assert.equal(broken.code, 400)
  assert.equal(broken.body.error.type, 'invalid_json')
  const array = await rawRequest(tb, subject,
    JSON.stringify([{ entity_id: id, address_line_1: 'x' }]), { token: p.token })
  assert.equal(array.code, 400)
  assert.deepEqual((await addressOf(id)), fullAddress)
})
