import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { BankApiError } from '../../src/client/index.ts'
import { ConsoleSessions } from '../../src/console/console-sessions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'

// The console's sessions against a real bank (no browser): every way a session ends leaves
// its `console.sign_out` row under the operator, paired with the sign-in's by the session
// id, except a refused sign-in, which leaves none. The sessions' clock is the test's, so that
// idleness is a number, not a wait.

const tb = useTestBank()
let partner: TestPartner
let now = 0
const clock = () => now

before(async () => {
  await tb.ready
  partner = await onboardPartner(tb)
})

async function signOutReasons(): Promise<Map<string, string>> {
  const { entries } = await tb.operator.audit.list({ action: 'console.sign_out' })
  for (const e of entries) assert.equal(e.actor, await operatorCredentialId(tb))
  return new Map(entries.map((e) => [String(e.details.session_id), String(e.details.reason)]))
}

/** Waits for a sign-out the sessions sent without waiting for it (an expiry noticed on use). */
async function reasonOf(sessionId: string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    const reason = (await signOutReasons()).get(sessionId)
    if (reason) return reason
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return undefined
}

test('console sessions - expired, replaced and stopped sessions each leave their sign-out row', async () => {
  const limits = { idleMs: 1_000, maxMs: 10_000, countMax: 2 }
  const sessions = new ConsoleSessions(tb.nc, limits, 120_000, clock)
  const idle = await sessions.signIn(tb.operatorToken, '127.0.0.1')
  now += 1_001
  assert.equal(sessions.get(idle.id), undefined, 'idle too long')
  assert.equal(await reasonOf(idle.auditId), 'expired')
  const first = await sessions.signIn(tb.operatorToken)
  const second = await sessions.signIn(tb.operatorToken)
  const third = await sessions.signIn(tb.operatorToken)
  assert.equal(await reasonOf(first.auditId), 'replaced', 'the oldest, at the limit of two')
  assert.ok(sessions.get(second.id) && sessions.get(third.id))
  await sessions.end(second.id, 'signed_out')
  await sessions.endAll()
  const reasons = await signOutReasons()
  assert.equal(reasons.get(second.auditId), 'signed_out')
  assert.equal(reasons.get(third.auditId), 'console_stopped')
  const signIns = (await tb.operator.audit.list({ action: 'console.sign_in' })).entries
  const ids = [idle, first, second, third].map((s) => s.auditId)
  assert.deepEqual(
    signIns.map((e) => String(e.details.session_id)).sort(),
    [...ids].sort(),
    'one sign-in row each, and the same ids as the sign-outs',
  )
})

test('console sessions - a partner credential is refused at sign-in and leaves no row', async () => {
  const sessions = new ConsoleSessions(tb.nc, undefined, 120_000, clock)
  const before = (await tb.operator.audit.list({ action: 'console.sign_in' })).entries.length
  await assert.rejects(sessions.signIn(partner.token), (error: unknown) => {
    return error instanceof BankApiError && error.code === 403
  })
  await assert.rejects(sessions.signIn('not-a-credential'), (error: unknown) => {
    return error instanceof BankApiError && error.code === 401
  })
  assert.equal(sessions.size, 0)
  const after = (await tb.operator.audit.list({ action: 'console.sign_in' })).entries.length
  assert.equal(after, before)
})
