import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { businessEntity, personalEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal, iso, uuidPattern } from '../support/assertions.ts'
import { asReview } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

const minute = 60_000

async function reviewStatus(partner: TestPartner, entityId: string): Promise<string | undefined> {
  const { entities } = await tb.operator.entities.list({ partner_id: partner.partnerId })
  return entities.find((e) => e.id === entityId)?.review_status
}

test("entity review - approving a root entity opens exactly one account, the partner's pool account", async () => {
  const partner = await onboardPartner(tb)
  tb.clock.advance(minute)
  const review = await tb.operator.entities.review({ entity_id: partner.rootEntityId,
    decision: 'approve' })
  assert.equal(review.entity_id, partner.rootEntityId)
  assert.equal(review.review_status, 'approved')
  assert.equal(review.approved, true)
  assert.ok(review.account)
  assert.match(review.account.account_id, uuidPattern)
  assert.match(review.account.account_number, /^\d+$/)
  assert.equal(review.account.kind, 'pool')
  assert.equal(review.account.created_at, iso(tb.clock.now()))
  assert.equal(typeof review.account.metadata, 'object')

  const { accounts } = await tb.operator.accounts.list({ entity_id: partner.rootEntityId })
  assert.equal(accounts.length, 1)
  assert.deepEqual(accounts[0], { ...review.account, partner_id: partner.partnerId,
    status: 'active', balance: '0', available_balance: '0' })
  const seen = await partner.client.accounts.getByEntity({ entity_id: partner.rootEntityId })
  assert.deepEqual(seen.accounts.map((a) => a.account_id), [review.account.account_id])
  assert.equal((await partner.client.entities.info({ entity_id: partner.rootEntityId })).approved,
    true)
})

test('entity review - approving again opens no further account', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const first = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(first.account?.kind, 'standard')
  const again = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(again.review_status, 'approved')
  assert.equal(again.approved, true)
  assert.equal(again.account, null)
  const { accounts } = await tb.operator.accounts.list({ entity_id: id })
  assert.deepEqual(accounts.map((a) => a.account_id), [first.account!.account_id])
})

test('entity review - two approvals at once still open exactly one account', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const replies = await Promise.all([
    tb.operator.entities.review({ entity_id: id, decision: 'approve' }),
    tb.operator.entities.review({ entity_id: id, decision: 'approve' }),
    tb.operator.entities.review({ entity_id: id, decision: 'approve' }),
  ])
  const opened = replies.filter((r) => r.account !== null)
  assert.equal(opened.length, 1)
  const { accounts } = await tb.operator.accounts.list({ entity_id: id })
  assert.deepEqual(accounts.map((a) => a.account_id), [opened[0]!.account!.account_id])
})

test('entity review - rejecting needs a reason: without one → 400 naming reason, and the entity stays pending', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await expectRefusal(tb.operator.entities.review({ entity_id: id, decision: 'reject' }), 400,
    'reason')
  await expectRefusal(tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: '' }), 400, 'reason')
  await expectRefusal(tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: '  ' }), 400, 'reason')
  assert.equal(await reviewStatus(p, id), 'pending')
})

test('entity review - a rejected entity has no account; a later approval opens its first', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const rejected = await tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'CIPC documents do not match' })
  assert.deepEqual(rejected, { entity_id: id, review_status: 'rejected', approved: false,
    account: null })
  assert.equal(await reviewStatus(p, id), 'rejected')
  assert.deepEqual((await tb.operator.accounts.list({ entity_id: id })).accounts, [])
  assert.equal((await p.client.entities.info({ entity_id: id })).approved, false)
  await expectRefusal(p.client.accounts.create({ entity_id: id }), 400, 'entity_id')

  // A second rejection (new reason) is allowed while not approved.
  const twice = await tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'still unreadable' })
  assert.equal(twice.review_status, 'rejected')

  const approved = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(approved.review_status, 'approved')
  assert.ok(approved.account)
  assert.equal((await tb.operator.accounts.list({ entity_id: id })).accounts.length, 1)
})

test('entity review - rejecting an approved entity → 400, and it stays approved with its account', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const approved = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  await expectRefusal(tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'changed our mind' }), 400, 'entity_id')
  assert.equal(await reviewStatus(p, id), 'approved')
  assert.equal((await p.client.entities.info({ entity_id: id })).approved, true)
  const { accounts } = await tb.operator.accounts.list({ entity_id: id })
  assert.deepEqual(accounts.map((a) => a.account_id), [approved.account!.account_id])
})

test("entity review - approving a personal entity approves its own user's KYC and opens its account", async () => {
  const { id } = await p.client.entities.create(personalEntity())
  const [holder] = (await p.client.users.list({ entity_id: id })).users
  assert.ok(holder)
  assert.equal(holder.kyc_status, 'pending')
  assert.equal(holder.verified, false)

  tb.clock.advance(minute)
  const review = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(review.account?.kind, 'standard')
  const { user } = await p.client.users.get({ user_id: holder.id })
  assert.equal(user.kyc_status, 'approved')
  assert.equal(user.verified, true)
  assert.equal(user.verified_at, iso(tb.clock.now()))
  assert.equal(user.kyc_reviewed_at, iso(tb.clock.now()))
  assert.equal(user.kyc_submitted_at, holder.kyc_submitted_at)
  assert.equal('kyc_rejection_reason' in user, false)
  assert.equal((await tb.operator.accounts.list({ entity_id: id })).accounts.length, 1)
})

test("entity review - rejecting a personal entity rejects its own user's KYC with the reason", async () => {
  const { id } = await p.client.entities.create(personalEntity())
  await tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'selfie does not match the ID photo' })
  const [holder] = (await p.client.users.list({ entity_id: id })).users
  assert.ok(holder)
  assert.equal(holder.kyc_status, 'rejected')
  assert.equal(holder.verified, false)
  assert.equal(holder.kyc_rejection_reason, 'selfie does not match the ID photo')
  assert.equal(typeof holder.kyc_reviewed_at, 'string')
})

test("entity review - a business entity's review leaves its users' KYC alone", async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(userRequest(id, { verified: false }))
  await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
})

test('entity review - unknown entity → 404; bad input → 400 naming the field', async () => {
  await expectRefusal(tb.operator.entities.review({ entity_id: randomUUID(), decision: 'approve' }),
    404)
  const { id } = await p.client.entities.create(businessEntity())
  await expectRefusal(tb.operator.entities.review(asReview({ entity_id: id, decision: 'maybe' })),
    400, 'decision')
  await expectRefusal(tb.operator.entities.review(asReview({ entity_id: id })), 400, 'decision')
  await expectRefusal(tb.operator.entities.review(asReview({ decision: 'approve' })), 400,
    'entity_id')
  await expectRefusal(tb.operator.entities.review(
    asReview({ entity_id: 'acme', decision: 'approve' })), 400, 'entity_id')
  await expectRefusal(tb.operator.entities.review(
    asReview({ entity_id: id, decision: 'approve', notes: 'ok' })), 400, 'notes')
  await expectRefusal(tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'r'.repeat(501) }), 400, 'reason')
  assert.equal(await reviewStatus(p, id), 'pending')
  assert.deepEqual((await tb.operator.accounts.list({ entity_id: id })).accounts, [])
})

test("entity list - the partner's entities in creation order, with review state, root flag and partner", async () => {
  const partner = await onboardPartner(tb)
  const { id: business } = await partner.client.entities.create(
    businessEntity({ name: 'Shop One (Pty) Ltd' }))
  const { id: personal } = await partner.client.entities.create(personalEntity())
  await tb.operator.entities.review({ entity_id: business, decision: 'approve' })
  await tb.operator.entities.review({ entity_id: personal, decision: 'reject',
    reason: 'expired ID' })

  const { entities } = await tb.operator.entities.list({ partner_id: partner.partnerId })
  assert.deepEqual(
    entities.map((e) => [e.id, e.entity_type, e.is_root, e.review_status, e.partner_id]),
    [
      [partner.rootEntityId, 'Business', true, 'pending', partner.partnerId],
      [business, 'Business', false, 'approved', partner.partnerId],
      [personal, 'Personal', false, 'rejected', partner.partnerId],
    ],
  )
  // Each item is the partner's list item plus the operator's fields.
  const partnerView = (await partner.client.entities.list()).entities
  assert.deepEqual(
    entities.map(({ partner_id, review_status, is_root, tax_number, purpose, ...item }) => item),
    partnerView,
  )
  // Nothing of another partner.
  const otherIds = new Set(
    (await tb.operator.entities.list({ partner_id: other.partnerId })).entities.map((e) => e.id))
  for (const e of entities) assert.ok(!otherIds.has(e.id))
})

test('entity list - bad partner_id → 400', async () => {
  await expectRefusal(tb.operator.entities.list({ partner_id: 'acme' }), 400, 'partner_id')
  await expectRefusal(tb.operator.entities.list({} as { partner_id: string }), 400, 'partner_id')
})

test("account list - an entity's accounts oldest first, with kind, partner, status and balances; none before approval", async () => {
  const { id } = await p.client.entities.create(businessEntity())
  assert.deepEqual(await tb.operator.accounts.list({ entity_id: id }),
    { entity_id: id, accounts: [] })
  const first = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  tb.clock.advance(minute)
  const further = await p.client.accounts.create({ entity_id: id })

  const reply = await tb.operator.accounts.list({ entity_id: id })
  assert.equal(reply.entity_id, id)
  assert.deepEqual(
    reply.accounts.map((a) => [a.account_id, a.account_number, a.kind, a.partner_id, a.created_at]),
    [
      [first.account!.account_id, first.account!.account_number, 'standard', p.partnerId,
        first.account!.created_at],
      [further.account_id, further.account_number, 'standard', p.partnerId, further.created_at],
    ],
  )
  assert.notEqual(reply.accounts[0]!.account_number, reply.accounts[1]!.account_number)
  // The operator sees what the partner sees, plus kind, partner, status and the balances the
  // partner's get_details reads.
  const partnerView = await p.client.accounts.getByEntity({ entity_id: id })
  assert.deepEqual(
    reply.accounts.map(({ kind, partner_id, status, balance, available_balance, ...a }) => a),
    partnerView.accounts,
  )
  await tb.operator.accounts.deposit({ account_id: further.account_id, amount: 2_500, ref: 'l' })
  const [one, two] = (await tb.operator.accounts.list({ entity_id: id })).accounts
  for (const [account, balance] of [[one!, '0'], [two!, '2500']] as const) {
    const details = await p.client.accounts.getDetails({ account_id: account.account_id })
    assert.deepEqual([account.status, account.balance, account.available_balance],
      ['active', balance, details.available_balance])
    assert.equal(details.balance, balance)
  }
})

test("account list - any partner's entity is visible to the operator; unknown → 404; bad id → 400", async () => {
  const { accounts } = await tb.operator.accounts.list({ entity_id: other.rootEntityId })
  assert.equal(accounts.length, 1)
  assert.equal(accounts[0]!.partner_id, other.partnerId)
  assert.equal(accounts[0]!.kind, 'pool')
  await expectRefusal(tb.operator.accounts.list({ entity_id: randomUUID() }), 404)
  await expectRefusal(tb.operator.accounts.list({ entity_id: '42' }), 400, 'entity_id')
})
