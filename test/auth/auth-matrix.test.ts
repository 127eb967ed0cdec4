import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { allOperations, permissions, type Permission } from '../../src/contract/index.ts'
import { onboardPartner, type RawReply, type TestPartner, useTestBank } from '../support/harness.ts'
import { assertErrorReply, assertSuccessReply } from '../transport/error-reply.ts'
import {
  operatorOperations,
  partnerOperations,
  fixtureBankEnv,
  prepareFixture,
  rightfulToken,
  sampledOperationNames,
  send,
  validBody,
  withRandomIds,
  type OperationFixture,
} from '../transport/operation-bodies.ts'

// The authentication and authorization matrix of docs/guides/wire-conventions.md
// ("Authentication", "Permissions", "Tenancy"), driven by the endpoint table: every
// operation, every way a caller can fail to prove who it is or what it may do.

// With the NATS authority (the partners' NATS operations need it), sending as the bank's own tools
// do.
const tb = useTestBank({ natsAuthority: 'bank', env: fixtureBankEnv })
let f: OperationFixture
let other: TestPartner

before(async () => {
  await tb.ready
  f = await prepareFixture(tb)
  other = await onboardPartner(tb, { approve: true })
  // Every permission, so that its token is refused on the victim's subjects for tenancy alone.
  const every = { partner_id: other.partnerId, permissions: [...permissions] }
  const all = await tb.operator.credentials.create(every)
  other = { ...other, token: all.token }
})

/** Every id a refused caller must not learn anything about. */
function secretsOf(body: Record<string, unknown>): string[] {
  const ids = Object.values(body).filter((v): v is string => typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v))
  return [...ids, f.partner.partnerId, f.partner.rootEntityId, f.userId, f.accountId]
}

function assertLeaksNothing(reply: RawReply, secrets: string[], context: string): void {
  const text = JSON.stringify(reply.body) + JSON.stringify(reply.headers)
  for (const secret of secrets) assert.ok(!text.includes(secret),
    `${context}: the refusal mentions ${secret}: ${text}`)
}

/** Two refusals must be identical: same code, headers and body. */
function assertSameReply(a: RawReply, b: RawReply, context: string): void {
  assert.deepEqual(b, a, `${context}: a refusal differs with the resource named`)
}

async function issue(perms: Permission[], extra: { expires_in_seconds?: number } = {}) {
  return tb.operator.credentials.create({ partner_id: f.partner.partnerId, permissions: perms,
    ...extra })
}

test('auth - every operation of the endpoint table has a sample body', () => {
  const missing = allOperations().filter((op) => !sampledOperationNames.includes(op.name))
  assert.deepEqual(missing.map((op) => op.name), [])
  assert.ok(partnerOperations().length > 0 && operatorOperations().length > 0)
})

test('auth - the token header with the rightful credential is accepted on every operation', async () => {
  for (const op of allOperations()) {
    assertSuccessReply(await send(f, op, validBody(op, f), { token: rightfulToken(op, f) }),
      op.name)
  }
})

test('auth - Authorization: Bearer <credential> is accepted on every operation', async () => {
  for (const op of allOperations()) {
    const reply = await send(f, op, validBody(op, f),
      { authorization: `Bearer ${rightfulToken(op, f)}` })
    assertSuccessReply(reply, op.name)
  }
})

test('auth - a request without a token is refused with 401 on every operation', async () => {
  let first: RawReply | undefined
  for (const op of allOperations()) {
    const body = validBody(op, f)
    const reply = await send(f, op, body, {})
    assertErrorReply(reply, 401, 'unauthorized', op.name)
    assertLeaksNothing(reply, secretsOf(body), op.name)
    // One 401 for every operation: it cannot tell a caller which subjects or ids exist.
    first ??= reply
    assert.deepEqual(reply, first, op.name)
  }
})

test('auth - a garbage or tampered token is refused with 401 on every operation', async () => {
  const valid = f.partner.token
  const lastChar = valid.at(-1) === 'A' ? 'B' : 'A'
  const garbage = [
    'garbage',
    `pbk_${randomBytes(32).toString('base64url')}`,
    `opk_${randomBytes(32).toString('base64url')}`,
    `${valid.slice(0, -1)}${lastChar}`,
    `${valid}x`,
    valid.slice(0, -1),
    `pbk_${tb.operatorToken.slice(4)}`,
    `opk_${valid.slice(4)}`,
    `Bearer ${valid}`,
    'x'.repeat(4000),
    "' or 1=1 --",
  ]
  for (const op of allOperations()) {
    const body = validBody(op, f)
    for (const token of garbage) {
      const reply = await send(f, op, body, { token })
      assertErrorReply(reply, 401, 'unauthorized', `${op.name} with token ${token.slice(0, 20)}`)
      assertLeaksNothing(reply, secretsOf(body), op.name)
    }
  }
})

test('auth - a malformed Authorization header is refused with 401 on every operation', async () => {
  const valid = f.partner.token
  const malformed = [
    'Bearer',
    'Bearer ',
    `Bearer${valid}`,
    `Basic ${valid}`,
    `Token ${valid}`,
    valid,
    `Bearer ${valid} ${valid}`,
    `Bearer ${valid}x`,
    `Bearer "${valid}"`,
    'Bearer garbage',
  ]
  for (const op of allOperations()) {
    const body = validBody(op, f)
    for (const authorization of malformed) {
      const reply = await send(f, op, body, { authorization })
      assertErrorReply(reply, 401, 'unauthorized',
        `${op.name} with Authorization ${authorization.slice(0, 20)}`)
      assertLeaksNothing(reply, secretsOf(body), op.name)
    }
  }
})

test('auth - a revoked credential is refused with 401 on every operation', async () => {
  const credential = await issue([...permissions])
  const probe = partnerOperations()[0]!
  assertSuccessReply(await send(f, probe, validBody(probe, f), { token: credential.token }),
    'before revocation')
  await tb.operator.credentials.revoke({ credential_id: credential.id })
  for (const op of allOperations()) {
    const reply = await send(f, op, validBody(op, f), { token: credential.token })
    assertErrorReply(reply, 401, 'unauthorized', op.name)
    const viaBearer = await send(f, op, validBody(op, f),
      { authorization: `Bearer ${credential.token}` })
    assertErrorReply(viaBearer, 401, 'unauthorized', `${op.name} (Bearer)`)
  }
  // The partner's other credentials are untouched.
  assertSuccessReply(await send(f, probe, validBody(probe, f), { token: f.partner.token }),
    'another credential')
})

test('auth - an expired credential is refused with 401 on every operation', async () => {
  const credential = await issue([...permissions], { expires_in_seconds: 60 })
  tb.clock.advance(59_000)
  for (const op of partnerOperations()) {
    assertSuccessReply(await send(f, op, validBody(op, f), { token: credential.token }),
      `${op.name} before expiry`)
  }
  tb.clock.advance(2_000)
  for (const op of allOperations()) {
    assertErrorReply(await send(f, op, validBody(op, f), { token: credential.token }), 401,
      'unauthorized', op.name)
  }
  // A credential without an expiry is unaffected by time.
  for (const op of partnerOperations()) {
    const token = rightfulToken(op, f)
    assertSuccessReply(await send(f, op, validBody(op, f), { token }),
      `${op.name} unexpiring credential`)
  }
})

test("auth - another partner's token on a partner's subject is refused with 403 and learns nothing", async () => {
  const strangerSubject = randomUUID()
  for (const op of partnerOperations()) {
    const body = validBody(op, f)
    const onVictim = await send(f, op, body, { token: other.token })
    assertErrorReply(onVictim, 403, 'forbidden', op.name)
    assertLeaksNothing(onVictim, secretsOf(body), op.name)
    assertSameReply(onVictim, await send(f, op, withRandomIds(body), { token: other.token }),
      `${op.name} random ids`)
    assertSameReply(onVictim, await send(f, op, body, { token: other.token }, strangerSubject),
      `${op.name} unknown partner`)
    assertSameReply(onVictim, await send(f, op, body, { token: other.token }, 'not-a-uuid'),
      `${op.name} non-uuid subject`)
    assertSameReply(
      onVictim,
      await send(f, op, body, { token: other.token }, f.partner.partnerId.toUpperCase()),
      `${op.name} upper-case partner id`,
    )
    // The same token works on its own subject, so the 403 above is about tenancy only.
    assert.notEqual((await send(f, op, withRandomIds(validBody(op, f)), { token: other.token },
      other.partnerId)).code, 403, op.name)
  }
})

test("auth - a credential lacking the operation's permission is refused with 403", async () => {
  const single = new Map<Permission, string>()
  for (const permission of permissions) single.set(permission, (await issue([permission])).token)
  for (const op of partnerOperations()) {
    for (const [permission, token] of single) {
      const body = validBody(op, f)
      const reply = await send(f, op, body, { token })
      if (permission === op.permission) {
        assertSuccessReply(reply, `${op.name} with ${permission}`)
        continue
      }
      assertErrorReply(reply, 403, 'forbidden', `${op.name} with only ${permission}`)
      assertLeaksNothing(reply, secretsOf(body).filter((id) => id !== f.partner.partnerId), op.name)
      assertSameReply(reply, await send(f, op, withRandomIds(body), { token }),
        `${op.name} with only ${permission}`)
    }
  }
})

test('auth - a partner credential is refused with 403 on every ops. subject', async () => {
  const tokens = [f.partner.token, other.token]
  for (const permission of permissions) tokens.push((await issue([permission])).token)
  for (const op of operatorOperations()) {
    assert.ok(op.subject.startsWith('ops.'), op.subject)
    const body = validBody(op, f)
    for (const token of tokens) {
      const reply = await send(f, op, body, { token })
      assertErrorReply(reply, 403, 'forbidden', op.name)
      assertLeaksNothing(reply, secretsOf(body), op.name)
      assertSameReply(reply, await send(f, op, withRandomIds(body), { token }), op.name)
    }
  }
})

test('auth - an operator credential is refused with 403 on every svc. subject', async () => {
  for (const op of partnerOperations()) {
    assert.ok(op.subject.startsWith('svc.'), op.subject)
    const body = validBody(op, f)
    const reply = await send(f, op, body, { token: tb.operatorToken })
    assertErrorReply(reply, 403, 'forbidden', op.name)
    assertLeaksNothing(reply, secretsOf(body), op.name)
    assertSameReply(reply, await send(f, op, withRandomIds(body), { token: tb.operatorToken }),
      op.name)
    const bearer = await send(f, op, body, { authorization: `Bearer ${tb.operatorToken}` })
    assertErrorReply(bearer, 403, 'forbidden', `${op.name} (Bearer)`)
  }
})

test('auth - refusals do not change anything', async () => {
  const snapshot = async () => ({
    entities: await f.partner.client.entities.list(),
    root: await f.partner.client.entities.info({ entity_id: f.partner.rootEntityId }),
    users: await f.partner.client.users.list(),
    accounts: await f.partner.client.accounts.getByEntity({ entity_id: f.partner.rootEntityId }),
    details: await f.partner.client.accounts.getDetails({ account_id: f.accountId }),
    transactions: await f.partner.client.accounts.listTransactions(
      { account_id: f.accountId, limit: 1000 }),
  })
  const before = await snapshot()
  const readOnly = (await issue(['read'])).token
  // Every operation that changes something: writes and payments.
  const writes = partnerOperations().filter((op) => op.permission !== 'read')
  assert.ok(writes.length > 0)
  for (const op of writes) {
    for (const auth of [{}, { token: readOnly }, { token: other.token },
        { token: tb.operatorToken }]) {
      const reply = await send(f, op, validBody(op, f), auth)
      assert.ok(reply.code === 401 || reply.code === 403, `${op.name}: ${reply.code}`)
    }
  }
  assert.deepEqual(await snapshot(), before)
})
