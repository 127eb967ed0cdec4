import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'
import { expectApiError, type FieldIssue } from '../support/assertions.ts'

// svc.entity.<partner_id>.update_address writes (replaces) an entity's address; entity
// info returns it as `address`, null until one is written (RULINGS, Entities and users).

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

test('entities - update_address returns an empty object and info shows the address', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  assert.equal((await p.client.entities.info({ entity_id: id })).address, null)

  const reply = await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  assert.deepEqual(reply, {})

  const info = await p.client.entities.info({ entity_id: id })
  assert.deepEqual(info.address, fullAddress)
  // The rest of the entity is unchanged.
  assert.equal(info.entity_type, 'business')
  assert.equal(info.approved, false)
})

test('entities - update_address on a personal entity shows in its info', async () => {
  const { id } = await p.client.entities.create(personalEntity())
  const before = await p.client.entities.info({ entity_id: id })
  assert.equal(before.address, null)

  await p.client.entities.updateAddress({ entity_id: id, ...fullAddress, country: 'NAM' })
  const after = await p.client.entities.info({ entity_id: id })
  assert.deepEqual(after.address, { ...fullAddress, country: 'NAM' })
  assert.deepEqual({ ...after, address: null }, before)
})

test('entities - update_address with only address_line_1 gives empty strings for the rest', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: id, address_line_1: '1 Main Road' })
  assert.deepEqual((await p.client.entities.info({ entity_id: id })).address, {
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
  await p.client.entities.updateAddress({ entity_id: id, address_line_1: '99 New Street', city: 'Durban' })
  assert.deepEqual((await p.client.entities.info({ entity_id: id })).address, {
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
  assert.equal((await p.client.entities.info({ entity_id: second.id })).address, null)
})

test('entities - update_address trims and accepts values at their limits', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({
    entity_id: id,
    address_line_1: `  ${'A'.repeat(200)}  `,
    address_line_2: 'B'.repeat(200),
    postcode: 'P'.repeat(20),
  })
  const address = (await p.client.entities.info({ entity_id: id })).address
  assert.equal(address?.address_line_1, 'A'.repeat(200))
  assert.equal(address?.address_line_2, 'B'.repeat(200))
  assert.equal(address?.postcode, 'P'.repeat(20))
})

test('entities - update_address on the root entity works', async () => {
  await p.client.entities.updateAddress({ entity_id: p.rootEntityId, address_line_1: 'Head Office' })
  assert.equal((await p.client.entities.info({ entity_id: p.rootEntityId })).address?.address_line_1, 'Head Office')
})

// Refusals: 400 naming the field, and the stored address is unchanged.

const refusals: Array<[string, Record<string, unknown>, string]> = [
  ['without address_line_1', { city: 'Cape Town' }, 'address_line_1'],
  ['with an empty address_line_1', { address_line_1: '  ' }, 'address_line_1'],
  ['with address_line_1 as a number', { address_line_1: 12 }, 'address_line_1'],
  ['with address_line_1 too long', { address_line_1: 'A'.repeat(201) }, 'address_line_1'],
  ['with address_line_2 too long', { address_line_1: 'x', address_line_2: 'B'.repeat(201) }, 'address_line_2'],
  ['with city as null', { address_line_1: 'x', city: null }, 'city'],
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
    const error = await expectApiError(p.client.entities.updateAddress({ entity_id: id, ...fields } as never))
    assert.equal(error.code, 400)
    assert.equal(error.type, 'invalid_request')
    assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), [field])
    assert.deepEqual((await p.client.entities.info({ entity_id: id })).address, fullAddress)
  })
}

test('entities - update_address without entity_id or with a bad one is 400', async () => {
  const missing = await expectApiError(p.client.entities.updateAddress({ address_line_1: 'x' } as never))
  assert.equal(missing.code, 400)
  assert.deepEqual((missing.details as FieldIssue[]).map((d) => d.field), ['entity_id'])
  const bad = await expectApiError(p.client.entities.updateAddress({ entity_id: 'not-a-uuid', address_line_1: 'x' }))
  assert.equal(bad.code, 400)
  assert.deepEqual((bad.details as FieldIssue[]).map((d) => d.field), ['entity_id'])
})

test('entities - update_address of an unknown entity is 404', async () => {
  const error = await expectApiError(p.client.entities.updateAddress({ entity_id: randomUUID(), address_line_1: 'x' }))
  assert.equal(error.code, 404)
  assert.equal(error.type, 'not_found')
})

test('entities - update_address with a malformed body is 400 and changes nothing', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await p.client.entities.updateAddress({ entity_id: id, ...fullAddress })
  const subject = `svc.entity.${p.partnerId}.update_address`
  const broken = await rawRequest(tb, subject, `{"entity_id":"${id}","address_line_1":`, { token: p.token })
  assert.equal(broken.code, 400)
  assert.equal(broken.body.error.type, 'invalid_json')
  const array = await rawRequest(tb, subject, JSON.stringify([{ entity_id: id, address_line_1: 'x' }]), { token: p.token })
  assert.equal(array.code, 400)
  assert.deepEqual((await p.client.entities.info({ entity_id: id })).address, fullAddress)
})
