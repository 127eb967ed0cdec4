import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import type { BankApiError } from '../../src/client/index.ts'
import { clientFor, onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity } from '../support/fixtures.ts'
import { errorBody, expectApiError, type FieldIssue } from '../support/assertions.ts'

// Tenancy: another partner's entity or account is answered exactly as a missing
// one (404); nothing about it leaks. Also the 400s of the account operations, and their
// permissions (write for create, read for the two reads).

const tb = useTestBank()
let p: TestPartner
let other: TestPartner
let theirEntity: string
let theirAccount: { account_id: string; account_number: string }
let mineEntity: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  theirEntity = (await other.client.entities.create(businessEntity())).id
  await tb.operator.entities.review({ entity_id: theirEntity, decision: 'approve' })
  theirAccount = await other.client.accounts.create({ entity_id: theirEntity })
  mineEntity = (await p.client.entities.create(businessEntity())).id
  await tb.operator.entities.review({ entity_id: mineEntity, decision: 'approve' })
})

function mustNotLeak(error: BankApiError): void {
  const text = JSON.stringify(errorBody(error))
  for (const secret of [theirEntity, theirAccount.account_id, theirAccount.account_number,
      other.partnerId]) {
    assert.ok(!text.includes(secret), `${text} leaks ${secret}`)
  }
}

test("accounts - create for another partner's entity is 404 like a missing one and creates nothing", async () => {
  const theirsBefore = await other.client.accounts.getByEntity({ entity_id: theirEntity })
  const missing =
    errorBody(await expectApiError(p.client.accounts.create({ entity_id: randomUUID() })))
  assert.equal(missing.code, 404)
  assert.equal(missing.type, 'not_found')
  for (const entityId of [theirEntity, other.rootEntityId]) {
    const error = await expectApiError(p.client.accounts.create({ entity_id: entityId }))
    assert.deepEqual(errorBody(error), missing)
    mustNotLeak(error)
  }
  assert.deepEqual(await other.client.accounts.getByEntity({ entity_id: theirEntity }),
    theirsBefore)
})

test("accounts - get_by_entity of another partner's entity is 404 like a missing one", async () => {
  const missing =
    errorBody(await expectApiError(p.client.accounts.getByEntity({ entity_id: randomUUID() })))
  assert.equal(missing.code, 404)
  for (const entityId of [theirEntity, other.rootEntityId]) {
    const error = await expectApiError(p.client.accounts.getByEntity({ entity_id: entityId }))
    assert.deepEqual(errorBody(error), missing)
    mustNotLeak(error)
  }
})

test("accounts - get_details of another partner's account is 404 like a missing one", async () => {
  const missing =
    errorBody(await expectApiError(p.client.accounts.getDetails({ account_id: randomUUID() })))
  assert.equal(missing.code, 404)
  assert.equal(missing.type, 'not_found')
  const error =
    await expectApiError(p.client.accounts.getDetails({ account_id: theirAccount.account_id }))
  assert.deepEqual(errorBody(error), missing)
  mustNotLeak(error)

  const subject = `svc.account.${p.partnerId}.get_details`
  const rawMissing = await rawRequest(tb, subject, JSON.stringify({ account_id: randomUUID() }),
    { token: p.token })
  const rawTheirs = await rawRequest(tb, subject,
    JSON.stringify({ account_id: theirAccount.account_id }), { token: p.token })
  assert.deepEqual(rawTheirs.body, rawMissing.body)
  assert.deepEqual(rawTheirs.headers, rawMissing.headers)
})

test("accounts - an entity id is not an account id and an account id is not an entity id", async () => {
  const [mine] = (await p.client.accounts.getByEntity({ entity_id: mineEntity })).accounts
  assert.ok(mine)
  assert.equal(
    (await expectApiError(p.client.accounts.getDetails({ account_id: mineEntity }))).code, 404)
  assert.equal(
    (await expectApiError(p.client.accounts.getByEntity({ entity_id: mine.account_id }))).code, 404)
  assert.equal(
    (await expectApiError(p.client.accounts.create({ entity_id: mine.account_id }))).code, 404)
})

test('accounts - a subject naming another partner is 403 and creates nothing', async () => {
  const intruder = clientFor(tb, other.partnerId, p.token)
  const theirsBefore = await other.client.accounts.getByEntity({ entity_id: theirEntity })
  for (const call of [
    intruder.accounts.create({ entity_id: theirEntity }),
    intruder.accounts.getByEntity({ entity_id: theirEntity }),
    intruder.accounts.getDetails({ account_id: theirAccount.account_id }),
  ]) {
    const error = await expectApiError(call)
    assert.equal(error.code, 403)
    mustNotLeak(error)
  }
  assert.deepEqual(await other.client.accounts.getByEntity({ entity_id: theirEntity }),
    theirsBefore)
})

test('accounts - a read-only credential may read accounts but not create them', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const reader = clientFor(tb, p.partnerId, issued.token)
  const before = await p.client.accounts.getByEntity({ entity_id: mineEntity })
  assert.deepEqual(await reader.accounts.getByEntity({ entity_id: mineEntity }), before)
  assert.equal(
    (await reader.accounts.getDetails({ account_id: before.accounts[0]!.account_id })).balance, '0')
  assert.equal((await expectApiError(reader.accounts.create({ entity_id: mineEntity }))).code, 403)
  assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: mineEntity }), before)
})

test('accounts - a write-only credential may create accounts but not read them', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['write'] })
  const writer = clientFor(tb, p.partnerId, issued.token)
  const created = await writer.accounts.create({ entity_id: mineEntity })
  assert.equal(created.entity_id, mineEntity)
  assert.equal((await expectApiError(writer.accounts.getByEntity({ entity_id: mineEntity }))).code,
    403)
  assert.equal((
    await expectApiError(writer.accounts.getDetails({ account_id: created.account_id }))).code, 403)
})

// Validation ------------------------------------------------------------------------------

const badEntityRequests: Array<[string, unknown, string]> = [
  ['an empty body', {}, 'entity_id'],
  ['entity_id not a uuid', { entity_id: 'abc' }, 'entity_id'],
  ['entity_id as a number', { entity_id: 7 }, 'entity_id'],
  ['entity_id as null', { entity_id: null }, 'entity_id'],
  ['an unknown field', { entity_id: '00000000-0000-4000-8000-000000000000', currency: 'USD' },
    'currency'],
]
for (const [label, request, field] of badEntityRequests) {
  test(`accounts - create with ${label} is 400 and creates nothing`, async () => {
    const before = await p.client.accounts.getByEntity({ entity_id: mineEntity })
    const error = await expectApiError(p.client.accounts.create(request as never))
    assert.equal(error.code, 400)
    assert.equal(error.type, 'invalid_request')
    assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), [field])
    assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: mineEntity }), before)
  })

  test(`accounts - get_by_entity with ${label} is 400`, async () => {
    const error = await expectApiError(p.client.accounts.getByEntity(request as never))
    assert.equal(error.code, 400)
    assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), [field])
  })
}

test('accounts - create cannot set metadata (unknown field) and creates nothing', async () => {
  const before = await p.client.accounts.getByEntity({ entity_id: mineEntity })
  const error = await expectApiError(
    p.client.accounts.create({ entity_id: mineEntity, metadata: { kind: 'pool' } } as never))
  assert.equal(error.code, 400)
  assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), ['metadata'])
  assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: mineEntity }), before)
})

for (const [label, request, field] of [
  ['an empty body', {}, 'account_id'],
  ['account_id not a uuid', { account_id: '123456789' }, 'account_id'],
  ['account_id as a number', { account_id: 123456789 }, 'account_id'],
  ['an unknown field', { account_id: '00000000-0000-4000-8000-000000000000',
    entity_id: '00000000-0000-4000-8000-000000000000' }, 'entity_id'],
] as Array<[string, unknown, string]>) {
  test(`accounts - get_details with ${label} is 400`, async () => {
    const error = await expectApiError(p.client.accounts.getDetails(request as never))
    assert.equal(error.code, 400)
    assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), [field])
  })
}

test('accounts - get_details by account number instead of id is 400', async () => {
  const [mine] = (await p.client.accounts.getByEntity({ entity_id: mineEntity })).accounts
  const error =
    await expectApiError(p.client.accounts.getDetails({ account_id: mine!.account_number }))
  assert.equal(error.code, 400)
})

test('accounts - create with malformed bodies is 400 and creates nothing', async () => {
  const subject = `svc.account.${p.partnerId}.create`
  const before = await p.client.accounts.getByEntity({ entity_id: mineEntity })
  const cases: Array<[string, string]> = [
    [`{"entity_id":"${mineEntity}"`, 'invalid_json'],
    [JSON.stringify([{ entity_id: mineEntity }]), 'invalid_request'],
    ['null', 'invalid_request'],
    ['12', 'invalid_request'],
    [JSON.stringify(mineEntity), 'invalid_request'],
  ]
  for (const [data, type] of cases) {
    const reply = await rawRequest(tb, subject, data, { token: p.token })
    assert.equal(reply.code, 400, data)
    assert.equal(reply.body.error.type, type, data)
  }
  const oversized =
    JSON.stringify({ entity_id: mineEntity, padding: 'x'.repeat(tb.config.requestBytesMax) })
  const big = await rawRequest(tb, subject, oversized, { token: p.token })
  assert.equal(big.code, 400)
  assert.equal(big.body.error.type, 'payload_too_large')
  assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: mineEntity }), before)
})
