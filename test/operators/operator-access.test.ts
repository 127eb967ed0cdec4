import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { BankClient, OperatorClient } from '../../src/client/index.ts'
import { contract } from '../../src/contract/index.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal } from '../support/assertions.ts'

// Who may use the ops.* subjects: only an operator credential. A partner's credential,
// however many permissions it holds, is refused (403); no credential at all is 401.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

// The operator subjects of issue 2; later capabilities add their own and test them.
const opsSubjects = [
  'ops.partner.create',
  'ops.partner.list',
  'ops.credential.create',
  'ops.credential.revoke',
  'ops.credential.list',
  'ops.entity.review',
  'ops.entity.list',
  'ops.user.kyc',
  'ops.account.list',
]

/**
 * One call of every ops operation through a client, with bodies that would otherwise succeed; each
 * made when invoked.
 */
function everyOperation(client: OperatorClient, partner: TestPartner, userId: string): Array<[
    string, () => Promise<unknown>]> {
  return [
    ['ops.partner.create', () => client.partners.create({ name: 'Rogue Ltd',
      email: 'r@rogue.example', registration_number: '202099999901', trading_name: 'Rogue' })],
    ['ops.partner.list', () => client.partners.list()],
    ['ops.credential.create', () => client.credentials.create({ partner_id: partner.partnerId,
      permissions: ['read'] })],
    ['ops.credential.revoke', () => client.credentials.revoke(
      { credential_id: partner.credentialId })],
    ['ops.credential.list', () => client.credentials.list({ partner_id: partner.partnerId })],
    ['ops.entity.review', () => client.entities.review({ entity_id: partner.rootEntityId,
      decision: 'reject', reason: 'nope' })],
    ['ops.entity.list', () => client.entities.list({ partner_id: partner.partnerId })],
    ['ops.user.kyc', () => client.users.kyc({ user_id: userId, status: 'approved' })],
    ['ops.account.list', () => client.accounts.list({ entity_id: partner.rootEntityId })],
  ]
}

test('operator access - the subjects tested here are operator subjects of the contract', () => {
  const operatorSubjects = new Set(Object.values(contract.operators).filter(
    (op) => op.permission === 'operator').map((op) => op.subject))
  for (const subject of opsSubjects) assert.ok(operatorSubjects.has(subject), subject)
  const covered = everyOperation(new OperatorClient({ connection: tb.nc, token: 'x' }), p,
    randomUUID()).map(([subject]) => subject)
  assert.deepEqual(covered, opsSubjects)
})

test('operator access - a partner credential with every permission → 403 on every ops subject, and nothing happens', async () => {
  const partner = await onboardPartner(tb)
  const { userId } = await p.client.users.create(userRequest(p.rootEntityId))
  const impostor = new OperatorClient({ connection: tb.nc, token: partner.token })
  const partnersBefore = await tb.operator.partners.list()
  for (const [, call] of everyOperation(impostor, partner, userId)) await expectRefusal(call(), 403)
  assert.deepEqual(await tb.operator.partners.list(), partnersBefore)
  // The partner's credential was not revoked, its root entity not rejected, the user not approved.
  await partner.client.entities.list()
  const { entities } = await tb.operator.entities.list({ partner_id: partner.partnerId })
  assert.equal(entities[0]!.review_status, 'pending')
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
})

test('operator access - no credential, an unknown one or a revoked one → 401 on every ops subject', async () => {
  for (const subject of opsSubjects) {
    const none = await rawRequest(tb, subject, '{}')
    assert.equal(none.code, 401, subject)
    assert.equal(none.body.error.type, 'unauthorized', subject)
    assert.equal(none.headers['Nats-Service-Error-Code'], '401')
    const unknown = await rawRequest(tb, subject, '{}', { token: `opk_${'B'.repeat(43)}` })
    assert.equal(unknown.code, 401, subject)
    const garbage = await rawRequest(tb, subject, '{}', { authorization: 'Bearer not-a-token' })
    assert.equal(garbage.code, 401, subject)
  }
  const partner = await onboardPartner(tb)
  const emptyToken = new OperatorClient({ connection: tb.nc, token: '' })
  for (const [, call] of everyOperation(emptyToken, partner, randomUUID())) await expectRefusal(
    call(), 401)
  // A revoked partner credential is a 401 here too: who you are is settled before what you may do.
  const issued = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'] })
  await tb.operator.credentials.revoke({ credential_id: issued.id })
  const revoked = new OperatorClient({ connection: tb.nc, token: issued.token })
  for (const [, call] of everyOperation(revoked, partner, randomUUID())) await expectRefusal(call(),
    401)
  await partner.client.entities.list()
})

test('operator access - a missing credential → 401 even when the body is malformed', async () => {
  for (const subject of opsSubjects) {
    const reply = await rawRequest(tb, subject, '{nope')
    assert.equal(reply.code, 401, subject)
  }
})

test('operator access - the operator credential is accepted as a Bearer authorization too', async () => {
  const reply = await rawRequest(tb, 'ops.partner.list', '{}',
    { authorization: `Bearer ${tb.operatorToken}` })
  assert.equal(reply.code, 200)
  assert.deepEqual(reply.body, await tb.operator.partners.list())
})

test('operator access - a malformed or non-object body → 400 on every ops subject', async () => {
  for (const subject of opsSubjects) {
    const malformed = await rawRequest(tb, subject, '{"partner_id":', { token: tb.operatorToken })
    assert.equal(malformed.code, 400, subject)
    assert.equal(malformed.body.error.type, 'invalid_json', subject)
    const array = await rawRequest(tb, subject, '[]', { token: tb.operatorToken })
    assert.equal(array.code, 400, subject)
    assert.deepEqual(array.body.error.details,
      [{ field: '(body)', message: 'must be a JSON object' }], subject)
  }
})

test('operator access - an operator credential on partner subjects → 403', async () => {
  const asOperator = new BankClient({ connection: tb.nc, token: tb.operatorToken,
    partnerId: p.partnerId })
  await expectRefusal(asOperator.entities.list(), 403)
  await expectRefusal(asOperator.entities.create(businessEntity()), 403)
  await expectRefusal(asOperator.users.list(), 403)
  await expectRefusal(asOperator.accounts.getByEntity({ entity_id: p.rootEntityId }), 403)
})

test('operator access - error replies carry the micro headers and the JSON error body', async () => {
  const reply = await rawRequest(tb, 'ops.credential.list',
    JSON.stringify({ partner_id: randomUUID() }), { token: tb.operatorToken })
  assert.equal(reply.code, 404)
  assert.equal(reply.headers['Nats-Service-Error-Code'], '404')
  assert.equal(typeof reply.headers['Nats-Service-Error'], 'string')
  assert.deepEqual(Object.keys(reply.body.error).sort(), ['code', 'details', 'message', 'type'])
  assert.equal(reply.body.error.code, 404)
  assert.equal(reply.body.error.type, 'not_found')
})
