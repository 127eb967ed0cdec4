import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { hashToken } from '../../src/auth/credential-store.ts'
import { credential_ttl_seconds_max } from '../../src/auth/credential-contract.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { clientFor, onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, iso, uuidPattern } from '../support/assertions.ts'
import { asCredentialCreate, partnerTokenPattern } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

const second = 1000
const minute = 60 * second

test('credential create - a read-only credential reads but may not write', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'], label: 'reporting' })
  assert.deepEqual(Object.keys(issued).sort(), ['id', 'token'])
  assert.match(issued.id, uuidPattern)
  assert.match(issued.token, partnerTokenPattern)
  const reader = clientFor(tb, p.partnerId, issued.token)
  assert.ok((await reader.entities.list()).entities.some((e) => e.id === p.rootEntityId))
  await reader.users.list()
  const before = await p.client.entities.list()
  await expectRefusal(reader.entities.create(businessEntity()), 403)
  await expectRefusal(reader.users.create(userRequest(p.rootEntityId)), 403)
  await expectRefusal(reader.accounts.create({ entity_id: p.rootEntityId }), 403)
  assert.deepEqual(await p.client.entities.list(), before)
})

test('credential create - a write-only credential writes but may not read', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['write'] })
  const writer = clientFor(tb, p.partnerId, issued.token)
  const { id } = await writer.entities.create(businessEntity())
  assert.match(id, uuidPattern)
  await expectRefusal(writer.entities.list(), 403)
  await expectRefusal(writer.entities.info({ entity_id: id }), 403)
})

test('credential create - permissions are stored once each, in canonical order, with label and no expiry', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['payments', 'read', 'read'] })
  const { credentials } = await tb.operator.credentials.list({ partner_id: p.partnerId })
  const listed = credentials.find((c) => c.id === issued.id)
  assert.deepEqual(listed, {
    id: issued.id,
    partner_id: p.partnerId,
    permissions: ['read', 'payments'],
    label: '',
    created_at: iso(tb.clock.now()),
    expires_at: null,
    revoked_at: null,
  })
})

test('credential create - each issue gives a new id and token', async () => {
  const a = await tb.operator.credentials.create({ partner_id: p.partnerId, permissions: ['read'] })
  const b = await tb.operator.credentials.create({ partner_id: p.partnerId, permissions: ['read'] })
  assert.notEqual(a.id, b.id)
  assert.notEqual(a.token, b.token)
})

test('credential create - invalid input → 400 naming the field; an unknown partner → 404', async () => {
  const before = await tb.operator.credentials.list({ partner_id: p.partnerId })
  const base = { partner_id: p.partnerId, permissions: ['read'] }
  const cases: Array<[string, Record<string, unknown>]> = [
    ['permissions', { permissions: [] }],
    ['permissions', { permissions: 'read' }],
    ['permissions.0', { permissions: ['admin'] }],
    ['permissions.1', { permissions: ['read', 'operator'] }],
    ['partner_id', { partner_id: 'partner-1' }],
    ['expires_in_seconds', { expires_in_seconds: 59 }],
    ['expires_in_seconds', { expires_in_seconds: 0 }],
    ['expires_in_seconds', { expires_in_seconds: -3600 }],
    ['expires_in_seconds', { expires_in_seconds: 90.5 }],
    ['expires_in_seconds', { expires_in_seconds: '3600' }],
    ['expires_in_seconds', { expires_in_seconds: credential_ttl_seconds_max + 1 }],
    ['label', { label: 'x'.repeat(101) }],
    ['role', { role: 'operator' }],
  ]
  for (const [field, overrides] of cases) {
    await expectRefusal(tb.operator.credentials.create(
      asCredentialCreate({ ...base, ...overrides })), 400, field)
  }
  await expectRefusal(tb.operator.credentials.create(asCredentialCreate({ permissions: ['read'] })),
    400, 'partner_id')
  await expectRefusal(tb.operator.credentials.create(
    asCredentialCreate({ partner_id: p.partnerId })), 400, 'permissions')
  await expectRefusal(tb.operator.credentials.create(
    { partner_id: randomUUID(), permissions: ['read'] }), 404)
  assert.deepEqual(await tb.operator.credentials.list({ partner_id: p.partnerId }), before)
})

test('credential create - expires_in_seconds at its limits: 60 and ten years are accepted', async () => {
  const shortest = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'], expires_in_seconds: 60 })
  const longest = await tb.operator.credentials.create({
    partner_id: p.partnerId,
    permissions: ['read'],
    expires_in_seconds: credential_ttl_seconds_max,
  })
  const { credentials } = await tb.operator.credentials.list({ partner_id: p.partnerId })
  const now = tb.clock.now().getTime()
  assert.equal(credentials.find((c) => c.id === shortest.id)?.expires_at,
    iso(new Date(now + 60 * second)))
  assert.equal(credentials.find((c) => c.id === longest.id)?.expires_at,
    iso(new Date(now + credential_ttl_seconds_max * second)))
})

test('credential create - an expiring token works until its expiry and → 401 from that instant', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'], expires_in_seconds: 3600 })
  const expiresAt = new Date(tb.clock.now().getTime() + 3600 * second)
  const { credentials } = await tb.operator.credentials.list({ partner_id: p.partnerId })
  assert.equal(credentials.find((c) => c.id === issued.id)?.expires_at, iso(expiresAt))

  const client = clientFor(tb, p.partnerId, issued.token)
  await client.users.list()
  tb.clock.advance(3600 * second - 1)
  await client.users.list()
  tb.clock.advance(1)
  await expectRefusal(client.users.list(), 401)
  tb.clock.advance(24 * 60 * minute)
  await expectRefusal(client.users.list(), 401)
  // The partner's credential without expiry is untouched.
  await p.client.users.list()
})

test('credential revoke - the token → 401 at once; other credentials keep working', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read', 'write'] })
  const spare = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const client = clientFor(tb, p.partnerId, issued.token)
  await client.users.list()

  tb.clock.advance(minute)
  const revoked = await tb.operator.credentials.revoke({ credential_id: issued.id })
  assert.equal(revoked.id, issued.id)
  assert.equal(revoked.partner_id, p.partnerId)
  assert.deepEqual(revoked.permissions, ['read', 'write'])
  assert.equal(revoked.revoked_at, iso(tb.clock.now()))
  assert.equal(revoked.expires_at, null)

  await expectRefusal(client.users.list(), 401)
  await expectRefusal(client.entities.create(businessEntity()), 401)
  await clientFor(tb, p.partnerId, spare.token).users.list()
  await p.client.users.list()
})

test('credential revoke - revoking twice is fine and keeps the first revocation time', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const first = await tb.operator.credentials.revoke({ credential_id: issued.id })
  tb.clock.advance(minute)
  const again = await tb.operator.credentials.revoke({ credential_id: issued.id })
  assert.deepEqual(again, first)
  assert.notEqual(again.revoked_at, iso(tb.clock.now()))
  await expectRefusal(clientFor(tb, p.partnerId, issued.token).users.list(), 401)
})

test('credential revoke - the onboarding credential can be revoked; a new one restores access', async () => {
  const partner = await onboardPartner(tb)
  await partner.client.entities.list()
  await tb.operator.credentials.revoke({ credential_id: partner.credentialId })
  await expectRefusal(partner.client.entities.list(), 401)
  const replacement = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read', 'write', 'payments'] })
  const { entities } = await clientFor(tb, partner.partnerId, replacement.token).entities.list()
  assert.deepEqual(entities.map((e) => e.id), [partner.rootEntityId])
})

test('credential revoke - unknown id → 404; missing or bad id → 400', async () => {
  await expectRefusal(tb.operator.credentials.revoke({ credential_id: randomUUID() }), 404)
  await expectRefusal(tb.operator.credentials.revoke({ credential_id: 'cred-1' }), 400,
    'credential_id')
  await expectRefusal(tb.operator.credentials.revoke({} as { credential_id: string }), 400,
    'credential_id')
})

test('credential list - only the partner\u2019s credentials, oldest first, never a token or a hash', async () => {
  const partner = await onboardPartner(tb)
  tb.clock.advance(minute)
  const a = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'], label: 'dashboard' })
  tb.clock.advance(minute)
  const b = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['payments'], expires_in_seconds: 86_400 })
  await tb.operator.credentials.revoke({ credential_id: a.id })
  const tokens = [partner.token, a.token, b.token]

  const reply = await tb.operator.credentials.list({ partner_id: partner.partnerId })
  assert.deepEqual(reply.credentials.map((c) => c.id), [partner.credentialId, a.id, b.id])
  for (const credential of reply.credentials) {
    assert.deepEqual(Object.keys(credential).sort(), ['created_at', 'expires_at', 'id', 'label',
      'partner_id', 'permissions', 'revoked_at'])
    assert.equal(credential.partner_id, partner.partnerId)
  }
  assert.equal(reply.credentials[1]!.label, 'dashboard')
  assert.equal(typeof reply.credentials[1]!.revoked_at, 'string')
  assert.equal(reply.credentials[2]!.revoked_at, null)
  assert.equal(typeof reply.credentials[2]!.expires_at, 'string')

  // Nothing in the reply looks like a token or a token's hash.
  const text = JSON.stringify(reply)
  assert.doesNotMatch(text, /(pbk|opk)_/)
  assert.doesNotMatch(text, /[0-9a-f]{64}/i)
  for (const token of tokens) {
    assert.ok(!text.includes(token))
    assert.ok(!text.includes(hashToken(token)))
  }
  const strings = text.match(/"[^"]*"/g)!.map((s) => s.slice(1, -1))
  for (const value of strings) assert.ok(value.length < 43,
    `a long value in the credential list: ${value}`)

  // Another partner's credentials and the operator's are not listed.
  const otherIds = (await tb.operator.credentials.list(
    { partner_id: other.partnerId })).credentials.map((c) => c.id)
  assert.deepEqual(otherIds, [other.credentialId])
})

test('credential list - unknown partner → 404; bad partner_id → 400', async () => {
  await expectRefusal(tb.operator.credentials.list({ partner_id: randomUUID() }), 404)
  await expectRefusal(tb.operator.credentials.list({ partner_id: 'acme' }), 400, 'partner_id')
  await expectRefusal(tb.operator.credentials.list({} as { partner_id: string }), 400, 'partner_id')
})
