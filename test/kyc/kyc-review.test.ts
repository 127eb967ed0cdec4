import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { document_chunk_bytes_max } from '../../src/kyc/kyc-contract.ts'
import { kycShowBody } from '../../src/console/console-pages.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, deleteObject, eventsOf, fetchDocument, jpeg, kycNames, largePdf, operatorCredentialId, pdf, png, putObjects, sha256, submissionsOf } from './helpers.ts'

// What happens to a KYC submission after it is made: its documents frozen in the bank
// whatever the dropbox does later, the operators' review (per document and overall), the
// account it opens, the kyc.* events and the audit trail of every decision.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner
let operatorId: string
let businessId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  operatorId = await operatorCredentialId(tb)
  businessId = (await p.client.entities.create(businessEntity())).id
})

let applicants = 0

/** A user of an (unapproved) business entity, KYC not_started. */
async function businessUser(): Promise<string> {
  const body = `860101${String(++applicants).padStart(4, '0')}08`
  return (await p.client.users.create(
    userRequest(businessId, { id_number: body + luhnCheckDigit(body) }))).userId
}

/** A person: a personal entity and its automatic user. */
async function person(): Promise<{ userId: string; entityId: string }> {
  const created = await p.client.entities.create(numberedPersonalEntity())
  return { userId: created.user_id!, entityId: created.id }
}

/**
 * Puts front, back and proof as the SDK does and submits; resolves with the documents as shown, by
 * doc type.
 */
async function submit(userId: string, at: number,
    files: { front?: Uint8Array; back?: Uint8Array; proof?: Uint8Array } = {}) {
  const names = kycNames(userId, at)
  const objects: Record<string, Uint8Array> = { [names.front]: files.front ?? jpeg(),
    [names.proof]: files.proof ?? pdf(`proof ${at}`) }
  if (files.back) objects[names.back] = files.back
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, objects)
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  const shown = await tb.operator.kyc.show({ user_id: userId })
  return { names, shown, byType: new Map(shown.documents.map((d) => [d.doc_type, d])) }
}

test('kyc review - documents are frozen at submission: deleting or overwriting the objects changes nothing the operator fetches', async () => {
  const userId = await businessUser()
  const front = largePdf(600 * 1024, 'f')
  const back = png()
  const proof = pdf('proof of residence, original')
  const { names, byType } = await submit(userId, 1_763_800_000, { front, back, proof })
  // The partner (or anyone with the bucket) changes the dropbox after submitting.
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('a different front'),
    [names.back]: jpeg() })
  await deleteObject(tb.nc, `kyc_dropbox_${userId}`, names.proof)

  const shown = await tb.operator.kyc.show({ user_id: userId })
  for (const [docType, bytes] of [['id_front', front], ['id_back', back],
      ['proof_of_residence', proof]] as const) {
    const view = shown.documents.find((d) => d.doc_type === docType)!
    assert.equal(view.sha256, sha256(bytes), docType)
    assert.equal(view.document_id, byType.get(docType)!.document_id)
    const fetched = await fetchDocument(tb, view.document_id)
    assert.ok(fetched.bytes.equals(Buffer.from(bytes)), `${docType}: the bytes submitted`)
    assert.equal(sha256(fetched.bytes), view.sha256)
    assert.equal(fetched.size, bytes.length)
  }
  // 600 KB comes in three chunks of at most 256 KB, reassembled exactly.
  const large = await fetchDocument(tb, byType.get('id_front')!.document_id)
  assert.equal(large.chunks, Math.ceil(front.length / document_chunk_bytes_max))
  assert.equal(large.chunks, 3)
})

test('kyc review - ops.document.get: length and offset bound the part; past the end → 400; an unknown id → 404', async () => {
  const userId = await businessUser()
  const proof = pdf('0123456789abcdef')
  const { byType } = await submit(userId, 1_763_800_001, { proof })
  const id = byType.get('proof_of_residence')!.document_id
  const part = await tb.operator.kyc.document({ document_id: id, offset: 2, length: 5 })
  assert.deepEqual(Buffer.from(part.data, 'base64'), Buffer.from(proof.subarray(2, 7)))
  assert.equal(part.next_offset, 7)
  const tail = await tb.operator.kyc.document({ document_id: id, offset: proof.length - 3 })
  assert.deepEqual(Buffer.from(tail.data, 'base64'), Buffer.from(proof.subarray(proof.length - 3)))
  assert.equal(tail.next_offset, null)
  const end = await tb.operator.kyc.document({ document_id: id, offset: proof.length })
  assert.equal(end.data, '')
  assert.equal(end.next_offset, null)
  await expectRefusal(tb.operator.kyc.document({ document_id: id, offset: proof.length + 1 }), 400,
    'offset')
  await expectRefusal(tb.operator.kyc.document(
    { document_id: id, length: document_chunk_bytes_max + 1 }), 400, 'length')
  await expectRefusal(tb.operator.kyc.document({ document_id: randomUUID() }), 404)
})

/**
 * The operator rejects the user's KYC a minute later: the id front rejected (blurred), the
 * proof of residence approved, the id back left undecided. Returns when.
 */
async function rejectFront(userId: string, entityId: string, frontId: string, proofId: string) {
  tb.clock.advance(60_000)
  const rejectedAt = iso(tb.clock.now())
  const rejected = await tb.operator.kyc.decide({
    user_id: userId,
    decision: 'reject',
    reason: 'the id document is unreadable',
    documents: [
      { document_id: frontId, decision: 'reject', reason: 'blurred photo' },
      { document_id: proofId, decision: 'approve' },
    ],
  })
  assert.equal(rejected.user.kyc_status, 'rejected')
  assert.equal(rejected.user.kyc_rejection_reason, 'the id document is unreadable')
  assert.equal(rejected.account, null)
  const decisions =
    new Map(rejected.documents.map((d) => [d.doc_type, [d.decision, d.rejection_reason]]))
  assert.deepEqual(decisions.get('id_front'), ['rejected', 'blurred photo'])
  assert.deepEqual(decisions.get('proof_of_residence'), ['approved', null])
  assert.deepEqual(decisions.get('id_back'), [null, null],
    'a reject leaves the undecided undecided')
  const partnerView = (await p.client.users.get({ user_id: userId })).user
  assert.equal(partnerView.kyc_status, 'rejected')
  assert.equal(partnerView.kyc_rejection_reason, 'the id document is unreadable')
  assert.equal(partnerView.kyc_reviewed_at, rejectedAt)
  const afterReject = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(afterReject.submission?.state, 'rejected')
  assert.equal(afterReject.submission?.decided_by, operatorId)
  assert.equal(afterReject.submission?.decided_at, rejectedAt)
  assert.equal(afterReject.submission?.rejection_reason, 'the id document is unreadable')
  assert.ok((await tb.operator.kyc.list({ state: 'rejected' })).applications.some(
    (a) => a.user_id === userId))
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: entityId })).accounts, [])
  return rejectedAt
}

/** The KYC's events and audit rows: submitted, rejected, submitted again, approved. */
async function assertKycHistory(userId: string, h: { frontId: string; proofId: string;
  accountId: string; frozen: Array<{ sha256: string }>; submittedAt: string; rejectedAt: string
  approvedAt: string }) {
  const { submittedAt, rejectedAt, approvedAt } = h
  // kyc.* events, one per change, in order, with the user record as data.
  const events = await eventsOf(tb, userId)
  assert.deepEqual(
    events.map((e) => [e.type, e.partner_id, e.data.kyc_status]),
    [
      ['kyc.submitted', p.partnerId, 'pending'],
      ['kyc.rejected', p.partnerId, 'rejected'],
      ['kyc.submitted', p.partnerId, 'pending'],
      ['kyc.approved', p.partnerId, 'approved'],
    ],
  )
  assert.equal(events[1]!.data.kyc_rejection_reason, 'the id document is unreadable')

  // The audit trail: who, what, when; newest first.
  const audit = (await tb.operator.audit.list({ subject_id: userId })).entries
  assert.deepEqual(
    audit.map((e) => [e.action, e.actor]),
    [
      ['kyc.approved', operatorId],
      ['kyc.submitted', p.credentialId],
      ['kyc.rejected', operatorId],
      ['kyc.submitted', p.credentialId],
    ],
  )
  assert.equal(audit[3]!.at, submittedAt)
  assert.equal(audit[2]!.at, rejectedAt)
  assert.equal(audit[0]!.at, approvedAt)
  assert.equal(audit[2]!.details.reason, 'the id document is unreadable')
  assert.equal(audit[0]!.details.account_id, h.accountId)
  const frozen = audit[3]!.details.documents as Array<{ document_id: string; sha256: string }>
  assert.deepEqual(frozen.map((d) => d.sha256).sort(), h.frozen.map((d) => d.sha256)
    .sort())
  // Per-document decisions are audited under the document.
  const frontAudit = (await tb.operator.audit.list({ subject_id: h.frontId })).entries
  assert.deepEqual(frontAudit.map((e) => [e.action, e.actor, e.at, e.details.reason]),
    [['document.rejected', operatorId, rejectedAt, 'blurred photo']])
  const proofAudit = (await tb.operator.audit.list({ subject_id: h.proofId })).entries
  assert.deepEqual(proofAudit.map((e) => [e.action, e.actor]), [['document.approved', operatorId]])
  assert.equal((await tb.operator.audit.list({ subject_id: userId, limit: 1 })).entries.length, 1)
}

test('kyc review - reject per document → user rejected with the reason; resubmission → pending, the old one superseded; approval opens the first account', async () => {
  const { userId, entityId } = await person()
  tb.clock.advance(60_000)
  const submittedAt = iso(tb.clock.now())
  const first = await submit(userId, 1_763_800_010, { back: png() })
  const front = first.byType.get('id_front')!
  const proof = first.byType.get('proof_of_residence')!

  const rejectedAt = await rejectFront(userId, entityId, front.document_id, proof.document_id)

  // Resubmitted: pending again, the rejected submission superseded.
  tb.clock.advance(60_000)
  const second = await submit(userId, 1_763_800_020)
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'pending')
  assert.deepEqual((await submissionsOf(tb, userId)).map((s) => s.state), ['superseded', 'pending'])
  assert.equal(second.shown.documents.length, 3,
    'the id back uploaded for the first submission is still in the bucket and taken along')
  assert.ok(!(await tb.operator.kyc.list({ state: 'rejected' })).applications.some(
    (a) => a.user_id === userId))

  // An approval cannot keep a rejected document.
  const newFront = second.byType.get('id_front')!
  await expectRefusal(
    tb.operator.kyc.decide({ user_id: userId, decision: 'approve', documents: [
      { document_id: newFront.document_id, decision: 'reject', reason: 'still blurred' }] }),
    400,
    'documents[0].decision',
  )
  // Nor decide a document of the superseded submission.
  await expectRefusal(tb.operator.kyc.decide({ user_id: userId, decision: 'approve', documents: [
    { document_id: front.document_id, decision: 'approve' }] }), 400, 'documents[0].document_id')
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'pending',
    'a refused decision changed nothing')

  tb.clock.advance(60_000)
  const approvedAt = iso(tb.clock.now())
  const approved = await tb.operator.kyc.decide({ user_id: userId, decision: 'approve' })
  assert.equal(approved.user.kyc_status, 'approved')
  assert.equal(approved.user.verified, true)
  assert.equal(approved.user.kyc_rejection_reason, undefined)
  assert.ok(approved.documents.every((d) => d.decision === 'approved'),
    'approval approves every undecided document')
  assert.ok(approved.account, "approving a person's KYC opens the personal entity's first account")
  const accounts = (await p.client.accounts.getByEntity({ entity_id: entityId })).accounts
  assert.deepEqual(accounts.map((a) => a.account_id), [approved.account.account_id])
  assert.equal((await p.client.entities.info({ entity_id: entityId })).approved, true)

  // Nothing waits any more: deciding again → 409, submitting again → 409.
  await expectRefusal(tb.operator.kyc.decide({ user_id: userId, decision: 'approve' }), 409,
    undefined, 'invalid_state')
  await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: second.names.front, proof_of_residence: second.names.proof }), 409, undefined,
      'invalid_state')

  await assertKycHistory(userId, { frontId: front.document_id, proofId: proof.document_id,
    accountId: approved.account.account_id, frozen: first.shown.documents, submittedAt,
    rejectedAt, approvedAt })
})

test('kyc review - a decision without a pending submission → 409; bad decisions → 400', async () => {
  const userId = await businessUser()
  await expectRefusal(tb.operator.kyc.decide({ user_id: userId, decision: 'approve' }), 409,
    undefined, 'invalid_state')
  await expectRefusal(tb.operator.kyc.decide({ user_id: randomUUID(), decision: 'approve' }), 404)
  const { byType } = await submit(userId, 1_763_800_030)
  await expectRefusal(tb.operator.kyc.decide({ user_id: userId, decision: 'reject' }), 400,
    'reason')
  await expectRefusal(
    tb.operator.kyc.decide({ user_id: userId, decision: 'reject', reason: 'no',
      documents: [{ document_id: byType.get('id_front')!.document_id, decision: 'reject' }] }),
    400,
    'documents[0].reason',
  )
  await expectRefusal(tb.operator.kyc.decide({ user_id: userId, decision: 'approve', documents: [
    { document_id: randomUUID(), decision: 'approve' }] }), 400, 'documents[0].document_id')
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission?.state, 'pending')
  assert.ok(shown.documents.every((d) => d.decision === null))
  assert.deepEqual((await tb.operator.audit.list({ subject_id: userId })).entries.map(
    (e) => e.action), ['kyc.submitted'])
})

test("kyc review - approving a business entity's user opens no account and leaves the entity's KYB alone", async () => {
  const userId = await businessUser()
  await submit(userId, 1_763_800_040)
  const approved = await tb.operator.kyc.decide({ user_id: userId, decision: 'approve' })
  assert.equal(approved.user.kyc_status, 'approved')
  assert.equal(approved.account, null)
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: businessId })).accounts, [])
  assert.equal((await p.client.entities.info({ entity_id: businessId })).approved, false)
  assert.deepEqual((await eventsOf(tb, userId)).map((e) => e.type),
    ['kyc.submitted', 'kyc.approved'])
})

test('kyc review - ops.user.kyc and ops.entity.review decisions are audited with the operator credential and time', async () => {
  const userId = await businessUser()
  await submit(userId, 1_763_800_050)
  tb.clock.advance(60_000)
  const at = iso(tb.clock.now())
  const { user } = await tb.operator.users.kyc({ user_id: userId, status: 'rejected',
    reason: 'checked by telephone' })
  assert.equal(user.kyc_status, 'rejected')
  const audit = (await tb.operator.audit.list({ subject_id: userId })).entries
  assert.deepEqual(audit.map((e) => [e.action, e.actor, e.at]), [['kyc.rejected', operatorId, at],
    ['kyc.submitted', p.credentialId, audit[1]!.at]])
  assert.equal(audit[0]!.details.reason, 'checked by telephone')
  assert.equal(audit[0]!.details.via, 'ops.user.kyc')
  // The pending submission took the decision too.
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission?.state, 'rejected')
  assert.equal(shown.submission?.decided_by, operatorId)

  const { id: entityId } = await p.client.entities.create(businessEntity())
  tb.clock.advance(60_000)
  const reviewed = await tb.operator.entities.review({ entity_id: entityId, decision: 'approve' })
  assert.ok(reviewed.account)
  const entityAudit = (await tb.operator.audit.list({ subject_id: entityId })).entries
  assert.deepEqual(entityAudit.map((e) => [e.action, e.actor, e.at]),
    [['entity.approved', operatorId, iso(tb.clock.now())]])
  assert.equal(entityAudit[0]!.details.account_id, reviewed.account.account_id)
})

test('kyc review - ops.kyc.list: pending applications oldest first, filtered by partner', async () => {
  const other = await onboardPartner(tb, { approve: true })
  const a = await businessUser()
  await submit(a, 1_763_800_060)
  const mine = (await tb.operator.kyc.list({ partner_id: p.partnerId })).applications
  assert.ok(mine.every((x) => x.partner_id === p.partnerId && x.kyc_status === 'pending'))
  assert.equal(mine.at(-1)?.user_id, a)
  assert.deepEqual((await tb.operator.kyc.list({ partner_id: other.partnerId })).applications, [])
  const seconds = mine.map((x) => Date.parse(x.submitted_at))
  assert.deepEqual(seconds, [...seconds].sort((x, y) => x - y))
})

test('kyc review - ops.user.kyc on a pending submission decides it: rejected or approved emit kyc.* events; approval approves its documents', async () => {
  const rejectedUser = await businessUser()
  await submit(rejectedUser, 1_763_800_070)
  await tb.operator.users.kyc({ user_id: rejectedUser, status: 'rejected',
    reason: 'seen in branch: not the holder' })
  const rejectedEvents = await eventsOf(tb, rejectedUser)
  assert.deepEqual(rejectedEvents.map((e) => [e.type, e.data.kyc_status]),
    [['kyc.submitted', 'pending'], ['kyc.rejected', 'rejected']])
  assert.equal(rejectedEvents[1]!.data.kyc_rejection_reason, 'seen in branch: not the holder')
  assert.ok((await tb.operator.kyc.show({ user_id: rejectedUser })).documents.every(
    (d) => d.decision === null), 'a rejection leaves the documents undecided')

  const approvedUser = await businessUser()
  await submit(approvedUser, 1_763_800_071, { back: png() })
  const { user } = await tb.operator.users.kyc({ user_id: approvedUser, status: 'approved' })
  assert.equal(user.kyc_status, 'approved')
  const shown = await tb.operator.kyc.show({ user_id: approvedUser })
  assert.equal(shown.submission?.state, 'approved')
  assert.deepEqual(shown.documents.map((d) => d.decision), ['approved', 'approved', 'approved'])
  assert.deepEqual((await eventsOf(tb, approvedUser)).map((e) => e.type),
    ['kyc.submitted', 'kyc.approved'])
  assert.deepEqual((await tb.operator.audit.list({ subject_id: approvedUser })).entries.map(
    (e) => [e.action, e.actor]), [['kyc.approved', operatorId], ['kyc.submitted', p.credentialId]])
})

test("kyc review - the console's approval note says what approving does: a person's opens the first account, a business user's none", async () => {
  const holder = await person()
  const staff = await businessUser()
  const noteOf = (shown: Parameters<typeof kycShowBody>[0]) =>
    kycShowBody(shown, 'csrf').text.replace(/\s+/g, ' ')
  const personShown = (await submit(holder.userId, 1_763_800_070)).shown
  assert.equal(personShown.entity_holder, true)
  assert.match(noteOf(personShown), /Approving approves this person's entity too and, when it has no account yet, opens its first account\./)
  const staffShown = (await submit(staff, 1_763_800_080)).shown
  assert.equal(staffShown.entity_holder, false)
  assert.match(noteOf(staffShown), /Approving verifies this user of a business only: it opens no account/)
  assert.doesNotMatch(noteOf(staffShown), /opens its first account/)

  // What the notes say is what happens.
  const personal = await tb.operator.kyc.decide({ user_id: holder.userId, decision: 'approve' })
  assert.ok(personal.account)
  assert.equal((await p.client.accounts.getByEntity({ entity_id: holder.entityId })).accounts
    .length, 1)
  const business = await tb.operator.kyc.decide({ user_id: staff, decision: 'approve' })
  assert.equal(business.account, null)
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: businessId })).accounts, [])
})
