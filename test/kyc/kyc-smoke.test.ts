import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { businessEntity, numberedPersonalEntity } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { pdf, png, putObjects } from './helpers.ts'

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('kyc smoke - a person submits, the operator approves, the account opens', async () => {
  const created = await p.client.entities.create(numberedPersonalEntity())
  const userId = created.user_id!
  const epoch = 1_700_000_000
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, {
    [`kyc_id_front_${userId}_${epoch}`]: pdf('front'),
    [`kyc_id_back_${userId}_${epoch}`]: png(),
    [`kyc_proof_of_residence_${userId}_${epoch}`]: pdf('proof'),
  })
  const reply = await p.client.users.uploadKycDocuments({ user_id: userId, id_document: `kyc_id_front_${userId}_${epoch}`, proof_of_residence: `kyc_proof_of_residence_${userId}_${epoch}` })
  assert.equal(reply.success, true)
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.documents.length, 3)
  const listed = await tb.operator.kyc.list({})
  assert.ok(listed.applications.some((a) => a.user_id === userId))
  const decided = await tb.operator.kyc.decide({ user_id: userId, decision: 'approve' })
  assert.equal(decided.user.kyc_status, 'approved')
  assert.ok(decided.account)
  const chunk = await tb.operator.kyc.document({ document_id: shown.documents[0]!.document_id })
  assert.equal(Buffer.from(chunk.data, 'base64').length, chunk.size)
  const audit = await tb.operator.audit.list({ subject_id: userId })
  assert.deepEqual(audit.entries.map((e) => e.action), ['kyc.approved', 'kyc.submitted'])
})

test('kyb smoke - get, submit, decide', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity({ registration_number: '202012345607' }))
  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'not_started')
  assert.equal(kyb.directors.length, 2)
  const epoch = 1_700_000_000
  const d = kyb.directors[0]!.id
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`, {
    [`business_registration_${epoch}`]: pdf('reg'),
    [`director_id_front_${d}_${epoch}`]: pdf('dir'),
  })
  await p.client.kyb.submit({ entity_id: entityId, documents: [`business_registration_${epoch}`], directors: { [d]: [`director_id_front_${d}_${epoch}`] } })
  const after = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(after.state, 'submitted')
  assert.equal(after.documents[0]!.doc_type, 'business_registration')
  assert.equal(after.directors[0]!.documents[0]!.doc_type, 'director_id_front')
  const decided = await tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve', directors: [{ director_id: d, approved: true, verified: true }] })
  assert.equal(decided.state, 'approved')
  assert.ok(decided.account)
})
