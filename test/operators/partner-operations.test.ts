import assert from 'node:assert/strict'
import { test } from 'node:test'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { clientFor, rawRequest, useTestBank } from '../support/harness.ts'
import { expectRefusal, iso, uuidPattern } from '../support/assertions.ts'
import { asPartnerCreate, partnerTokenPattern } from './helpers.ts'

const tb = useTestBank()

const minute = 60_000

function partnerRequest(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Umoya Payments (Pty) Ltd',
    email: 'ops@umoya.example',
    registration_number: registrationNumber(),
    trading_name: 'Umoya',
    ...overrides,
  }
}

test('partner create - returns the partner, its root entity, a one-time credential and its webhook signing secret', async () => {
  const created = await tb.operator.partners.create(partnerRequest())
  assert.deepEqual(Object.keys(created).sort(), ['credential', 'nats_creds', 'partner_id',
    'root_entity_id', 'webhook_secret'])
  // Standard Webhooks: `whsec_` and the base64 of 32 random bytes.
  assert.match(created.webhook_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.match(created.partner_id, uuidPattern)
  assert.match(created.root_entity_id, uuidPattern)
  assert.notEqual(created.partner_id, created.root_entity_id)
  assert.deepEqual(Object.keys(created.credential).sort(), ['id', 'token'])
  assert.match(created.credential.id, uuidPattern)
  assert.match(created.credential.token, partnerTokenPattern)
})

test('partner create - the root entity is a business pending KYB, with no account yet', async () => {
  const request = partnerRequest({ name: 'Kwezi Capital (Pty) Ltd', trading_name: 'Kwezi',
    email: 'bank@kwezi.example' })
  const created = await tb.operator.partners.create(request)
  const partner = clientFor(tb, created.partner_id, created.credential.token)

  const info = await partner.entities.info({ entity_id: created.root_entity_id })
  assert.equal(info.entity_type, 'business')
  assert.equal(info.approved, false)
  assert.equal(info.name, 'Kwezi Capital (Pty) Ltd')
  assert.equal(info.email, 'bank@kwezi.example')
  assert.equal(info.entity_type === 'business' && info.trading_name, 'Kwezi')
  assert.equal(info.date_created, iso(tb.clock.now()))

  const { entities } = await tb.operator.entities.list({ partner_id: created.partner_id })
  assert.equal(entities.length, 1)
  assert.equal(entities[0]!.id, created.root_entity_id)
  assert.equal(entities[0]!.is_root, true)
  assert.equal(entities[0]!.review_status, 'pending')
  assert.equal(entities[0]!.registration_number, request.registration_number)
  assert.equal(entities[0]!.partner_id, created.partner_id)

  assert.deepEqual(
    (await tb.operator.accounts.list({ entity_id: created.root_entity_id })).accounts, [])
  await expectRefusal(partner.accounts.create({ entity_id: created.root_entity_id }), 400,
    'entity_id')
})

test('partner create - the first credential has read, write and payments and works at once', async () => {
  const created = await tb.operator.partners.create(partnerRequest())
  const partner = clientFor(tb, created.partner_id, created.credential.token)

  const { credentials } = await tb.operator.credentials.list({ partner_id: created.partner_id })
  assert.equal(credentials.length, 1)
  assert.deepEqual(credentials[0], {
    id: created.credential.id,
    partner_id: created.partner_id,
    permissions: ['read', 'write', 'payments'],
    label: 'onboarding',
    created_at: iso(tb.clock.now()),
    expires_at: null,
    revoked_at: null,
  })

  // read
  const listed = await partner.entities.list()
  assert.deepEqual(listed.entities.map((e) => e.id), [created.root_entity_id])
  // write
  const { id: entityId } = await partner.entities.create(businessEntity())
  const { userId } = await partner.users.create(userRequest(created.root_entity_id))
  assert.equal((await partner.users.get({ user_id: userId })).user.entity_id,
    created.root_entity_id)
  assert.equal((await partner.entities.info({ entity_id: entityId })).approved, false)
})

test('partner create - the country defaults to ZAF and a given one is kept (it becomes the accounts\u2019 country)', async () => {
  const defaulted = await tb.operator.partners.create(partnerRequest())
  await tb.operator.entities.review({ entity_id: defaulted.root_entity_id, decision: 'approve' })
  const a = await clientFor(tb, defaulted.partner_id, defaulted.credential.token).accounts.create(
    { entity_id: defaulted.root_entity_id })
  assert.equal(a.country, 'ZAF')

  const botswana = await tb.operator.partners.create(partnerRequest({ country: 'BWA' }))
  await tb.operator.entities.review({ entity_id: botswana.root_entity_id, decision: 'approve' })
  const b = await clientFor(tb, botswana.partner_id, botswana.credential.token).accounts.create(
    { entity_id: botswana.root_entity_id })
  assert.equal(b.country, 'BWA')
})

test('partner create - a registration number already onboarded → 409, and nothing is stored', async () => {
  const registration = registrationNumber()
  const first = await tb.operator.partners.create(
    partnerRequest({ registration_number: registration }))
  const before = await tb.operator.partners.list()
  await expectRefusal(tb.operator.partners.create(
    partnerRequest({ registration_number: registration, name: 'Copycat Ltd' })), 409)
  assert.deepEqual(await tb.operator.partners.list(), before)
  assert.equal((await tb.operator.entities.list({ partner_id: first.partner_id })).entities.length,
    1)
})

test('partner create - invalid input → 400 naming the field, and nothing is stored', async () => {
  const before = await tb.operator.partners.list()
  const cases: Array<[string, Record<string, unknown>]> = [
    ['name', { name: undefined }],
    ['name', { name: '' }],
    ['name', { name: '   ' }],
    ['email', { email: undefined }],
    ['email', { email: 'ops-at-umoya' }],
    ['registration_number', { registration_number: undefined }],
    ['registration_number', { registration_number: '20201234567' }],
    ['registration_number', { registration_number: '2020123456789' }],
    ['registration_number', { registration_number: '2020/123456/7' }],
    ['registration_number', { registration_number: '2020-123456-07' }],
    ['registration_number', { registration_number: 202012345607 }],
    ['trading_name', { trading_name: undefined }],
    ['trading_name', { trading_name: '' }],
    ['country', { country: 'ZA' }],
    ['country', { country: 'zaf' }],
    ['website', { website: 'https://umoya.example' }],
  ]
  for (const [field, overrides] of cases) {
    const body: Record<string, unknown> = { ...partnerRequest(), ...overrides }
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
    await expectRefusal(tb.operator.partners.create(asPartnerCreate(body)), 400, field)
  }
  assert.deepEqual(await tb.operator.partners.list(), before)
})

test('partner list - every partner, oldest first, with its root entity', async () => {
  const before = await tb.operator.partners.list()
  tb.clock.advance(minute)
  const first = await tb.operator.partners.create(
    partnerRequest({ name: 'Alpha Ltd', email: 'a@alpha.example' }))
  const firstAt = iso(tb.clock.now())
  tb.clock.advance(minute)
  const second = await tb.operator.partners.create(
    partnerRequest({ name: 'Beta Ltd', email: 'b@beta.example' }))
  const secondAt = iso(tb.clock.now())

  const { partners } = await tb.operator.partners.list()
  assert.deepEqual(partners.slice(0, before.partners.length), before.partners)
  assert.deepEqual(partners.slice(before.partners.length), [
    { partner_id: first.partner_id, name: 'Alpha Ltd', email: 'a@alpha.example',
      root_entity_id: first.root_entity_id, created_at: firstAt },
    { partner_id: second.partner_id, name: 'Beta Ltd', email: 'b@beta.example',
      root_entity_id: second.root_entity_id, created_at: secondAt },
  ])
  const ids = partners.map((p) => p.partner_id)
  assert.equal(new Set(ids).size, ids.length)
})

test('partner list - takes an empty body; a field in it → 400', async () => {
  const empty = await rawRequest(tb, 'ops.partner.list', '', { token: tb.operatorToken })
  assert.equal(empty.code, 200)
  assert.deepEqual(empty.body, await tb.operator.partners.list())
  const extra = await rawRequest(tb, 'ops.partner.list', JSON.stringify({ partner_id: 'all' }),
    { token: tb.operatorToken })
  assert.equal(extra.code, 400)
  assert.deepEqual(extra.body.error.details,
    [{ field: 'partner_id', message: 'is not a known field' }])
})
