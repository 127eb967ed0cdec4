import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { businessEntity, saIdNumber, userRequest, without } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, iso, uuidPattern, zeroTimestamp } from '../support/assertions.ts'
import { asCreate } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

async function newBusiness(): Promise<string> {
  return (await p.client.entities.create(businessEntity())).id
}

/** A valid National id number whose date or check digit is wrong on purpose. */
function withCheckDigit(body12: string): string {
  return body12 + luhnCheckDigit(body12)
}

test('user create - returns a userId and stores every field of the record', async () => {
  const entityId = await newBusiness()
  const request = userRequest(entityId, { email: 'sipho.dlamini@acme.example' })
  const created = await p.client.users.create(request)
  assert.deepEqual(Object.keys(created), ['userId', 'screening_status'], 'the SDK adds the header')
  assert.match(created.userId, uuidPattern)

  const { user } = await p.client.users.get({ user_id: created.userId })
  const now = iso(tb.clock.now())
  assert.deepEqual(user, {
    id: created.userId,
    first_name: 'Sipho',
    last_name: 'Dlamini',
    email: 'sipho.dlamini@acme.example',
    phone_number: '+27831234567',
    entity_id: entityId,
    created_at: now,
    updated_at: now,
    verified: false,
    verified_at: zeroTimestamp,
    gender: 'male',
    country: 'ZAF',
    city: 'Johannesburg',
    residency: 'citizen',
    id_number: request.id_number,
    id_type: 'National',
    title: 'Mr',
    permit_number: 'NA',
    date_of_birth: '1985-06-30T00:00:00Z',
    id_issue_date: '2003-07-01T00:00:00Z',
    id_issue_expiry: zeroTimestamp,
    kyc_status: 'not_started',
  })
})

test('user create - verified false starts KYC not_started with no submission, review or reason', async () => {
  const { userId } = await p.client.users.create(userRequest(await newBusiness(),
    { verified: false }))
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'not_started')
  assert.equal(user.verified, false)
  assert.equal(user.verified_at, zeroTimestamp)
  assert.equal('kyc_submitted_at' in user, false)
  assert.equal('kyc_reviewed_at' in user, false)
  assert.equal('kyc_rejection_reason' in user, false)
})

test('user create - verified true records the partner-approved KYC at once', async () => {
  const { userId } = await p.client.users.create(userRequest(await newBusiness(),
    { verified: true }))
  const { user } = await p.client.users.get({ user_id: userId })
  const now = iso(tb.clock.now())
  assert.equal(user.kyc_status, 'approved')
  assert.equal(user.verified, true)
  assert.equal(user.verified_at, now)
  assert.equal(user.kyc_submitted_at, now)
  assert.equal(user.kyc_reviewed_at, now)
  assert.equal('kyc_rejection_reason' in user, false)
})

test('user create - a passport user keeps its expiry as id_issue_expiry, and either spelling of the type is accepted', async () => {
  const entityId = await newBusiness()
  const { userId } = await p.client.users.create(
    userRequest(entityId, {
      id_type: 'passport',
      id_number: 'A12345678',
      id_issue_date: '2020-02-01T00:00:00Z',
      id_issue_expiry_date: '2030-01-31T00:00:00Z',
      permit_number: 'WP-2024-001',
      residency: 'permanent resident',
    }),
  )
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.id_type, 'Passport')
  assert.equal(user.id_number, 'A12345678')
  assert.equal(user.id_issue_date, '2020-02-01T00:00:00Z')
  assert.equal(user.id_issue_expiry, '2030-01-31T00:00:00Z')
  assert.equal(user.permit_number, 'WP-2024-001')
  assert.equal(user.residency, 'permanent resident')
  assert.equal('id_issue_expiry_date' in user, false, 'the record names the field id_issue_expiry')

  const second = await p.client.users.create(
    userRequest(entityId, { id_type: 'Passport', id_number: 'B7654321',
      id_issue_expiry_date: '2031-01-01T00:00:00Z' }),
  )
  assert.equal((await p.client.users.get({ user_id: second.userId })).user.id_type, 'Passport')
})

test('user create - timestamps with an offset or a fraction are stored as the same instant in UTC', async () => {
  const { userId } = await p.client.users.create(
    userRequest(await newBusiness(), {
      date_of_birth: '1985-06-30T02:00:00+02:00',
      id_issue_date: '2003-07-01T10:15:30.250Z',
    }),
  )
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.date_of_birth, '1985-06-30T00:00:00Z')
  assert.equal(user.id_issue_date, '2003-07-01T10:15:30.250Z')
})

test('user create - gender is a free string and text is stored trimmed', async () => {
  const { userId } = await p.client.users.create(
    userRequest(await newBusiness(), { gender: 'non-binary', first_name: '  Lwazi  ',
      city: ' Durban ' }),
  )
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.gender, 'non-binary')
  assert.equal(user.first_name, 'Lwazi')
  assert.equal(user.city, 'Durban')
})

test('user create - an optional address is accepted and validated', async () => {
  const entityId = await newBusiness()
  const address = { address_line_1: '1 Main Road', address_line_2: 'Unit 4', city: 'Cape Town',
    state: 'WC', country: 'ZAF', postcode: '8001' }
  const { userId } = await p.client.users.create(userRequest(entityId, { address }))
  assert.match(userId, uuidPattern)
  await expectRefusal(p.client.users.create(
    userRequest(entityId, { address: { ...address, country: 'ZA' } })), 400, 'address.country')
  await expectRefusal(p.client.users.create(
    userRequest(entityId, { address: { city: 'Cape Town' } })), 400, 'address.address_line_1')
  await expectRefusal(p.client.users.create(
    userRequest(entityId, { address: { ...address, floor: '3' } })), 400, 'address.floor')
  const { users } = await p.client.users.list({ entity_id: entityId })
  assert.deepEqual(users.map((u) => u.id), [userId])
})

const requiredFields = [
  'entity_id',
  'first_name',
  'last_name',
  'email',
  'phone_number',
  'gender',
  'date_of_birth',
  'country',
  'city',
  'residency',
  'id_number',
  'id_type',
  'id_issue_date',
  'title',
  'verified',
]

test('user create - each required field missing → 400 naming it, and nothing is stored', async () => {
  const entityId = await newBusiness()
  for (const field of requiredFields) {
    const error = await expectRefusal(
      p.client.users.create(asCreate(without(userRequest(entityId), field))), 400, field)
    const named = (error.details as Array<{ field: string; message: string }>).find(
      (d) => d.field === field)
    assert.equal(named?.message, 'is required', field)
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - text fields at 2 characters are accepted, at 1 (or blank after trimming) → 400', async () => {
  const entityId = await newBusiness()
  const minTwo = ['first_name', 'last_name', 'phone_number', 'city', 'residency', 'id_number',
    'title', 'permit_number']
  for (const field of minTwo) {
    await expectRefusal(
      p.client.users.create(asCreate(userRequest(entityId, { [field]: 'A', id_type: 'passport',
      id_issue_expiry_date: '2030-01-01T00:00:00Z' }))), 400, field)
    await expectRefusal(
      p.client.users.create(asCreate(userRequest(entityId, { [field]: '  B  ', id_type: 'passport',
      id_issue_expiry_date: '2030-01-01T00:00:00Z' }))), 400, field)
  }
  await expectRefusal(p.client.users.create(userRequest(entityId, { gender: '' })), 400, 'gender')
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [],
    'nothing stored after the refusals')

  const atMinimum = Object.fromEntries(minTwo.map((field) => [field, 'Ab']))
  const { userId } = await p.client.users.create(
    userRequest(entityId, { ...atMinimum, id_type: 'passport',
      id_issue_expiry_date: '2030-01-01T00:00:00Z' }),
  )
  const { user } = await p.client.users.get({ user_id: userId })
  for (const field of minTwo) assert.equal(user[field as keyof typeof user], 'Ab', field)
})

test('user create - text longer than its limit → 400, at the limit accepted', async () => {
  const entityId = await newBusiness()
  await expectRefusal(p.client.users.create(userRequest(entityId, { first_name: 'x'.repeat(201) })),
    400, 'first_name')
  await expectRefusal(p.client.users.create(
    userRequest(entityId, { phone_number: '1'.repeat(31) })), 400, 'phone_number')
  const { userId } = await p.client.users.create(
    userRequest(entityId, { first_name: 'x'.repeat(200), phone_number: '1'.repeat(30) }))
  const { users } = await p.client.users.list({ entity_id: entityId })
  assert.deepEqual(users.map((u) => u.id), [userId])
})

test('user create - an invalid e-mail → 400 naming email', async () => {
  const entityId = await newBusiness()
  for (const email of ['not-an-email', 'sipho@', '@acme.example', 'sipho acme@example.com', '']) {
    await expectRefusal(p.client.users.create(userRequest(entityId, { email })), 400, 'email')
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - a date that is not an ISO 8601 timestamp → 400 naming the field', async () => {
  const entityId = await newBusiness()
  const badDates = ['30/06/1985', '1985-13-01T00:00:00Z', '1985-02-30T00:00:00Z', 'yesterday',
    '1985-06-30T25:00:00Z', '1985-06-30T00:00:00']
  for (const field of ['date_of_birth', 'id_issue_date']) {
    for (const value of badDates) await expectRefusal(
      p.client.users.create(userRequest(entityId, { [field]: value })), 400, field)
  }
  for (const value of badDates) {
    await expectRefusal(
      p.client.users.create(userRequest(entityId, { id_type: 'passport', id_number: 'A1234567',
        id_issue_expiry_date: value })),
      400,
      'id_issue_expiry_date',
    )
  }
  await expectRefusal(p.client.users.create(
    asCreate(userRequest(entityId, { date_of_birth: 496800000 }))), 400, 'date_of_birth')
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - dates before the year 1900 → 400; 1900-01-01 is the earliest accepted', async () => {
  const entityId = await newBusiness()
  for (const value of ['1899-12-31T23:59:59Z', '1899-12-31', '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z', '0099-06-30']) {
    await expectRefusal(p.client.users.create(userRequest(entityId, { date_of_birth: value })), 400,
      'date_of_birth')
    await expectRefusal(p.client.users.create(userRequest(entityId, { id_issue_date: value })), 400,
      'id_issue_date')
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
  const { userId } = await p.client.users.create(
    userRequest(entityId, { date_of_birth: '1900-01-01T00:00:00Z', id_issue_date: '1900-01-01' }))
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.date_of_birth, '1900-01-01T00:00:00Z')
  assert.equal(user.id_issue_date, '1900-01-01T00:00:00Z')
})

test('user create - a country that is not an ISO 3166 alpha-3 code → 400 naming country', async () => {
  const entityId = await newBusiness()
  for (const country of ['ZA', 'zaf', 'XXX', 'ZAFR', 'South Africa', '']) {
    await expectRefusal(p.client.users.create(userRequest(entityId, { country })), 400, 'country')
  }
  const { userId } = await p.client.users.create(userRequest(entityId, { country: 'BWA' }))
  assert.equal((await p.client.users.get({ user_id: userId })).user.country, 'BWA')
})

test('user create - an unknown id_type → 400 naming id_type', async () => {
  const entityId = await newBusiness()
  for (const idType of ['drivers_licence', '', 'NationalID']) {
    await expectRefusal(p.client.users.create(userRequest(entityId, { id_type: idType })), 400,
      'id_type')
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - a passport without id_issue_expiry_date → 400 naming it', async () => {
  const entityId = await newBusiness()
  for (const idType of ['passport', 'Passport']) {
    await expectRefusal(p.client.users.create(userRequest(entityId,
      { id_type: idType, id_number: 'A1234567' })), 400, 'id_issue_expiry_date')
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - a National id_number must be 13 digits with a real date and a Luhn check digit', async () => {
  const entityId = await newBusiness()
  const valid = saIdNumber('850630')
  const wrongCheckDigit = valid.slice(0, 12) + String((Number(valid[12]) + 1) % 10)
  const bad = [
    valid.slice(0, 12), // 12 digits
    `${valid}0`, // 14 digits
    `85063A${valid.slice(6)}`, // a letter
    wrongCheckDigit,
    withCheckDigit('851330000108'), // month 13
    withCheckDigit('850230000108'), // 30 February
    withCheckDigit('850600000108'), // day 0
  ]
  for (const idNumber of bad) {
    await expectRefusal(p.client.users.create(userRequest(entityId, { id_number: idNumber })), 400,
      'id_number')
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
  // 29 February of a leap year is a real date.
  const leap = withCheckDigit('000229000108')
  const { userId } = await p.client.users.create(
    userRequest(entityId, { id_number: leap, date_of_birth: '2000-02-29T00:00:00Z' }))
  assert.equal((await p.client.users.get({ user_id: userId })).user.id_number, leap)
})

test('user create - wrong types → 400 naming the field', async () => {
  const entityId = await newBusiness()
  const cases: Array<[string, unknown]> = [
    ['verified', 'true'],
    ['verified', 1],
    ['verified', null],
    ['first_name', 123],
    ['email', ['sipho@acme.example']],
    ['entity_id', 'not-a-uuid'],
    ['entity_id', 42],
    ['address', 'Main Road'],
  ]
  for (const [field, value] of cases) {
    await expectRefusal(p.client.users.create(asCreate(userRequest(entityId, { [field]: value }))),
      400, field)
  }
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - an unknown field → 400 naming it', async () => {
  const entityId = await newBusiness()
  const error = await expectRefusal(
    p.client.users.create(asCreate(userRequest(entityId, { nickname: 'Sips' }))), 400, 'nickname')
  const named = (error.details as Array<{ field: string; message: string }>).find(
    (d) => d.field === 'nickname')
  assert.equal(named?.message, 'is not a known field')
  await expectRefusal(p.client.users.create(
    asCreate(userRequest(entityId, { kyc_status: 'approved' }))), 400, 'kyc_status')
  assert.deepEqual((await p.client.users.list({ entity_id: entityId })).users, [])
})

test('user create - a body that is not a JSON object → 400', async () => {
  const subject = `svc.user.${p.partnerId}.create`
  const malformed = await rawRequest(tb, subject, '{"entity_id":', { token: p.token })
  assert.equal(malformed.code, 400)
  assert.equal(malformed.body.error.type, 'invalid_json')
  for (const body of ['[]', '"user"', 'null', '42']) {
    const reply = await rawRequest(tb, subject, body, { token: p.token })
    assert.equal(reply.code, 400, body)
    assert.equal(reply.body.error.type, 'invalid_request', body)
    assert.deepEqual(reply.body.error.details,
      [{ field: '(body)', message: 'must be a JSON object' }], body)
  }
  const empty = await rawRequest(tb, subject, '{}', { token: p.token })
  assert.equal(empty.code, 400)
  const fields = (empty.body.error.details as Array<{ field: string }>).map((d) => d.field).sort()
  assert.deepEqual(fields, [...requiredFields].sort())
})

test('user create - several faults are all named in one reply', async () => {
  const entityId = await newBusiness()
  const error = await expectRefusal(
    p.client.users.create(asCreate(
      userRequest(entityId, { first_name: 'A', email: 'nope', country: 'ZA', verified: 'yes' }))),
    400,
  )
  const fields = (error.details as Array<{ field: string }>).map((d) => d.field).sort()
  assert.deepEqual(fields, ['country', 'email', 'first_name', 'verified'])
})

test('user create - a user of a pending business entity is allowed; each create makes a new user', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  assert.equal((await p.client.entities.info({ entity_id: entityId })).approved, false)
  const first = await p.client.users.create(userRequest(entityId))
  const second = await p.client.users.create(userRequest(entityId))
  assert.notEqual(first.userId, second.userId)
  const { users } = await p.client.users.list({ entity_id: entityId })
  assert.deepEqual(users.map((u) => u.id), [first.userId, second.userId])
})
