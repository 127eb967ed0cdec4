import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { BankApiError } from '../../src/client/index.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity, registrationNumber, saIdNumber } from '../support/fixtures.ts'
import { expectApiError } from '../support/assertions.ts'

// A duplicate id_number (personal) or registration_number
// (business) within one partner is 409; another partner may hold the same numbers.

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
  other = await onboardPartner(tb)
})

async function snapshot(partner: TestPartner) {
  return { entities: await partner.client.entities.list(),
    users: await partner.client.users.list() }
}

test('entities - duplicate registration_number within a partner is 409', async () => {
  const reg = registrationNumber()
  await p.client.entities.create(businessEntity({ registration_number: reg }))
  const before = await snapshot(p)

  const error = await expectApiError(
    p.client.entities.create(businessEntity({ registration_number: reg, name: 'Other Name Ltd' })))
  assert.equal(error.code, 409)
  assert.equal(error.type, 'conflict')
  assert.deepEqual(error.details, [{ field: 'registration_number', message: 'already exists' }])
  assert.deepEqual(await snapshot(p), before)
})

test("entities - the root entity's registration_number is taken within its partner", async () => {
  const { entities } = await p.client.entities.list()
  const root = entities.find((e) => e.id === p.rootEntityId)
  assert.ok(root)
  const before = await snapshot(p)
  const error = await expectApiError(
    p.client.entities.create(businessEntity({ registration_number: root.registration_number })))
  assert.equal(error.code, 409)
  assert.deepEqual(await snapshot(p), before)
})

test('entities - duplicate national id_number within a partner is 409 and makes no user', async () => {
  const idNumber = saIdNumber('880101')
  await p.client.entities.create(personalEntity({ id_number: idNumber }))
  const before = await snapshot(p)

  const error = await expectApiError(p.client.entities.create(
    personalEntity({ id_number: idNumber, first_name: 'Someone', email: 'x@example.com' })))
  assert.equal(error.code, 409)
  assert.equal(error.type, 'conflict')
  assert.deepEqual(error.details, [{ field: 'id_number', message: 'already exists' }])
  assert.deepEqual(await snapshot(p), before)
})

test('entities - duplicate passport id_number within a partner is 409', async () => {
  const passport = `DUP${Date.now() % 100_000_000}`
  await p.client.entities.create(personalEntity({ id_type: 'Passport', id_number: passport }))
  const before = await snapshot(p)
  const error = await expectApiError(
    p.client.entities.create(personalEntity({ id_type: 'Passport', id_number: passport })))
  assert.equal(error.code, 409)
  assert.deepEqual(error.details, [{ field: 'id_number', message: 'already exists' }])
  assert.deepEqual(await snapshot(p), before)
})

test('entities - same registration_number and id_number under another partner are allowed', async () => {
  const reg = registrationNumber()
  const idNumber = saIdNumber('910707')
  const mine = await p.client.entities.create(businessEntity({ registration_number: reg }))
  const minePersonal = await p.client.entities.create(personalEntity({ id_number: idNumber }))

  const theirs = await other.client.entities.create(businessEntity({ registration_number: reg }))
  const theirsPersonal = await other.client.entities.create(personalEntity({ id_number: idNumber }))
  assert.notEqual(theirs.id, mine.id)
  assert.notEqual(theirsPersonal.id, minePersonal.id)

  const theirList = (await other.client.entities.list()).entities
  assert.equal(theirList.find((e) => e.id === theirs.id)?.registration_number, reg)
  assert.equal(theirList.find((e) => e.id === theirsPersonal.id)?.id_number, idNumber)
  // The other partner's entities are its own; the first partner's are untouched.
  assert.equal((await p.client.entities.info({ entity_id: mine.id })).id, mine.id)
  assert.equal((await other.client.users.list({ entity_id: theirsPersonal.id })).users.length, 1)
})

test("entities - another partner's root registration_number is allowed", async () => {
  const { entities } = await other.client.entities.list()
  const otherRoot = entities.find((e) => e.id === other.rootEntityId)
  assert.ok(otherRoot)
  const { id } = await p.client.entities.create(
    businessEntity({ registration_number: otherRoot.registration_number }))
  assert.equal((await p.client.entities.list()).entities.find((e) => e.id === id)
    ?.registration_number, otherRoot.registration_number)
})

test('entities - a business and a personal entity do not collide', async () => {
  // A passport number may be 12 digits, the shape of a registration number; they are
  // different identifiers and must not be treated as duplicates of each other.
  const number = registrationNumber()
  await p.client.entities.create(businessEntity({ registration_number: number }))
  const { id } = await p.client.entities.create(
    personalEntity({ id_type: 'Passport', id_number: number }))
  assert.equal((await p.client.entities.info({ entity_id: id })).id, id)
})

test('entities - concurrent creates with one registration_number store exactly one', async () => {
  const reg = registrationNumber()
  const before = (await p.client.entities.list()).entities.length
  const results = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) => p.client.entities.create(
      businessEntity({ registration_number: reg, name: `Race ${i}` }))),
  )
  const fulfilled = results.filter((r) => r.status === 'fulfilled')
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  assert.equal(fulfilled.length, 1)
  assert.equal(rejected.length, 5)
  for (const r of rejected) {
    assert.ok(r.reason instanceof BankApiError)
    assert.equal(r.reason.code, 409)
  }
  const after = (await p.client.entities.list()).entities
  assert.equal(after.length, before + 1)
  assert.equal(after.filter((e) => e.registration_number === reg).length, 1)
})

test('entities - concurrent personal creates with one id_number store one entity and one user', async () => {
  const idNumber = saIdNumber('950505')
  const usersBefore = (await p.client.users.list()).users.length
  const results = await Promise.allSettled(
    Array.from({ length: 6 }, () => p.client.entities.create(
      personalEntity({ id_number: idNumber }))),
  )
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
  for (const r of results) if (r.status === 'rejected') assert.equal(
    (r.reason as BankApiError).code, 409)
  const matching = (await p.client.entities.list()).entities.filter((e) => e.id_number === idNumber)
  assert.equal(matching.length, 1)
  assert.equal((await p.client.users.list()).users.length, usersBefore + 1)
})
