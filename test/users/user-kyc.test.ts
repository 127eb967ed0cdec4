import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, iso, zeroTimestamp } from '../support/assertions.ts'

// KYC of a user (docs/guides/kyc-kyb.md): not_started → pending → approved | rejected,
// a rejected one may be resubmitted (→ pending); the bank's operators decide.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const minute = 60_000

async function newUser(overrides: Record<string, unknown> = {}): Promise<string> {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  return (await p.client.users.create(userRequest(entityId, overrides))).userId
}

async function partnerView(userId: string) {
  return (await p.client.users.get({ user_id: userId })).user
}

/** A minute later, the operator sets the user's KYC status: when, and the record answered. */
async function kycLater(userId: string, status: 'pending' | 'rejected' | 'approved',
  reason?: string) {
  tb.clock.advance(minute)
  const at = iso(tb.clock.now())
  const request = reason === undefined ? { user_id: userId, status }
    : { user_id: userId, status, reason }
  return { at, user: (await tb.operator.users.kyc(request)).user }
}

test('user kyc - not_started → pending → rejected → pending → approved, as the partner sees it', async () => {
  const userId = await newUser({ verified: false })
  const created = await partnerView(userId)
  assert.equal(created.kyc_status, 'not_started')

  // Submitted.
  const { at: submittedAt, user: pending } = await kycLater(userId, 'pending')
  assert.deepEqual(pending, await partnerView(userId),
    'the operator reply is the record the partner reads')
  assert.equal(pending.kyc_status, 'pending')
  assert.equal(pending.verified, false)
  assert.equal(pending.verified_at, zeroTimestamp)
  assert.equal(pending.kyc_submitted_at, submittedAt)
  assert.equal('kyc_reviewed_at' in pending, false)
  assert.equal('kyc_rejection_reason' in pending, false)
  assert.equal(pending.updated_at, submittedAt)
  assert.equal(pending.created_at, created.created_at)

  // Rejected, with its reason.
  const { at: rejectedAt, user: rejected } = await kycLater(userId, 'rejected',
    'proof of address is older than 3 months')
  assert.deepEqual(rejected, await partnerView(userId))
  assert.equal(rejected.kyc_status, 'rejected')
  assert.equal(rejected.verified, false)
  assert.equal(rejected.verified_at, zeroTimestamp)
  assert.equal(rejected.kyc_rejection_reason, 'proof of address is older than 3 months')
  assert.equal(rejected.kyc_submitted_at, submittedAt)
  assert.equal(rejected.kyc_reviewed_at, rejectedAt)

  // Resubmitted: pending again, the old reason and review gone.
  const { at: resubmittedAt, user: again } = await kycLater(userId, 'pending')
  assert.deepEqual(again, await partnerView(userId))
  assert.equal(again.kyc_status, 'pending')
  assert.equal(again.verified, false)
  assert.equal(again.kyc_submitted_at, resubmittedAt)
  assert.equal('kyc_reviewed_at' in again, false)
  assert.equal('kyc_rejection_reason' in again, false)

  // Approved.
  const { at: approvedAt, user: approved } = await kycLater(userId, 'approved')
  assert.deepEqual(approved, await partnerView(userId))
  assert.equal(approved.kyc_status, 'approved')
  assert.equal(approved.verified, true)
  assert.equal(approved.verified_at, approvedAt)
  assert.equal(approved.kyc_submitted_at, resubmittedAt)
  assert.equal(approved.kyc_reviewed_at, approvedAt)
  assert.equal('kyc_rejection_reason' in approved, false)
  assert.equal(approved.updated_at, approvedAt)

  // Nothing else of the record moved along the way.
  const { kyc_status, verified, verified_at, kyc_submitted_at, kyc_reviewed_at, updated_at,
    ...rest } = approved
  const { kyc_status: s0, verified: v0, verified_at: va0, updated_at: u0, ...restBefore } = created
  assert.deepEqual(rest, restBefore)
})

test('user kyc - rejecting needs a reason: without one → 400 naming reason, and nothing changes', async () => {
  const userId = await newUser()
  await tb.operator.users.kyc({ user_id: userId, status: 'pending' })
  const before = await partnerView(userId)
  tb.clock.advance(minute)
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'rejected' }), 400, 'reason')
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'rejected', reason: '' }),
    400, 'reason')
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'rejected', reason: '   ' }),
    400, 'reason')
  assert.deepEqual(await partnerView(userId), before)
})

test('user kyc - a reason given with an approval is not kept', async () => {
  const userId = await newUser()
  await tb.operator.users.kyc({ user_id: userId, status: 'pending' })
  const { user } = await tb.operator.users.kyc({ user_id: userId, status: 'approved',
    reason: 'looks fine' })
  assert.equal(user.kyc_status, 'approved')
  assert.equal('kyc_rejection_reason' in user, false)
})

test('user kyc - a reviewed user reads as submitted too, even when the operator skipped pending', async () => {
  const approvedId = await newUser()
  tb.clock.advance(minute)
  const { user: approved } =
    await tb.operator.users.kyc({ user_id: approvedId, status: 'approved' })
  assert.equal(approved.kyc_status, 'approved')
  assert.equal(approved.verified, true)
  assert.equal(approved.kyc_submitted_at, iso(tb.clock.now()))
  assert.equal(approved.kyc_reviewed_at, iso(tb.clock.now()))

  const rejectedId = await newUser()
  const { user: rejected } = await tb.operator.users.kyc({ user_id: rejectedId, status: 'rejected',
    reason: 'id photo unreadable' })
  assert.equal(rejected.kyc_submitted_at, iso(tb.clock.now()))
  assert.equal(rejected.kyc_reviewed_at, iso(tb.clock.now()))
  assert.equal(rejected.kyc_rejection_reason, 'id photo unreadable')
})

test('user kyc - an approval keeps the earlier submission time', async () => {
  const userId = await newUser()
  const { user: pending } = await tb.operator.users.kyc({ user_id: userId, status: 'pending' })
  tb.clock.advance(10 * minute)
  const { user: approved } = await tb.operator.users.kyc({ user_id: userId, status: 'approved' })
  assert.equal(approved.kyc_submitted_at, pending.kyc_submitted_at)
  assert.notEqual(approved.kyc_reviewed_at, pending.kyc_submitted_at)
})

test('user kyc - a partner-verified user (verified: true) can be sent back to pending, and is then unverified', async () => {
  const userId = await newUser({ verified: true })
  assert.equal((await partnerView(userId)).verified, true)
  tb.clock.advance(minute)
  const { user } = await tb.operator.users.kyc({ user_id: userId, status: 'pending' })
  assert.equal(user.kyc_status, 'pending')
  assert.equal(user.verified, false)
  assert.equal(user.verified_at, zeroTimestamp)
  assert.equal(user.kyc_submitted_at, iso(tb.clock.now()))
  assert.equal('kyc_reviewed_at' in user, false)
})

test('user kyc - unknown user → 404; not_started, an unknown status or a bad user_id → 400', async () => {
  await expectRefusal(tb.operator.users.kyc({ user_id: randomUUID(), status: 'approved' }), 404)
  const userId = await newUser()
  const before = await partnerView(userId)
  await expectRefusal(
    tb.operator.users.kyc({ user_id: userId, status: 'not_started' as 'pending' }), 400, 'status')
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'verified' as 'pending' }),
    400, 'status')
  await expectRefusal(tb.operator.users.kyc(
    { user_id: userId } as { user_id: string; status: 'pending' }), 400, 'status')
  await expectRefusal(tb.operator.users.kyc({ user_id: 'someone', status: 'pending' }), 400,
    'user_id')
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'pending', note: 'x' } as {
    user_id: string; status: 'pending' }), 400, 'note')
  await expectRefusal(tb.operator.users.kyc({ user_id: userId, status: 'rejected',
    reason: 'r'.repeat(501) }), 400, 'reason')
  assert.deepEqual(await partnerView(userId), before)
})
