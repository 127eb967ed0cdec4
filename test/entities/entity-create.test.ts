import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { formatTimestamp, zeroTimestamp } from '../../src/contract/format.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, numberedPersonalEntity, personalEntity, registrationNumber, saIdNumber } from '../support/fixtures.ts'
import { expectRefusal, uuidPattern } from '../support/assertions.ts'

// Happy paths of svc.entity.<partner_id>.create / info / list-entities: every field of
// every response shape, the personal entity's automatic user and the generated name.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})

/** Moves the clock on a minute so each entity gets its own, known creation time. */
function tick(): string {
  tb.clock.advance(60_000)
  return formatTimestamp(tb.clock.now())
}

test('entities - create business returns id and info has every business field', async () => {
  const at = tick()
  const request = businessEntity({ name: 'Karoo Logistics (Pty) Ltd', trading_name: 'Karoo Freight',
    email: 'ops@karoo.example' })
  const created = await p.client.entities.create(request)
  // The body is the id; the SDK adds the Screening-Status reply header's value.
  assert.deepEqual(Object.keys(created), ['id', 'screening_status'])
  assert.match(created.id, uuidPattern)

  const info = await p.client.entities.info({ entity_id: created.id })
  assert.deepEqual(info, {
    id: created.id,
    date_created: at,
    name: 'Karoo Logistics (Pty) Ltd',
    trading_name: 'Karoo Freight',
    entity_type: 'business',
    email: 'ops@karoo.example',
    approved: false,
    screening_status: 'clear',
  })
})

test('entities - create personal returns id and info has every personal field', async () => {
  const at = tick()
  const idNumber = saIdNumber('850630')
  const created = await p.client.entities.create(
    personalEntity({
      email: 'sipho@example.com',
      first_name: 'Sipho',
      last_name: 'Dlamini',
      phone_number: '+27831234567',
      gender: 'male',
      date_of_birth: '1985-06-30T00:00:00Z',
      id_number: idNumber,
      id_issue_date: '2003-07-01T00:00:00Z',
      id_issue_expiry_date: '2033-07-01T00:00:00Z',
      city: 'Durban',
      residency: 'citizen',
      title: 'Mr',
      permit_number: 'WP-1234',
    }),
  )
  assert.match(created.id, uuidPattern)
  // The reply also names the personal entity's automatic user.
  assert.deepEqual(Object.keys(created), ['id', 'user_ready', 'user_id', 'screening_status'])
  assert.equal(created.user_ready, true)
  const { users } = await p.client.users.list({ entity_id: created.id })
  assert.deepEqual(users.map((u) => u.id), [created.user_id])

  const info = await p.client.entities.info({ entity_id: created.id })
  assert.deepEqual(info, {
    id: created.id,
    date_created: at,
    name: 'Sipho Dlamini',
    entity_type: 'personal',
    email: 'sipho@example.com',
    approved: false,
    first_name: 'Sipho',
    last_name: 'Dlamini',
    phone_number: '+27831234567',
    gender: 'male',
    date_of_birth: '1985-06-30T00:00:00Z',
    id_number: idNumber,
    id_type: 'National',
    id_issue_date: '2003-07-01T00:00:00Z',
    id_issue_expiry_date: '2033-07-01T00:00:00Z',
    city: 'Durban',
    residency: 'citizen',
    title: 'Mr',
    permit_number: 'WP-1234',
    screening_status: 'clear',
  })
})

test('entities - personal info without the optional fields gives empty strings', async () => {
  const request = numberedPersonalEntity()
  const { id } = await p.client.entities.create(request)
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.entity_type, 'personal')
  if (info.entity_type !== 'personal') return
  assert.equal(info.id_issue_expiry_date, '')
  assert.equal(info.city, '')
  assert.equal(info.residency, '')
  assert.equal(info.title, '')
  assert.equal(info.permit_number, '')
  assert.equal(info.id_number, request.id_number)
})

test('entities - personal name is generated from first and last name when omitted', async () => {
  const omitted = await p.client.entities.create(
    numberedPersonalEntity({ first_name: 'Lerato', last_name: 'Mokoena' }))
  assert.equal((await p.client.entities.info({ entity_id: omitted.id })).name, 'Lerato Mokoena')

  const given = await p.client.entities.create(
    numberedPersonalEntity({ first_name: 'Lerato', last_name: 'Mokoena', name: 'Dr L. Mokoena' }))
  assert.equal((await p.client.entities.info({ entity_id: given.id })).name, 'Dr L. Mokoena')
})

test('entities - string fields are stored trimmed; a tab is a control character and refused', async () => {
  await expectRefusal(p.client.entities.create(businessEntity({ trading_name: '\tTrim ' })), 400,
    'trading_name')
  const { id } = await p.client.entities.create(
    businessEntity({ name: '  Trim Co  ', trading_name: ' Trim ', email: ' a@trim.example ' }))
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.name, 'Trim Co')
  assert.equal(info.entity_type === 'business' && info.trading_name, 'Trim')
  assert.equal(info.email, 'a@trim.example')
})

/** A business's list item: the personal fields blank (times the zero timestamp). */
const personalBlanks = {
  first_name: '',
  last_name: '',
  phone_number: '',
  gender: '',
  date_of_birth: zeroTimestamp,
  id_number: '',
  id_type: '',
  id_issue_date: zeroTimestamp,
  id_issue_expiry_date: zeroTimestamp,
  city: '',
  residency: '',
  title: '',
  permit_number: '',
}

const naledi = {
  email: 'naledi@example.com',
  first_name: 'Naledi',
  last_name: 'Khumalo',
  phone_number: '+27720000000',
  gender: 'other',
  date_of_birth: '1992-03-04T00:00:00Z',
  id_issue_date: '2010-05-06T00:00:00Z',
  city: 'Pretoria',
  residency: 'citizen',
  title: 'Ms',
  permit_number: 'P-77',
} as const

test('entities - list items carry capitalised type and blanks for the other type', async () => {
  const businessAt = tick()
  const reg = registrationNumber()
  const business = await p.client.entities.create(
    businessEntity({ name: 'Listed Ltd', trading_name: 'Listed', registration_number: reg,
      email: 'list@biz.example', tax_number: '9123456789' }),
  )
  const personalAt = tick()
  const idNumber = saIdNumber('920304')
  const personal = await p.client.entities.create(
    personalEntity({ ...naledi, id_number: idNumber }),
  )

  const { entities } = await p.client.entities.list()
  assert.deepEqual(
    entities.find((e) => e.id === business.id),
    {
      id: business.id,
      name: 'Listed Ltd',
      trading_name: 'Listed',
      registration_number: reg,
      email: 'list@biz.example',
      created_at: businessAt,
      entity_type: 'Business',
      ...personalBlanks,
    },
  )
  assert.equal(zeroTimestamp, '0001-01-01T00:00:00Z')
  assert.deepEqual(
    entities.find((e) => e.id === personal.id),
    {
      id: personal.id,
      name: 'Naledi Khumalo',
      trading_name: '',
      registration_number: '',
      created_at: personalAt,
      entity_type: 'Personal',
      // What was given, as given.
      ...naledi,
      id_number: idNumber,
      id_type: 'National',
      // A personal entity without an expiry date lists the zero timestamp, like a business.
      id_issue_expiry_date: zeroTimestamp,
    },
  )
})

test('entities - list starts with the root entity and keeps creation order', async () => {
  const fresh = await onboardPartner(tb)
  const first = await fresh.client.entities.create(businessEntity())
  const second = await fresh.client.entities.create(numberedPersonalEntity())
  const third = await fresh.client.entities.create(businessEntity())

  const { entities } = await fresh.client.entities.list()
  assert.deepEqual(
    entities.map((e) => e.id),
    [fresh.rootEntityId, first.id, second.id, third.id],
  )
  const root = entities[0]!
  assert.equal(root.entity_type, 'Business')
  assert.match(root.registration_number, /^\d{12}$/)
})

test('entities - list of a partner with only its root entity has one item', async () => {
  const fresh = await onboardPartner(tb)
  const { entities } = await fresh.client.entities.list()
  assert.equal(entities.length, 1)
  assert.equal(entities[0]!.id, fresh.rootEntityId)
  const info = await fresh.client.entities.info({ entity_id: fresh.rootEntityId })
  assert.equal(info.entity_type, 'business')
  assert.equal(info.approved, false)
})

test('entities - personal entity gets exactly one user with its details', async () => {
  const at = tick()
  const usersBefore = (await p.client.users.list()).users.length
  const idNumber = saIdNumber('780910')
  const { id } = await p.client.entities.create(
    personalEntity({
      email: 'pieter@example.com',
      first_name: 'Pieter',
      last_name: 'van Wyk',
      phone_number: '+27610000001',
      gender: 'male',
      date_of_birth: '1978-09-10T00:00:00Z',
      id_number: idNumber,
      id_issue_date: '1996-01-02T00:00:00Z',
      id_issue_expiry_date: '2036-01-02T00:00:00Z',
      city: 'Stellenbosch',
      residency: 'citizen',
      title: 'Mr',
      permit_number: 'NONE',
    }),
  )

  const { users } = await p.client.users.list({ entity_id: id })
  assert.equal(users.length, 1)
  const user = users[0]!
  assert.match(user.id, uuidPattern)
  assert.equal(user.entity_id, id)
  assert.equal(user.first_name, 'Pieter')
  assert.equal(user.last_name, 'van Wyk')
  assert.equal(user.email, 'pieter@example.com')
  assert.equal(user.phone_number, '+27610000001')
  assert.equal(user.gender, 'male')
  assert.equal(user.date_of_birth, '1978-09-10T00:00:00Z')
  assert.equal(user.country, 'ZAF')
  assert.equal(user.city, 'Stellenbosch')
  assert.equal(user.residency, 'citizen')
  assert.equal(user.id_number, idNumber)
  assert.equal(user.id_type, 'National')
  assert.equal(user.id_issue_date, '1996-01-02T00:00:00Z')
  assert.equal(user.id_issue_expiry, '2036-01-02T00:00:00Z')
  assert.equal(user.title, 'Mr')
  assert.equal(user.permit_number, 'NONE')
  assert.equal(user.created_at, at)
  // The KYC documents came with the entity, so the holder's KYC waits for the bank.
  assert.equal(user.kyc_status, 'pending')
  assert.equal(user.verified, false)
  assert.equal(user.kyc_submitted_at, at)
  assert.equal(user.kyc_reviewed_at, undefined)
  assert.equal(user.kyc_rejection_reason, undefined)

  assert.equal((await p.client.users.list()).users.length, usersBefore + 1)
})

test('entities - business entity gets no automatic user', async () => {
  const usersBefore = (await p.client.users.list()).users.length
  const { id } = await p.client.entities.create(businessEntity())
  assert.deepEqual((await p.client.users.list({ entity_id: id })).users, [])
  assert.equal((await p.client.users.list()).users.length, usersBefore)
})

test('entities - create business without tax_number and with one', async () => {
  const without = await p.client.entities.create(businessEntity())
  const withTax = await p.client.entities.create(businessEntity({ tax_number: '9012345678' }))
  const ids = (await p.client.entities.list()).entities.map((e) => e.id)
  assert.ok(ids.includes(without.id))
  assert.ok(ids.includes(withTax.id))
})

test('entities - passport id_number in any alphanumeric format is accepted', async () => {
  for (const idNumber of ['A12345678', 'ab12CD34', 'PASSPORT', '12345', '1234567890123']) {
    const { id } = await p.client.entities.create(
      personalEntity({ id_type: 'Passport', id_number: idNumber,
        id_issue_expiry_date: '2030-01-01T00:00:00Z' }),
    )
    const info = await p.client.entities.info({ entity_id: id })
    assert.equal(info.entity_type === 'personal' && info.id_type, 'Passport')
    assert.equal(info.entity_type === 'personal' && info.id_number, idNumber)
  }
})

test('entities - national id_number born on 29 February of a leap year is accepted', async () => {
  const idNumber = saIdNumber('000229')
  const { id } = await p.client.entities.create(
    personalEntity({ id_number: idNumber, date_of_birth: '2000-02-29T00:00:00Z' }))
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.entity_type === 'personal' && info.id_number, idNumber)
})

test('entities - strings at their length limit are accepted', async () => {
  const name = 'N'.repeat(200)
  const trading = 'T'.repeat(200)
  const email = `${'e'.repeat(242)}@example.com`
  assert.equal(email.length, 254)
  const business = await p.client.entities.create(
    businessEntity({ name, trading_name: trading, email, tax_number: '9'.repeat(30) }))
  const info = await p.client.entities.info({ entity_id: business.id })
  assert.equal(info.name, name)
  assert.equal(info.entity_type === 'business' && info.trading_name, trading)
  assert.equal(info.email, email)

  const personal = await p.client.entities.create(
    personalEntity({
      first_name: 'F'.repeat(200),
      last_name: 'L'.repeat(200),
      phone_number: '1'.repeat(30),
      id_type: 'Passport',
      id_number: 'P'.repeat(30),
      city: 'C'.repeat(200),
      residency: 'R'.repeat(200),
      title: 'T'.repeat(30),
      permit_number: 'W'.repeat(50),
    }),
  )
  const personalInfo = await p.client.entities.info({ entity_id: personal.id })
  assert.equal(personalInfo.entity_type, 'personal')
  if (personalInfo.entity_type !== 'personal') return
  assert.equal(personalInfo.id_number, 'P'.repeat(30))
  assert.equal(personalInfo.permit_number, 'W'.repeat(50))
  assert.equal(personalInfo.city, 'C'.repeat(200))
})

test('entities - timestamps keep milliseconds and the earliest allowed year round-trips', async () => {
  const { id } = await p.client.entities.create(
    personalEntity({
      id_type: 'Passport',
      id_number: 'OLD1900',
      date_of_birth: '1900-01-01T00:00:00Z',
      id_issue_date: '2001-02-03T04:05:06.789Z',
    }),
  )
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.entity_type, 'personal')
  if (info.entity_type !== 'personal') return
  assert.equal(info.date_of_birth, '1900-01-01T00:00:00Z')
  assert.equal(info.id_issue_date, '2001-02-03T04:05:06.789Z')
})

test('entities - date_of_birth and id_issue_date of today are accepted', async () => {
  const now = tb.clock.now().toISOString()
  const { id } = await p.client.entities.create(personalEntity(
    { id_type: 'Passport', id_number: 'TODAY1', date_of_birth: now, id_issue_date: now }))
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.entity_type === 'personal' && info.date_of_birth,
    formatTimestamp(tb.clock.now()))
})

test('entities - tax_number and purpose are stored with the entity (operators see them)', async () => {
  const business = await p.client.entities.create({ ...businessEntity(), tax_number: '9012345678',
    purpose: 'freight payments' })
  const person = await p.client.entities.create({ ...personalEntity(), purpose: 'personal',
    trading_name: 'Ignored For A Person' })
  const { entities } = await tb.operator.entities.list({ partner_id: p.partnerId })
  const byId = new Map(entities.map((e) => [e.id, e]))
  assert.equal(byId.get(business.id)?.tax_number, '9012345678')
  assert.equal(byId.get(business.id)?.purpose, 'freight payments')
  assert.equal(byId.get(person.id)?.purpose, 'personal')
  // A person has no trading name: the one the reference client sends is not kept.
  assert.equal(byId.get(person.id)?.trading_name, '')
})
