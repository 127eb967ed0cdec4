import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { iso } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, registrationNumber } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, epoch, eventsOf, kycNames, operatorCredentialId, pdf, putObjects, submissionsOf } from './helpers.ts'

// ops.entity.review, the operator's direct decision on an entity, takes the application
// under review along (a business's KYB submission, a person's KYC submission): it leaves the
// review queue decided, announces kyb.* / kyc.*, and the decision is audited on the entity.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner
let operatorId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  operatorId = await operatorCredentialId(tb)
})

test('entity review - approving a business with a submitted KYB approves the submission and its documents, announces kyb.approved', async () => {
  const { id: entityId } = await p.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '42' }))
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`business_registration_${epoch}`]: pdf('registration') })
  await p.client.kyb.submit({ entity_id: entityId, documents: [`business_registration_${epoch}`] })
  tb.clock.advance(60_000)
  const reviewed = await tb.operator.entities.review({ entity_id: entityId, decision: 'approve' })
  assert.ok(reviewed.account)
  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'approved')
  assert.deepEqual(kyb.documents.map((d) => d.approved), [true])
  const [submission] = await submissionsOf(tb, entityId)
  assert.deepEqual([submission!.state, submission!.decided_by], ['approved', operatorId])
  assert.ok(!(await tb.operator.kyb.list({ partner_id: p.partnerId })).applications.some(
    (a) => a.entity_id === entityId), 'no longer waiting for review')
  assert.deepEqual((await eventsOf(tb, entityId)).map((e) => [e.type, e.data.state]),
    [['kyb.submitted', 'submitted'], ['kyb.approved', 'approved']])
  const [entry] = (await tb.operator.audit.list({ subject_id: entityId })).entries
  assert.deepEqual([entry!.action, entry!.actor, entry!.at], ['entity.approved', operatorId,
    iso(tb.clock.now())])
  assert.equal(entry!.details.submission_id, submission!.id)
  assert.equal(entry!.details.account_id, reviewed.account.account_id)
})

test("entity review - rejecting a person with a pending KYC submission rejects it with the reason, announces kyc.rejected on the user", async () => {
  const { id: entityId, user_id: userId } = await p.client.entities.create(numberedPersonalEntity())
  const names = kycNames(userId!)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  await p.client.users.uploadKycDocuments({ user_id: userId!, id_document: names.front,
    proof_of_residence: names.proof })
  await tb.operator.entities.review({ entity_id: entityId, decision: 'reject',
    reason: 'sanctions list match' })
  const { user } = await p.client.users.get({ user_id: userId! })
  assert.deepEqual([user.kyc_status, user.kyc_rejection_reason],
    ['rejected', 'sanctions list match'])
  const shown = await tb.operator.kyc.show({ user_id: userId! })
  assert.deepEqual([shown.submission?.state, shown.submission?.rejection_reason],
    ['rejected', 'sanctions list match'])
  const events = await eventsOf(tb, userId!)
  assert.deepEqual(events.map((e) => [e.type, e.data.kyc_status]), [['kyc.submitted', 'pending'],
    ['kyc.rejected', 'rejected']])
  assert.deepEqual((await tb.operator.audit.list({ subject_id: entityId })).entries.map((e) => [
    e.action, e.details.submission_id]), [['entity.rejected', shown.submission?.submission_id]])
})

test('entity review - an entity with nothing submitted: audited, no kyc/kyb event', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  await tb.operator.entities.review({ entity_id: entityId, decision: 'approve' })
  assert.deepEqual((await eventsOf(tb, entityId)).map((e) => e.type), [])
  const [entry] = (await tb.operator.audit.list({ subject_id: entityId })).entries
  assert.deepEqual([entry!.action, entry!.actor, entry!.details.submission_id],
    ['entity.approved', operatorId, null])
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).state, 'approved')
})
