import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { businessEntity, numberedPersonalEntity, registrationNumber } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { outcome } from '../support/assertions.ts'
import { destroyBucketsAfter, epoch, kycNames, pdf, putObjects, submissionsOf } from './helpers.ts'

// Requests on one application at once: the user's or entity's row lock orders them, so two
// submissions leave one pending and one superseded, two approvals open one account, and
// first lookups of an entity's directors record them once.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('kyc concurrency - two submissions at once: both answered, one pending and one superseded', async () => {
  const userId = (await p.client.entities.create(numberedPersonalEntity())).user_id!
  const a = kycNames(userId, epoch)
  const b = kycNames(userId, epoch + 1)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [a.front]: pdf('a'), [a.proof]: pdf('a'),
    [b.front]: pdf('b'), [b.proof]: pdf('b') })
  const replies = await Promise.all([
    p.client.users.uploadKycDocuments({ user_id: userId, id_document: a.front,
      proof_of_residence: a.proof }),
    p.client.users.uploadKycDocuments({ user_id: userId, id_document: b.front,
      proof_of_residence: b.proof }),
  ])
  assert.ok(replies.every((r) => r.success))
  assert.deepEqual((await submissionsOf(tb, userId)).map((s) => s.state), ['superseded', 'pending'])
  assert.equal((await tb.operator.kyc.list({ partner_id: p.partnerId })).applications.filter(
    (x) => x.user_id === userId).length, 1)
})

test('kyc concurrency - two approvals at once: one decides and opens the account, the other → 409', async () => {
  const { id: entityId, user_id: userId } = await p.client.entities.create(numberedPersonalEntity())
  const names = kycNames(userId!)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  await p.client.users.uploadKycDocuments({ user_id: userId!, id_document: names.front,
    proof_of_residence: names.proof })
  const results = await Promise.all(
    [1, 2, 3].map(() => outcome(tb.operator.kyc.decide({ user_id: userId!, decision: 'approve' }))))
  const decided = results.filter((r) => r.ok)
  assert.equal(decided.length, 1)
  assert.deepEqual(results.filter((r) => !r.ok).map((r) => (r.ok ? 0 : r.error.code)), [409, 409])
  assert.equal((await p.client.accounts.getByEntity({ entity_id: entityId })).accounts.length, 1)
  assert.deepEqual((await tb.operator.audit.list({ subject_id: userId! })).entries.map(
    (e) => e.action), ['kyc.approved', 'kyc.submitted'])
})

test("kyb concurrency - first gets at once record the entity's directors once, the same for every caller", async () => {
  const { id: entityId } = await p.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '07' }))
  const views = await Promise.all([1, 2, 3, 4].map(() => p.client.kyb.get({ entity_id: entityId })))
  const ids = views.map((v) => v.directors.map((d) => d.id).join(','))
  assert.equal(new Set(ids).size, 1)
  assert.equal(views[0]!.directors.length, 2)
  const rows = await tb.bank.database.db.selectFrom('kyb_directors').select('director_id').where(
    'entity_id', '=', entityId).execute()
  assert.equal(rows.length, 2)
})

test('kyb concurrency - two approvals at once: one opens the account, the other → 409', async () => {
  const { id: entityId } = await p.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '42' }))
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`business_registration_${epoch}`]: pdf('reg') })
  await p.client.kyb.submit({ entity_id: entityId, documents: [`business_registration_${epoch}`] })
  const results = await Promise.all(
    [1, 2].map(() => outcome(tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve' }))))
  assert.equal(results.filter((r) => r.ok).length, 1)
  assert.deepEqual(results.filter((r) => !r.ok).map((r) => (r.ok ? 0 : r.error.code)), [409])
  assert.equal((await p.client.accounts.getByEntity({ entity_id: entityId })).accounts.length, 1)
})
