import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal } from '../support/assertions.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'

// ops.console.sign_in and ops.console.sign_out: the console's sign-ins and sign-outs in the
// audit trail, under the operator's own credential, paired by the console's session id.
// An operator credential is required; bad input is refused and leaves no row.

const tb = useTestBank()
let partner: TestPartner

before(async () => {
  await tb.ready
  partner = await onboardPartner(tb)
})

test('console sessions - a sign-in and a sign-out each leave an audit row under the operator', async () => {
  const session = randomUUID()
  const operator = await operatorCredentialId(tb)
  const signedIn = await tb.operator.console.signIn({ session_id: session, address: '127.0.0.1' })
  assert.equal(signedIn.credential_id, operator)
  assert.equal(signedIn.name, 'bootstrap')
  await tb.operator.console.signOut({ session_id: session, reason: 'signed_out' })
  const { entries } = await tb.operator.audit.list({ target: session })
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor, e.actor_name, e.result]),
    [
      ['console.sign_out', operator, 'bootstrap', 'ok'],
      ['console.sign_in', operator, 'bootstrap', 'ok'],
    ],
  )
  assert.deepEqual(entries[1]!.details, { session_id: session, address: '127.0.0.1' })
  assert.deepEqual(entries[0]!.details, { session_id: session, reason: 'signed_out' })
  assert.ok(entries[1]!.targets.includes(operator), 'the credential is a target')
  const { ok } = await tb.operator.ledger.verify({})
  assert.equal(ok, true, 'the audit chain holds')
})

test('console sessions - a partner credential is refused and leaves no row; bad input is a 400', async () => {
  const before = (await tb.operator.audit.list({})).entries.length
  const session = randomUUID()
  const refused = await rawRequest(
    tb,
    'ops.console.sign_in',
    JSON.stringify({ session_id: session }),
    { token: partner.token },
  )
  assert.equal(refused.code, 403)
  const unknown = await rawRequest(
    tb,
    'ops.console.sign_in',
    JSON.stringify({ session_id: session }),
    {
      token: 'not-a-credential',
    },
  )
  assert.equal(unknown.code, 401)
  assert.deepEqual((await tb.operator.audit.list({ target: session })).entries, [])
  assert.equal((await tb.operator.audit.list({})).entries.length, before)
  await expectRefusal(tb.operator.console.signIn({ session_id: 'nope' }), 400, 'session_id')
  await expectRefusal(
    tb.operator.console.signOut({ session_id: session, reason: 'bored' as 'expired' }),
    400,
    'reason',
  )
  const extra = await rawRequest(
    tb,
    'ops.console.sign_in',
    JSON.stringify({ session_id: session, token: 'x' }),
    { token: tb.operatorToken },
  )
  assert.equal(extra.code, 400)
})
