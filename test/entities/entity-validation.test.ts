import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, personalEntity, saIdNumber, without } from '../support/fixtures.ts'
import { expectApiError, type FieldIssue } from '../support/assertions.ts'

// Every way svc.entity.<partner_id>.create can be refused with 400: the failing field is
// named in `details`, and nothing is stored (no entity, and no user for a personal one).

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})

async function stored() {
  return { entities: await p.client.entities.list(), users: await p.client.users.list() }
}

/** Sends a create that must fail with 400 naming exactly `field`, and checks nothing was stored. */
async function expectRefused(body: unknown, field: string): Promise<void> {
  const before = await stored()
  const error = await expectApiError(p.client.entities.create(body as never))
  assert.equal(error.code, 400, error.message)
  assert.equal(error.type, 'invalid_request')
  const fields = (error.details as FieldIssue[]).map((d) => d.field)
  assert.deepEqual(fields, [field],
    `details ${JSON.stringify(error.details)} should name only ${field}`)
  for (const detail of error.details as FieldIssue[]) assert.ok(detail.message.length > 0)
  assert.deepEqual(await stored(), before)
}

/** A 13-digit national id with the given birth digits whose check digit is wrong. */
function badCheckDigit(birth: string): string {
  const good = saIdNumber(birth)
  const wrong = (Number(good[12]) + 1) % 10
  return good.slice(0, 12) + wrong
}

/**
 * A 13-digit number with a correct check digit but the given (possibly impossible) birth digits.
 */
function idWithBirth(birth: string): string {
  const body = `${birth}500008`
  return body + luhnCheckDigit(body)
}

// Required fields -------------------------------------------------------------------------

for (const field of ['entity_type', 'email', 'country', 'name', 'trading_name',
    'registration_number']) {
  test(`entities - create business without ${field} is 400`, async () => {
    await expectRefused(without(businessEntity(), field), field)
  })
}

for (const field of [
  'entity_type',
  'email',
  'country',
  'first_name',
  'last_name',
  'phone_number',
  'gender',
  'date_of_birth',
  'id_number',
  'id_type',
  'id_issue_date',
]) {
  test(`entities - create personal without ${field} is 400`, async () => {
    await expectRefused(without(personalEntity(), field), field)
  })
}

test('entities - create with an empty object is 400 naming entity_type', async () => {
  await expectRefused({}, 'entity_type')
})

// Wrong types -----------------------------------------------------------------------------

const wrongTypes: Array<[string, () => Record<string, unknown>, string]> = [
  ['entity_type as a number', () => businessEntity({ entity_type: 1 }), 'entity_type'],
  ['email as a number', () => businessEntity({ email: 42 }), 'email'],
  ['country as a number', () => businessEntity({ country: 710 }), 'country'],
  ['name as null', () => businessEntity({ name: null }), 'name'],
  ['name as an array', () => businessEntity({ name: ['Acme'] }), 'name'],
  ['trading_name as an object', () => businessEntity({ trading_name: { value: 'Acme' } }),
    'trading_name'],
  ['registration_number as a number', () => businessEntity({ registration_number: 202012345678 }),
    'registration_number'],
  ['tax_number as a number', () => businessEntity({ tax_number: 9012345678 }), 'tax_number'],
  ['tax_number as a list', () => businessEntity({ tax_number: ['9012345678'] }), 'tax_number'],
  ['first_name as a boolean', () => personalEntity({ first_name: true }), 'first_name'],
  ['phone_number as a number', () => personalEntity({ phone_number: 27821234567 }), 'phone_number'],
  ['date_of_birth as a number', () => personalEntity({ date_of_birth: 632361600000 }),
    'date_of_birth'],
  ['id_number as a number', () => personalEntity({ id_number: 9001155000081 }), 'id_number'],
  ['city as a number', () => personalEntity({ city: 7 }), 'city'],
  ['name as a number on a personal entity', () => personalEntity({ name: 5 }), 'name'],
]
for (const [label, body, field] of wrongTypes) {
  test(`entities - create with ${label} is 400`, async () => {
    await expectRefused(body(), field)
  })
}

// Enumerations ----------------------------------------------------------------------------

const badEnums: Array<[string, () => Record<string, unknown>, string]> = [
  ['unknown entity_type', () => businessEntity({ entity_type: 'trust' }), 'entity_type'],
  ['capitalised entity_type', () => businessEntity({ entity_type: 'Business' }), 'entity_type'],
  ['empty entity_type', () => personalEntity({ entity_type: '' }), 'entity_type'],
  ['unknown gender', () => personalEntity({ gender: 'unknown' }), 'gender'],
  ['unknown id_type', () => personalEntity({ id_type: 'DriversLicence' }), 'id_type'],
]
for (const [label, body, field] of badEnums) {
  test(`entities - create with ${label} is 400`, async () => {
    await expectRefused(body(), field)
  })
}

// E-mail and country ----------------------------------------------------------------------

for (const value of ['not-an-email', 'a@b', 'thandi@', '@example.com', 'two words@example.com',
    '']) {
  test(`entities - create with bad email ${JSON.stringify(value)} is 400`, async () => {
    await expectRefused(businessEntity({ email: value }), 'email')
  })
}

for (const value of ['ZZZ', 'za', 'ZA', 'zaf', 'South Africa', '', 'ZAF ']) {
  test(`entities - create with bad country ${JSON.stringify(value)} is 400`, async () => {
    await expectRefused(personalEntity({ country: value }), 'country')
  })
}

test('entities - create accepts other ISO alpha-3 countries', async () => {
  for (const country of ['NAM', 'BWA', 'GBR']) {
    const { id } = await p.client.entities.create(businessEntity({ country }))
    assert.ok((await p.client.entities.list()).entities.some((e) => e.id === id))
  }
})

// Registration number ---------------------------------------------------------------------

const badRegistrations = ['20201234567', '2020123456789', '20201234567A', ' 202012345678', '']
// The CIPC certificate's form is YYYY/NNNNNN/NN exactly: other slashes and separators are not.
const badSlashed = ['2020/12345/607', '2020/123456/7', '2020-123456-07', '2020/123456/07/']
for (const value of [...badRegistrations, ...badSlashed]) {
  test(`entities - create with registration_number ${JSON.stringify(value)} is 400`, async () => {
    await expectRefused(businessEntity({ registration_number: value }), 'registration_number')
  })
}

test('entities - registration_number as on the CIPC certificate (YYYY/NNNNNN/NN) is kept as its 12 digits', async () => {
  const digits = businessEntity().registration_number as string
  const slashed = `${digits.slice(0, 4)}/${digits.slice(4, 10)}/${digits.slice(10)}`
  const { id } = await p.client.entities.create(businessEntity({ registration_number: slashed }))
  const { entities } = await p.client.entities.list()
  assert.equal(entities.find((e) => e.id === id)?.registration_number, digits)
  // Both forms are one number: the 12 digits again are a duplicate.
  const twice = businessEntity({ registration_number: digits })
  const again = await expectApiError(p.client.entities.create(twice))
  assert.equal(again.code, 409, again.message)
})

// National id number ----------------------------------------------------------------------

const badNationalIds: Array<[string, () => string]> = [
  ['12 digits', () => saIdNumber().slice(0, 12)],
  ['14 digits', () => `${saIdNumber()}1`],
  ['letters', () => `90011A${saIdNumber().slice(6)}`],
  ['month 13', () => idWithBirth('901315')],
  ['month 00', () => idWithBirth('900015')],
  ['day 00', () => idWithBirth('900100')],
  ['day 32', () => idWithBirth('900132')],
  ['30 February', () => idWithBirth('900230')],
  ['29 February of a year that is never leap', () => idWithBirth('010229')],
  ['a wrong check digit', () => badCheckDigit('900115')],
]
for (const [label, idNumber] of badNationalIds) {
  test(`entities - create with national id_number of ${label} is 400`, async () => {
    await expectRefused(personalEntity({ id_type: 'National', id_number: idNumber() }), 'id_number')
  })
}

test("entities - a national id_number's 400 states the rule (the incumbent's generator fails it)", async () => {
  const error = await expectApiError(p.client.entities.create(
    personalEntity({ id_number: badCheckDigit('900115') }) as never), 400)
  const rule = 'must be a 13-digit South African ID number: YYMMDD (the birth date, a real ' +
    'date), a 4-digit sequence number, a citizenship digit (0 citizen, 1 permanent resident), ' +
    'one more digit (usually 8) and a Luhn check digit over the first 12'
  assert.deepEqual(error.details, [{ field: 'id_number', message: rule }])
  assert.equal(error.message, `invalid request: id_number ${rule}`)
})

test('entities - create with passport id_number that is not alphanumeric is 400', async () => {
  await expectRefused(personalEntity({ id_type: 'Passport', id_number: 'A12-345/6' }), 'id_number')
  await expectRefused(personalEntity({ id_type: 'Passport', id_number: 'A1 2345' }), 'id_number')
})

// Dates -----------------------------------------------------------------------------------

const badDates = [
  '1990-01-15',
  '15/01/1990',
  '1990-02-30T00:00:00Z',
  '1990-13-01T00:00:00Z',
  '1990-01-15T25:00:00Z',
  '1990-01-15T00:00Z',
  '1990-01-15T00:00:00',
  '1990-01-15T00:00:00+02:00',
  'yesterday',
  '',
  // Years before 1900 are typing mistakes, and year 0 once crashed the service (500).
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '1899-12-31T23:59:59Z',
]
for (const field of ['date_of_birth', 'id_issue_date', 'id_issue_expiry_date']) {
  for (const value of badDates) {
    test(`entities - create with ${field} ${JSON.stringify(value)} is 400`, async () => {
      await expectRefused(personalEntity({ [field]: value }), field)
    })
  }
}

test('entities - create with date_of_birth in the future is 400', async () => {
  const tomorrow = new Date(tb.clock.now().getTime() + 24 * 3600_000).toISOString()
  await expectRefused(personalEntity({ date_of_birth: tomorrow }), 'date_of_birth')
})

test('entities - create with id_issue_date in the future is 400', async () => {
  const tomorrow = new Date(tb.clock.now().getTime() + 24 * 3600_000).toISOString()
  await expectRefused(personalEntity({ id_issue_date: tomorrow }), 'id_issue_date')
})

test('entities - create with id_issue_expiry_date before id_issue_date is 400', async () => {
  await expectRefused(
    personalEntity({ id_issue_date: '2010-01-01T00:00:00Z',
      id_issue_expiry_date: '2009-12-31T23:59:59Z' }),
    'id_issue_expiry_date',
  )
})

// Unknown fields and fields of the other entity type -------------------------------------

const unknownFields: Array<[string, () => Record<string, unknown>, string]> = [
  ['an unknown field', () => businessEntity({ colour: 'blue' }), 'colour'],
  ['a personal field on a business', () => businessEntity({ first_name: 'Thandi' }), 'first_name'],
  ['a business field on a personal', () => personalEntity({ registration_number: '202012345678' }),
    'registration_number'],
  ['a user field on a personal', () => personalEntity({ verified: true }), 'verified'],
]
for (const [label, body, field] of unknownFields) {
  test(`entities - create with ${label} is 400`, async () => {
    await expectRefused(body(), field)
  })
}

// Too long and empty strings --------------------------------------------------------------

const tooLong: Array<[string, () => Record<string, unknown>]> = [
  ['name', () => businessEntity({ name: 'N'.repeat(201) })],
  ['trading_name', () => businessEntity({ trading_name: 'T'.repeat(201) })],
  ['email', () => businessEntity({ email: `${'e'.repeat(243)}@example.com` })],
  ['tax_number', () => businessEntity({ tax_number: '9'.repeat(31) })],
  ['first_name', () => personalEntity({ first_name: 'F'.repeat(201) })],
  ['last_name', () => personalEntity({ last_name: 'L'.repeat(201) })],
  ['phone_number', () => personalEntity({ phone_number: '1'.repeat(31) })],
  ['id_number', () => personalEntity({ id_type: 'Passport', id_number: 'P'.repeat(31) })],
  ['city', () => personalEntity({ city: 'C'.repeat(201) })],
  ['residency', () => personalEntity({ residency: 'R'.repeat(201) })],
  ['title', () => personalEntity({ title: 'T'.repeat(31) })],
  ['permit_number', () => personalEntity({ permit_number: 'W'.repeat(51) })],
]
for (const [field, body] of tooLong) {
  test(`entities - create with ${field} one over its length limit is 400`, async () => {
    await expectRefused(body(), field)
  })
}

const blank: Array<[string, () => Record<string, unknown>]> = [
  ['name', () => businessEntity({ name: '   ' })],
  ['trading_name', () => businessEntity({ trading_name: '' })],
  ['first_name', () => personalEntity({ first_name: ' ' })],
  ['last_name', () => personalEntity({ last_name: '' })],
  ['phone_number', () => personalEntity({ phone_number: '' })],
  ['name', () => personalEntity({ name: '' })],
]
for (const [field, body] of blank) {
  test(`entities - create with blank ${field} is 400`, async () => {
    await expectRefused(body(), field)
  })
}

// Malformed bodies, below the SDK ---------------------------------------------------------

async function expectRawRefused(data: string | Uint8Array, type: string,
    field?: string): Promise<void> {
  const before = await stored()
  const reply = await rawRequest(tb, `svc.entity.${p.partnerId}.create`, data, { token: p.token })
  assert.equal(reply.code, 400)
  assert.equal(reply.headers['Nats-Service-Error-Code'], '400')
  assert.equal(reply.body.error.code, 400)
  assert.equal(reply.body.error.type, type)
  assert.equal(typeof reply.body.error.message, 'string')
  if (field) assert.deepEqual(reply.body.error.details.map((d: FieldIssue) => d.field), [field])
  assert.deepEqual(await stored(), before)
}

test('entities - create with malformed JSON is 400', async () => {
  await expectRawRefused('{"entity_type": "business",', 'invalid_json')
  await expectRawRefused('{nope', 'invalid_json')
  await expectRawRefused(`${JSON.stringify(businessEntity())} trailing`, 'invalid_json')
})

test('entities - create with bytes that are not UTF-8 is 400', async () => {
  await expectRawRefused(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 'invalid_json')
})

test('entities - create with a JSON array body is 400', async () => {
  await expectRawRefused(JSON.stringify([businessEntity()]), 'invalid_request', '(body)')
})

test('entities - create with a JSON null body is 400', async () => {
  await expectRawRefused('null', 'invalid_request', '(body)')
})

test('entities - create with a JSON number or string body is 400', async () => {
  await expectRawRefused('42', 'invalid_request', '(body)')
  await expectRawRefused('"business"', 'invalid_request', '(body)')
  await expectRawRefused('true', 'invalid_request', '(body)')
})

test('entities - create with an empty body is 400 naming entity_type', async () => {
  await expectRawRefused('', 'invalid_request', 'entity_type')
})

test('entities - create with a body over 64 KiB is 400 payload_too_large', async () => {
  const limit = tb.config.requestBytesMax
  assert.equal(limit, 65_536)
  const body = sizedBody(limit + 1)
  assert.equal(Buffer.byteLength(body), limit + 1)
  await expectRawRefused(body, 'payload_too_large', '(body)')
})

test('entities - create with a body of exactly 64 KiB is judged on its fields, not its size', async () => {
  const body = sizedBody(tb.config.requestBytesMax)
  assert.equal(Buffer.byteLength(body), tb.config.requestBytesMax)
  // The padding makes tax_number far too long, so the request fails on that field.
  await expectRawRefused(body, 'invalid_request', 'tax_number')
})

/** A business create body padded through tax_number to exactly `bytes` bytes. */
function sizedBody(bytes: number): string {
  const base = JSON.stringify(businessEntity({ tax_number: '' }))
  return JSON.stringify(businessEntity({ tax_number: 'x'.repeat(bytes - Buffer.byteLength(base)) }))
}

test('entities - several bad fields are all named in details', async () => {
  const before = await stored()
  const error = await expectApiError(
    p.client.entities.create(personalEntity({ email: 'nope', country: 'ZZZ', gender: 'x',
      first_name: undefined }) as never),
  )
  assert.equal(error.code, 400)
  const fields = (error.details as FieldIssue[]).map((d) => d.field).sort()
  assert.deepEqual(fields, ['country', 'email', 'first_name', 'gender'])
  assert.deepEqual(await stored(), before)
})

test('entities - a malformed date and a bad national id_number are both named', async () => {
  const before = await stored()
  const error = await expectApiError(p.client.entities.create(
    personalEntity({ date_of_birth: '15/01/1990', id_number: '1234567890123' }) as never))
  assert.equal(error.code, 400)
  assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field).sort(),
    ['date_of_birth', 'id_number'])
  assert.deepEqual(await stored(), before)
})
