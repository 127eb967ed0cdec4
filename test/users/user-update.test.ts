import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { businessEntity, saIdNumber, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError, expectRefusal, iso } from '../support/assertions.ts'
import { asUpdate } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

async function newUser(overrides: Record<string, unknown> = {}, partner: TestPartner = p) {
  const { id: entityId } = await partner.client.entities.create(businessEntity())
  const { userId } = await partner.client.users.create(userRequest(entityId, overrides))
  const { user } = await partner.client.users.get({ user_id: userId })
  return user
}

const minute = 60_000

test('user update - only the fields given change, and updated_at moves', async () => {
  const before = await newUser()
  tb.clock.advance(5 * minute)
  const reply = await p.client.users.update({ user_id: before.id, first_name: 'Themba' })
  assert.deepEqual(reply, { userId: before.id, screening_status: 'clear' })
  const { user } = await p.client.users.get({ user_id: before.id })
  assert.deepEqual(user, { ...before, first_name: 'Themba', updated_at: iso(tb.clock.now()) })
  assert.notEqual(user.updated_at, user.created_at)
})

test('user update - every updatable field at once', async () => {
  const before = await newUser()
  tb.clock.advance(minute)
  const newId = saIdNumber('910203')
  const changes = {
    first_name: 'Nomsa',
    last_name: 'Khumalo',
    email: 'nomsa@acme.example',
    phone_number: '+27820000000',
    gender: 'female',
    date_of_birth: '1991-02-03T00:00:00Z',
    birth_country: 'LSO',
    birth_city: 'Maseru',
    residency: 'resident',
    id_number: newId,
    id_type: 'National',
    id_issue_date: '2010-05-05T00:00:00Z',
    id_issue_expiry_date: '2035-05-05T00:00:00Z',
    title: 'Ms',
    permit_number: 'P-77',
  }
  await p.client.users.update({ user_id: before.id, ...changes })
  const { user } = await p.client.users.get({ user_id: before.id })
  const { id_issue_expiry_date, birth_country, birth_city, ...sameNames } = changes
  assert.deepEqual(user, {
    ...before,
    ...sameNames,
    id_issue_expiry: id_issue_expiry_date,
    updated_at: iso(tb.clock.now()),
  })
  assert.deepEqual(await p.client.users.getBirthDetails({ user_id: before.id }),
    { user_id: before.id, birth_country, birth_city })
})

test('user update - birth country and city are recorded apart from the current country and city', async () => {
  const before = await newUser({ country: 'ZAF', city: 'Johannesburg' })
  assert.deepEqual(await p.client.users.getBirthDetails({ user_id: before.id }),
    { user_id: before.id, birth_country: '', birth_city: '' })
  await p.client.users.update({ user_id: before.id, birth_country: 'ZWE', birth_city: 'Bulawayo' })
  const { user } = await p.client.users.get({ user_id: before.id })
  assert.equal(user.country, 'ZAF')
  assert.equal(user.city, 'Johannesburg')
  assert.deepEqual(await p.client.users.getBirthDetails({ user_id: before.id }),
    { user_id: before.id, birth_country: 'ZWE', birth_city: 'Bulawayo' })
  // User records carry no birth fields: the reference client reads them into a record without them.
  const listed = (await p.client.users.list({ entity_id: user.entity_id })).users.find(
    (u) => u.id === user.id)
  for (const record of [user, listed]) {
    assert.equal('birth_country' in (record ?? {}), false)
    assert.equal('birth_city' in (record ?? {}), false)
  }
})

test('user get_birth_details - another partner\'s user or an unknown one is 404', async () => {
  const mine = await newUser()
  const other = await onboardPartner(tb, { approve: true })
  for (const userId of [mine.id, randomUUID()]) {
    const error = await expectApiError(other.client.users.getBirthDetails({ user_id: userId }))
    assert.equal(error.code, 404)
    assert.equal(error.type, 'not_found')
  }
})

test('user update - with only user_id changes nothing but updated_at', async () => {
  const before = await newUser()
  tb.clock.advance(minute)
  await p.client.users.update({ user_id: before.id })
  const { user } = await p.client.users.get({ user_id: before.id })
  assert.deepEqual(user, { ...before, updated_at: iso(tb.clock.now()) })
})

test('user update - the merged record is validated: passport without an expiry → 400, with one accepted', async () => {
  const before = await newUser()
  await expectRefusal(p.client.users.update({ user_id: before.id, id_type: 'passport',
    id_number: 'A1234567' }), 400, 'id_issue_expiry_date')
  assert.deepEqual((await p.client.users.get({ user_id: before.id })).user, before,
    'a refused update changes nothing')

  await p.client.users.update({ user_id: before.id, id_type: 'passport', id_number: 'A1234567',
    id_issue_expiry_date: '2030-06-30T00:00:00Z' })
  const { user: passport } = await p.client.users.get({ user_id: before.id })
  assert.equal(passport.id_type, 'Passport')
  assert.equal(passport.id_number, 'A1234567')
  assert.equal(passport.id_issue_expiry, '2030-06-30T00:00:00Z')

  // Now a passport holder: a new passport number alone is fine, the stored expiry still counts.
  await p.client.users.update({ user_id: before.id, id_number: 'B7654321' })
  assert.equal((await p.client.users.get({ user_id: before.id })).user.id_number, 'B7654321')
})

test('user update - the merged record is validated: National with a stored passport number → 400', async () => {
  const before = await newUser({ id_type: 'passport', id_number: 'A1234567',
    id_issue_expiry_date: '2030-01-01T00:00:00Z' })
  await expectRefusal(p.client.users.update({ user_id: before.id, id_type: 'National' }), 400,
    'id_number')
  assert.deepEqual((await p.client.users.get({ user_id: before.id })).user, before)
  const idNumber = saIdNumber('850630')
  await p.client.users.update({ user_id: before.id, id_type: 'National', id_number: idNumber })
  const { user } = await p.client.users.get({ user_id: before.id })
  assert.equal(user.id_type, 'National')
  assert.equal(user.id_number, idNumber)
})

test('user update - a National id_number failing the SA rules → 400 and nothing changes', async () => {
  const before = await newUser()
  const valid = saIdNumber('850630')
  const wrongCheckDigit = valid.slice(0, 12) + String((Number(valid[12]) + 1) % 10)
  for (const idNumber of [wrongCheckDigit, valid.slice(0, 12), 'A123456789012']) {
    const error = await expectRefusal(p.client.users.update({ user_id: before.id,
      id_number: idNumber }), 400, 'id_number')
    // The message states the rule, so a partner whose generator breaks it can tell why.
    assert.match(error.message, /13-digit South African ID number: YYMMDD .* Luhn check digit/)
  }
  assert.deepEqual((await p.client.users.get({ user_id: before.id })).user, before)
})

test('user update - each invalid field → 400 naming it, and nothing changes', async () => {
  const before = await newUser()
  const cases: Array<[string, unknown]> = [
    ['first_name', 'A'],
    ['last_name', ' B '],
    ['email', 'not-an-email'],
    ['phone_number', '1'],
    ['gender', 'm'],
    ['date_of_birth', '1985-02-30T00:00:00Z'],
    ['date_of_birth', 'last year'],
    ['birth_country', 'ZA'],
    ['birth_country', 'Lesotho'],
    ['birth_city', 'X'],
    ['residency', 'r'],
    ['id_number', '1'],
    ['id_type', 'drivers_licence'],
    ['id_issue_date', '2003/07/01'],
    ['id_issue_expiry_date', 'never'],
    ['id_issue_expiry_date', '0001-01-01T00:00:00Z'],
    ['date_of_birth', '1899-12-31'],
    ['title', 'M'],
    ['permit_number', 'P'],
    ['first_name', 42],
    ['first_name', ['Nomsa']],
  ]
  for (const [field, value] of cases) {
    await expectRefusal(p.client.users.update(asUpdate({ user_id: before.id, [field]: value })),
      400, field)
  }
  assert.deepEqual((await p.client.users.get({ user_id: before.id })).user, before)
})

test('user update - fields that cannot be updated are unknown fields → 400', async () => {
  const before = await newUser()
  for (const field of ['country', 'city', 'verified', 'entity_id', 'kyc_status', 'id',
      'nickname']) {
    const value = field === 'verified' ? true : field === 'entity_id' || field === 'id'
      ? before.entity_id : 'ZAF'
    const error = await expectRefusal(
      p.client.users.update(asUpdate({ user_id: before.id, [field]: value })), 400, field)
    const named = (error.details as Array<{ field: string; message: string }>).find(
      (d) => d.field === field)
    assert.equal(named?.message, 'is not a known field', field)
  }
  assert.deepEqual((await p.client.users.get({ user_id: before.id })).user, before)
})

test('user update - user_id missing or not a UUID → 400; unknown user → 404', async () => {
  await expectRefusal(p.client.users.update(asUpdate({ first_name: 'Themba' })), 400, 'user_id')
  await expectRefusal(p.client.users.update(asUpdate({ user_id: 'user-1', first_name: 'Themba' })),
    400, 'user_id')
  await expectRefusal(p.client.users.update({ user_id: randomUUID(), first_name: 'Themba' }), 404)
})

test("user update - another partner's user → 404 and it is left unchanged", async () => {
  const theirs = await newUser({}, other)
  await expectRefusal(p.client.users.update({ user_id: theirs.id, first_name: 'Hijack' }), 404)
  assert.deepEqual((await other.client.users.get({ user_id: theirs.id })).user, theirs)
})

test('user update - does not touch KYC: a verified user stays verified', async () => {
  const before = await newUser({ verified: true })
  tb.clock.advance(minute)
  await p.client.users.update({ user_id: before.id, last_name: 'Mokoena' })
  const { user } = await p.client.users.get({ user_id: before.id })
  assert.equal(user.kyc_status, 'approved')
  assert.equal(user.verified, true)
  assert.equal(user.verified_at, before.verified_at)
  assert.equal(user.kyc_reviewed_at, before.kyc_reviewed_at)
  assert.equal(user.last_name, 'Mokoena')
})
