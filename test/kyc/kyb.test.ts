import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import type { CompanyRegistry } from '../../src/kyc/company-registry.ts'
import { expectApiError, expectRefusal, iso } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, registrationNumber } from '../support/fixtures.ts'
import { clientFor, onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, epoch, eventsOf, fetchDocument, jpeg, operatorCredentialId, pdf, png, putObjects, sha256, submissionsOf } from './helpers.ts'

// A business entity's KYB (svc.kyb.<partner_id>.*) the way the reference SDK's UploadKybApp
// and SubmitKybApp drive it, the simulated company registry's magic numbers, the operators'
// review with its kyb.* events and audit trail, and tenancy.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner
let other: TestPartner
let operatorId: string

before(async () => {
  await tb.ready
  ;[p, other] = await Promise.all([onboardPartner(tb, { approve: true }),
    onboardPartner(tb, { approve: true })])
  operatorId = await operatorCredentialId(tb)
})

/** A registration number ending in `tail` (the simulated registry's magic digits). */
const numberEnding = (tail: string) => registrationNumber().slice(0, 10) + tail

async function business(tail = '07', owner: TestPartner = p,
    registration = numberEnding(tail)): Promise<string> {
  return (await owner.client.entities.create(
    businessEntity({ registration_number: registration }))).id
}

/**
 * UploadKybApp's uploads: business documents `<type>_<epoch>`, director documents
 * `<type>_<director_id>_<epoch>`.
 */
async function uploadAsSdk(entityId: string, directorIds: string[], at = epoch) {
  const business: Record<string, Uint8Array> = {
    [`business_registration_${at}`]: pdf(`CoR 14.3 ${at}`),
    [`proof_of_address_${at}`]: jpeg(),
    [`tax_verification_${at}`]: pdf(`tax ${at}`),
  }
  const directors: Record<string, string[]> = {}
  const objects: Record<string, Uint8Array> = { ...business }
  for (const d of directorIds) {
    directors[d] = [`director_id_front_${d}_${at}`, `director_selfie_${d}_${at}`]
    objects[`director_id_front_${d}_${at}`] = pdf(`id of ${d}`)
    objects[`director_selfie_${d}_${at}`] = png()
  }
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`, objects, 'scan.pdf')
  return { documents: Object.keys(business), directors, objects }
}

async function directorIdsOf(entityId: string, owner: TestPartner = p): Promise<string[]> {
  return (await owner.client.kyb.get({ entity_id: entityId })).directors.map((d) => d.id)
}

test('kyb - registry magic numbers: 07 two directors with stable ids (across calls and partners), other one, 00 none and asked again, 99 → 503', async () => {
  const registration = numberEnding('07')
  const mine = await business('07', p, registration)
  const theirs = await business('07', other, registration)
  const reply = await rawRequest(tb, `svc.kyb.${p.partnerId}.get`,
    JSON.stringify({ entity_id: mine }), { token: p.token })
  assert.equal(reply.code, 200)
  // Exactly the keys of KYBService.GetKYBResponse and its Director record.
  assert.deepEqual(Object.keys(reply.body).sort(), ['directors', 'documents', 'entity_id',
    'metadata', 'rejection_reason', 'state'])
  assert.deepEqual(reply.body, { entity_id: mine, documents: [], directors: reply.body.directors,
    metadata: {}, state: 'not_started', rejection_reason: null })
  assert.equal(reply.body.directors.length, 2)
  for (const d of reply.body.directors) {
    assert.deepEqual(Object.keys(d).sort(), ['approved', 'documents', 'id', 'id_type', 'metadata',
      'name', 'verification_sent', 'verified'])
    assert.deepEqual([d.approved, d.verified, d.verification_sent, d.documents, d.metadata],
      [false, false, false, [], {}])
    assert.ok(d.name.length > 0)
  }
  const ids = reply.body.directors.map((d: { id: string }) => d.id)
  assert.notEqual(ids[0], ids[1])
  assert.deepEqual(await directorIdsOf(mine), ids, 'stable across calls')
  assert.deepEqual(await directorIdsOf(theirs, other), ids,
    'stable for the registration number, whoever asks')

  assert.equal((await directorIdsOf(await business('42'))).length, 1)

  // 00: none yet. The empty answer is not kept: the registry is asked on every get until it names
  // someone.
  const registry = (tb.bank.services.kyb as unknown as { registry: CompanyRegistry }).registry
  const lookup = registry.directors.bind(registry)
  const asked: string[] = []
  registry.directors = (n) => (asked.push(n), lookup(n))
  try {
    const fresh = numberEnding('00')
    const none = await business('00', p, fresh)
    assert.deepEqual((await p.client.kyb.get({ entity_id: none })).directors, [])
    assert.deepEqual((await p.client.kyb.get({ entity_id: none })).directors, [])
    assert.deepEqual(asked, [fresh, fresh])
    // Once directors are on record they are kept: asked once more, then not again.
    asked.length = 0
    await p.client.kyb.get({ entity_id: mine })
    assert.deepEqual(asked, [])
  } finally {
    registry.directors = lookup
  }

  const failing = await business('99')
  const unavailable = await expectApiError(p.client.kyb.get({ entity_id: failing }), 503)
  assert.ok(unavailable.message.length > 0)
  await expectApiError(
    p.client.kyb.submit({ entity_id: failing, documents: ['business_registration_1'] }), 503)
})

/** The operator's view of a submitted KYB: each document's metadata and hash, the list. */
async function assertOperatorView(entityId: string,
  uploaded: Awaited<ReturnType<typeof uploadAsSdk>>, directorCount: number) {
  const shown = await tb.operator.kyb.show({ entity_id: entityId })
  assert.equal(shown.partner_id, p.partnerId)
  assert.equal(shown.state, 'submitted')
  assert.equal(shown.submission?.submitted_by, p.credentialId)
  const all = [...shown.documents, ...shown.directors.flatMap((d) => d.documents)]
  assert.equal(all.length, 3 + 2 * directorCount)
  for (const d of all) {
    assert.equal(d.sha256, sha256(uploaded.objects[d.name]!))
    assert.equal(d.size, uploaded.objects[d.name]!.length)
    assert.equal(d.original_filename, 'scan.pdf')
  }
  const selfie = shown.directors[0]!.documents.find((d) => d.doc_type === 'director_selfie')!
  assert.equal(selfie.content_type, 'image/png')
  assert.equal(selfie.director_id, shown.directors[0]!.director_id)
  assert.ok((await fetchDocument(tb, selfie.document_id)).bytes.equals(Buffer.from(png())))
  const listed = (await tb.operator.kyb.list({ partner_id: p.partnerId })).applications.find(
    (a) => a.entity_id === entityId)
  assert.equal(listed?.documents, 3 + 2 * directorCount)
  assert.equal(listed?.state, 'submitted')
}

test('kyb - the reference SDK flow: get directors, upload as KybDocumentUploader, submit → {}; state submitted, doc types from the names', async () => {
  const entityId = await business('07')
  const directorIds = await directorIdsOf(entityId)
  const uploaded = await uploadAsSdk(entityId, directorIds)
  // SubmitDocumentsRequest as Jackson writes it.
  const body = JSON.stringify({ entity_id: entityId, documents: uploaded.documents,
    directors: uploaded.directors })
  const reply = await rawRequest(tb, `svc.kyb.${p.partnerId}.submit`, body, { token: p.token })
  assert.equal(reply.code, 200)
  assert.deepEqual(reply.body, {})

  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'submitted')
  assert.equal(kyb.rejection_reason, null)
  assert.deepEqual(
    kyb.documents.map((d) => [d.key, d.doc_type, d.approved, d.rejection_reason]).sort(),
    [
      [`business_registration_${epoch}`, 'business_registration', false, null],
      [`proof_of_address_${epoch}`, 'proof_of_address', false, null],
      [`tax_verification_${epoch}`, 'tax_verification', false, null],
    ],
  )
  for (const d of kyb.directors) {
    assert.deepEqual(d.documents.map((x) => [x.key, x.doc_type]).sort(), [
      [`director_id_front_${d.id}_${epoch}`, 'director_id_front'],
      [`director_selfie_${d.id}_${epoch}`, 'director_selfie'],
    ])
  }

  // Documents in the order the request named them.
  assert.deepEqual(kyb.documents.map((d) => d.key), uploaded.documents)
  assert.deepEqual(kyb.directors.map((d) => d.documents.map((x) => x.key)),
    directorIds.map((id) => uploaded.directors[id]))

  // The operator's view: every document's metadata and the hash of the bytes frozen.
  await assertOperatorView(entityId, uploaded, directorIds.length)

  const events = await eventsOf(tb, entityId)
  assert.deepEqual(events.map((e) => [e.type, e.partner_id, e.data.state]),
    [['kyb.submitted', p.partnerId, 'submitted']])
  assert.deepEqual((await tb.operator.audit.list({ subject_id: entityId })).entries.map(
    (e) => [e.action, e.actor]), [['kyb.submitted', p.credentialId]])
})

test('kyb - submit refusals: personal entity, unknown director, no business document, missing or bad objects; nothing stored', async () => {
  const { id: personal } = await p.client.entities.create(numberedPersonalEntity())
  await expectRefusal(p.client.kyb.get({ entity_id: personal }), 400, 'entity_id')
  await expectRefusal(p.client.kyb.submit(
    { entity_id: personal, documents: ['business_registration_1'] }), 400, 'entity_id')

  const entityId = await business('42')
  const [director] = await directorIdsOf(entityId)
  const uploaded = await uploadAsSdk(entityId, [director!])
  const stranger = randomUUID()
  await expectRefusal(p.client.kyb.submit({ entity_id: entityId, documents: uploaded.documents,
    directors: { [stranger]: [`director_id_front_${director}_${epoch}`] } }), 400,
    `directors.${stranger}`)
  await expectRefusal(p.client.kyb.submit({ entity_id: entityId, documents: [],
    directors: uploaded.directors }), 400, 'documents')
  const noBusiness = await rawRequest(tb, `svc.kyb.${p.partnerId}.submit`, JSON.stringify(
    { entity_id: entityId, documents: null, directors: uploaded.directors }), { token: p.token })
  assert.equal(noBusiness.code, 400)
  assert.ok(noBusiness.body.error.details.some((d: { field: string }) => d.field === 'documents'))
  await expectRefusal(p.client.kyb.submit({ entity_id: entityId,
    documents: [`business_registration_${epoch}`, 'not_uploaded_1'] }), 400, 'documents[1]')
  await expectRefusal(
    p.client.kyb.submit({ entity_id: entityId, documents: uploaded.documents,
      directors: { [director!]: [`director_id_front_${director}_${epoch}`, 'missing_selfie'] } }),
    400,
    `directors.${director}[1]`,
  )
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`bank_statement_${epoch}`]: new TextEncoder().encode('a text file named .pdf') },
    'statement.pdf')
  await expectRefusal(p.client.kyb.submit(
    { entity_id: entityId, documents: [`bank_statement_${epoch}`] }), 400, 'documents[0]')
  // Another entity's dropbox is not this one's: the same names, the other entity's bucket.
  const sibling = await business('42')
  await expectRefusal(p.client.kyb.submit({ entity_id: sibling, documents: uploaded.documents }),
    400, 'documents[0]')

  for (const id of [entityId, sibling]) {
    assert.equal((await p.client.kyb.get({ entity_id: id })).state, 'not_started')
    assert.deepEqual(await submissionsOf(tb, id), [])
    assert.deepEqual(await eventsOf(tb, id), [])
  }
})

test('kyb - update (metadata) replies {entity_id, documents, directors, metadata} only; update_director and Jackson nulls', async () => {
  const entityId = await business('07')
  const [first, second] = await directorIdsOf(entityId)
  const reply = await rawRequest(tb, `svc.kyb.${p.partnerId}.update`,
    JSON.stringify({ entity_id: entityId, metadata: { industry: 'retail', employees: 12,
    listed: false } }), { token: p.token })
  assert.equal(reply.code, 200)
  assert.deepEqual(Object.keys(reply.body).sort(), ['directors', 'documents', 'entity_id',
    'metadata'])
  assert.deepEqual(reply.body.metadata, { industry: 'retail', employees: 12, listed: false })
  assert.equal(reply.body.directors.length, 2)
  // update replaces the metadata.
  await p.client.kyb.update({ entity_id: entityId, metadata: { industry: 'wholesale' } })
  assert.deepEqual((await p.client.kyb.get({ entity_id: entityId })).metadata,
    { industry: 'wholesale' })
  await expectRefusal(
    p.client.kyb.update({ entity_id: entityId, metadata: { nested: { no: true } } as never }), 400)

  // UpdateDirectorRequest as Jackson sends it: the fields not set are null, and change nothing.
  const ok = await rawRequest(
    tb,
    `svc.kyb.${p.partnerId}.update_director`,
    JSON.stringify({ entity_id: entityId, director_id: first, full_name: 'Thandiwe Grace Nkosi',
      email: null, metadata: null }),
    { token: p.token },
  )
  assert.equal(ok.code, 200)
  assert.deepEqual(ok.body, {})
  await p.client.kyb.updateDirector({ entity_id: entityId, director_id: first!,
    email: 'thandiwe@acme.example', metadata: { role: 'CEO' } })
  await rawRequest(tb, `svc.kyb.${p.partnerId}.update_director`,
    JSON.stringify({ entity_id: entityId, director_id: first, full_name: null, email: null,
    metadata: null }), { token: p.token })
  const shown = await tb.operator.kyb.show({ entity_id: entityId })
  const director = shown.directors.find((d) => d.director_id === first)!
  assert.deepEqual([director.full_name, director.email, director.metadata],
    ['Thandiwe Grace Nkosi', 'thandiwe@acme.example', { role: 'CEO' }])
  assert.deepEqual((await p.client.kyb.get({ entity_id: entityId })).directors.find(
    (d) => d.id === first)!.metadata, { role: 'CEO' })
  const untouched = shown.directors.find((d) => d.director_id === second)!
  assert.deepEqual([untouched.full_name, untouched.email, untouched.metadata], [null, null, {}])
  await expectRefusal(p.client.kyb.updateDirector({ entity_id: entityId, director_id: randomUUID(),
    full_name: 'Nobody' }), 404)
  await expectRefusal(p.client.kyb.updateDirector({ entity_id: entityId, director_id: first!,
    email: 'not an address' }), 400, 'email')
})

test('kyb - send_verification_email goes through the notifier and sets verification_sent', async () => {
  const entityId = await business('07')
  const [first, second] = await directorIdsOf(entityId)
  // No address given nor on record → 400 naming email (Jackson sends email: null).
  const none = await rawRequest(tb, `svc.kyb.${p.partnerId}.send_verification_email`,
    JSON.stringify({ entity_id: entityId, director_id: first, email: null }), { token: p.token })
  assert.equal(none.code, 400)
  assert.ok(none.body.error.details.some((d: { field: string }) => d.field === 'email'))
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).directors.find(
    (d) => d.id === first)!.verification_sent, false)

  const to = `director-${randomUUID().slice(0, 8)}@acme.example`
  const sent = await rawRequest(tb, `svc.kyb.${p.partnerId}.send_verification_email`,
    JSON.stringify({ entity_id: entityId, director_id: first, email: to }), { token: p.token })
  assert.equal(sent.code, 200)
  assert.deepEqual(sent.body, {})
  const { messages } = await tb.operator.sandbox.messages({ to })
  assert.equal(messages.length, 1)
  assert.match(messages[0]!.subject, /verify your identity/)
  assert.match(messages[0]!.text, /Acme Holdings/)
  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.directors.find((d) => d.id === first)!.verification_sent, true)
  assert.equal(kyb.directors.find((d) => d.id === second)!.verification_sent, false)

  // The address set with update_director serves when none is given.
  const onRecord = `second-${randomUUID().slice(0, 8)}@acme.example`
  await p.client.kyb.updateDirector({ entity_id: entityId, director_id: second!, email: onRecord })
  await p.client.kyb.sendVerificationEmail({ entity_id: entityId, director_id: second! })
  assert.equal((await tb.operator.sandbox.messages({ to: onRecord })).messages.length, 1)
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).directors.find(
    (d) => d.id === second)!.verification_sent, true)
  await expectRefusal(p.client.kyb.sendVerificationEmail(
    { entity_id: entityId, director_id: randomUUID(), email: to }), 404)
})

/**
 * The operator rejects the KYB (the second director's selfie, with a reason; the first
 * director approved and verified) a minute later; returns when.
 */
async function rejectSecondDirector(entityId: string, directorIds: string[], selfieId: string) {
  tb.clock.advance(60_000)
  const rejectedAt = iso(tb.clock.now())
  const rejected = await tb.operator.kyb.decide({
    entity_id: entityId,
    decision: 'reject',
    reason: 'the second director is not recognisable',
    documents: [{ document_id: selfieId, decision: 'reject', reason: 'face hidden' }],
    directors: [{ director_id: directorIds[0]!, approved: true, verified: true }],
  })
  assert.equal(rejected.state, 'rejected')
  assert.equal(rejected.rejection_reason, 'the second director is not recognisable')
  assert.equal(rejected.account, null)
  const afterReject = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(afterReject.state, 'rejected')
  assert.equal(afterReject.rejection_reason, 'the second director is not recognisable')
  const rejectedSelfie = afterReject.directors[1]!.documents.find(
    (d) => d.doc_type === 'director_selfie')!
  assert.deepEqual([rejectedSelfie.approved, rejectedSelfie.rejection_reason],
    [false, 'face hidden'])
  assert.deepEqual([afterReject.directors[0]!.approved, afterReject.directors[0]!.verified],
    [true, true])
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: entityId })).accounts, [])
  assert.ok((await tb.operator.kyb.list({ state: 'rejected' })).applications.some(
    (a) => a.entity_id === entityId))
  return rejectedAt
}

/** The KYB's events and audit rows: submitted, rejected, submitted again, approved. */
async function assertKybHistory(entityId: string, h: { directorIds: string[]; selfieId: string;
  accountId: string; submittedAt: string; rejectedAt: string; approvedAt: string }) {
  const { directorIds, rejectedAt, approvedAt, submittedAt } = h
  const events = await eventsOf(tb, entityId)
  assert.deepEqual(
    events.map((e) => [e.type, e.data.state]),
    [
      ['kyb.submitted', 'submitted'],
      ['kyb.rejected', 'rejected'],
      ['kyb.submitted', 'submitted'],
      ['kyb.approved', 'approved'],
    ],
  )
  assert.ok(events.every((e) => e.partner_id === p.partnerId))
  assert.equal(events[1]!.data.rejection_reason, 'the second director is not recognisable')

  const audit = (await tb.operator.audit.list({ subject_id: entityId })).entries
  assert.deepEqual(
    audit.map((e) => [e.action, e.actor, e.at]),
    [
      ['kyb.approved', operatorId, approvedAt],
      ['kyb.submitted', p.credentialId, audit[1]!.at],
      ['kyb.rejected', operatorId, rejectedAt],
      ['kyb.submitted', p.credentialId, submittedAt],
    ],
  )
  assert.equal(audit[0]!.details.account_id, h.accountId)
  assert.deepEqual(audit[2]!.details.directors,
    [{ director_id: directorIds[0], approved: true, verified: true }])
  const selfieAudit = (await tb.operator.audit.list({ subject_id: h.selfieId })).entries
  assert.deepEqual(selfieAudit.map((e) => [e.action, e.actor, e.at, e.details.reason]),
    [['document.rejected', operatorId, rejectedAt, 'face hidden']])
}

test('kyb review - reject (per document, with reason) → rejected; resubmit → submitted; approve with directors approved and verified opens the first account', async () => {
  const entityId = await business('07')
  const directorIds = await directorIdsOf(entityId)
  tb.clock.advance(60_000)
  const submittedAt = iso(tb.clock.now())
  const first = await uploadAsSdk(entityId, directorIds, epoch)
  await p.client.kyb.submit({ entity_id: entityId, documents: first.documents,
    directors: first.directors })
  const shown = await tb.operator.kyb.show({ entity_id: entityId })
  const selfie = shown.directors[1]!.documents.find((d) => d.doc_type === 'director_selfie')!

  const rejectedAt = await rejectSecondDirector(entityId, directorIds, selfie.document_id)

  // Resubmitted with a new selfie: submitted again, the rejected submission superseded.
  tb.clock.advance(60_000)
  const second = await uploadAsSdk(entityId, directorIds, epoch + 100)
  await p.client.kyb.submit({ entity_id: entityId, documents: second.documents,
    directors: second.directors })
  const resubmitted = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(resubmitted.state, 'submitted')
  assert.equal(resubmitted.rejection_reason, null)
  assert.ok(resubmitted.documents.every((d) => d.key.endsWith(`_${epoch + 100}`)))
  assert.deepEqual((await submissionsOf(tb, entityId)).map((s) => s.state),
    ['superseded', 'pending'])

  await expectRefusal(tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve',
    directors: [{ director_id: randomUUID(), approved: true }] }), 400, 'directors[0].director_id')
  tb.clock.advance(60_000)
  const approvedAt = iso(tb.clock.now())
  const approved = await tb.operator.kyb.decide({
    entity_id: entityId,
    decision: 'approve',
    directors: directorIds.map((id) => ({ director_id: id, approved: true, verified: true })),
  })
  assert.equal(approved.state, 'approved')
  assert.ok(approved.account)
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: entityId })).accounts.map(
    (a) => a.account_id), [approved.account.account_id])
  const final = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(final.state, 'approved')
  assert.ok(final.directors.every((d) => d.approved && d.verified))
  assert.ok([...final.documents, ...final.directors.flatMap((d) => d.documents)].every(
    (d) => d.approved && d.rejection_reason === null))
  assert.equal((await p.client.entities.info({ entity_id: entityId })).approved, true)

  await expectRefusal(tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve' }), 409,
    undefined, 'invalid_state')
  await expectRefusal(p.client.kyb.submit({ entity_id: entityId, documents: second.documents }),
    409, undefined, 'invalid_state')

  await assertKybHistory(entityId, { directorIds, selfieId: selfie.document_id,
    accountId: approved.account.account_id, submittedAt, rejectedAt, approvedAt })
})

test('kyb review - decide on nothing submitted → 409; a personal entity → 400', async () => {
  const entityId = await business('42')
  await expectRefusal(tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve' }), 409,
    undefined, 'invalid_state')
  await expectRefusal(tb.operator.kyb.decide({ entity_id: entityId, decision: 'reject' }), 400,
    'reason')
  const { id: personal } = await p.client.entities.create(numberedPersonalEntity())
  await expectRefusal(tb.operator.kyb.decide({ entity_id: personal, decision: 'approve' }), 400,
    'entity_id')
  await expectRefusal(tb.operator.kyb.show({ entity_id: personal }), 400, 'entity_id')
  await expectRefusal(tb.operator.kyb.show({ entity_id: randomUUID() }), 404)
})

test("kyb - another partner's entity → 404 on every svc.kyb subject, and nothing of it changes", async () => {
  const entityId = await business('07')
  const [director] = await directorIdsOf(entityId)
  const uploaded = await uploadAsSdk(entityId, [director!])
  await expectRefusal(other.client.kyb.get({ entity_id: entityId }), 404)
  await expectRefusal(other.client.kyb.submit({ entity_id: entityId, documents: uploaded.documents,
    directors: uploaded.directors }), 404)
  await expectRefusal(other.client.kyb.update({ entity_id: entityId, metadata: { taken: true } }),
    404)
  await expectRefusal(other.client.kyb.updateDirector({ entity_id: entityId, director_id: director!,
    email: 'evil@example.com' }), 404)
  await expectRefusal(other.client.kyb.sendVerificationEmail(
    { entity_id: entityId, director_id: director!, email: 'evil@example.com' }), 404)
  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'not_started')
  assert.deepEqual(kyb.metadata, {})
  assert.equal(kyb.directors[0]!.verification_sent, false)
  assert.equal((await tb.operator.kyb.show({ entity_id: entityId })).directors[0]!.email, null)
  assert.deepEqual((await tb.operator.sandbox.messages({ to: 'evil@example.com' })).messages, [])
})

test('kyb - permissions: a read credential may get but not submit, update or e-mail (403)', async () => {
  const entityId = await business('42')
  const [director] = await directorIdsOf(entityId)
  const uploaded = await uploadAsSdk(entityId, [director!])
  const readOnly = clientFor(tb, p.partnerId, (await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })).token)
  assert.equal((await readOnly.kyb.get({ entity_id: entityId })).state, 'not_started')
  await expectRefusal(readOnly.kyb.submit({ entity_id: entityId, documents: uploaded.documents }),
    403)
  await expectRefusal(readOnly.kyb.update({ entity_id: entityId, metadata: { a: 1 } }), 403)
  await expectRefusal(readOnly.kyb.updateDirector({ entity_id: entityId, director_id: director!,
    full_name: 'X' }), 403)
  await expectRefusal(readOnly.kyb.sendVerificationEmail(
    { entity_id: entityId, director_id: director!, email: 'x@acme.example' }), 403)
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).state, 'not_started')
})

test('kyb - a business with no directors on record yet may submit its business documents (Jackson directors: null)', async () => {
  const entityId = await business('00')
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`business_registration_${epoch}`]: pdf('new company') })
  const reply = await rawRequest(tb, `svc.kyb.${p.partnerId}.submit`,
    JSON.stringify({ entity_id: entityId, documents: [`business_registration_${epoch}`],
    directors: null }), { token: p.token })
  assert.equal(reply.code, 200)
  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'submitted')
  assert.deepEqual(kyb.directors, [])
  assert.deepEqual(kyb.documents.map((d) => d.doc_type), ['business_registration'])
})

test('kyb - limits: at most 50 documents in all, object names of at most 255 characters, one object named once, metadata of 50 keys and 4 KB', async () => {
  const entityId = await business('42')
  const [director] = await directorIdsOf(entityId)
  const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}_${i}`)
  // 50 in all is the limit: the 51st is refused before any object is read.
  await expectRefusal(p.client.kyb.submit({ entity_id: entityId, documents: names(40, 'business'),
    directors: { [director!]: names(11, 'director') } }), 400, 'documents')
  const fifty = await expectRefusal(p.client.kyb.submit({ entity_id: entityId,
    documents: names(40, 'business'), directors: { [director!]: names(10, 'director') } }), 400)
  assert.ok(!(fifty.details as Array<{ field: string }>).some((d) => d.field === 'documents'),
    'fifty documents are not too many (they are refused as missing)')
  // The schema names the element documents.0 (src/contract/field-path.ts writes a trailing index
  // so), the service documents[0].
  const tooLong = await expectRefusal(
    p.client.kyb.submit({ entity_id: entityId, documents: ['x'.repeat(256)] }), 400)
  assert.ok((tooLong.details as Array<{ field: string }>).some((d) => /^documents(\[0\]|\.0)$/.test(d.field)), JSON.stringify(tooLong.details))
  // 255 characters is a name (refused only because no such object is in the bucket).
  const longest = await expectRefusal(
    p.client.kyb.submit({ entity_id: entityId, documents: ['x'.repeat(255)] }), 400, 'documents[0]')
  assert.match(JSON.stringify(longest.details), /is not in bucket/)
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`business_registration_${epoch}`]: pdf('reg') })
  await expectRefusal(
    p.client.kyb.submit({ entity_id: entityId, documents: [`business_registration_${epoch}`],
      directors: { [director!]: [`business_registration_${epoch}`] } }),
    400,
    `directors.${director}[0]`,
  )
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).state, 'not_started')

  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
  assert.equal(Object.keys(
    (await p.client.kyb.update({ entity_id: entityId, metadata: keys(50) })).metadata).length, 50)
  await expectRefusal(p.client.kyb.update({ entity_id: entityId, metadata: keys(51) }), 400,
    'metadata')
  // 4096 bytes as JSON is the limit: exactly 4096 is taken, 4097 is not.
  const sized = (e: number) => ({ a: 'v'.repeat(1000), b: 'v'.repeat(1000), c: 'v'.repeat(1000),
    d: 'v'.repeat(1000), e: 'v'.repeat(e) })
  assert.equal(Buffer.byteLength(JSON.stringify(sized(60))), 4096)
  assert.deepEqual(
    (await p.client.kyb.update({ entity_id: entityId, metadata: sized(60) })).metadata, sized(60))
  await expectRefusal(p.client.kyb.update({ entity_id: entityId, metadata: sized(61) }), 400,
    'metadata')
  assert.equal(Object.keys((await p.client.kyb.get({ entity_id: entityId })).metadata).length, 5,
    'a refused update changed nothing')
})
