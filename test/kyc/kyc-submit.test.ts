import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { Objm } from '@nats-io/obj'
import { BankClient } from '../../src/client/index.ts'
import { document_bytes_max } from '../../src/kyc/kyc-contract.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, userRequest } from '../support/fixtures.ts'
import { clientFor, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, eventsOf, jpeg, kycApplicants, kycNames, largePdf, pdf, png, putObjects, sdk_bucket_bytes_max, sdk_bucket_ttl_days, sha256 } from './helpers.ts'

// A partner's KYC submission (svc.user.<partner_id>.upload_kyc_documents) with the real
// JetStream Object Store of the test's nats-server: the reference SDK's flow, every refusal
// (each naming the document and storing nothing), tenancy and permissions.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner
let other: TestPartner
const applicants = kycApplicants(tb, '850630')

before(async () => {
  await tb.ready
  ;[p, other] = await applicants.onboard()
})

/** A new user of a business entity of partner `owner` (KYC not_started); resolves with their id. */
const applicant = (owner: TestPartner = p): Promise<string> => applicants.applicant(owner)

/** A refused submission stored nothing: no submission, the user still not_started, no event. */
async function assertNothingStored(userId: string, owner: TestPartner = p): Promise<void> {
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission, null)
  assert.deepEqual(shown.documents, [])
  const { user } = await owner.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'not_started')
  assert.equal(user.kyc_submitted_at, undefined)
  assert.deepEqual((await eventsOf(tb, userId)).map((e) => e.type), [])
  assert.deepEqual((await tb.operator.audit.list({ subject_id: userId })).entries, [])
}

/** What the operator is shown of the SDK's submission: each document's metadata and hash. */
async function assertOperatorView(userId: string, names: ReturnType<typeof kycNames>,
  { front, back, proof }: { front: Uint8Array; back: Uint8Array; proof: Uint8Array }) {
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.partner_id, p.partnerId)
  assert.equal(shown.submission?.state, 'pending')
  assert.equal(shown.submission?.submitted_by, p.credentialId)
  // In the order the request named them, the id back (named by none) last.
  assert.deepEqual(shown.documents.map((d) => d.name), [names.front, names.proof, names.back])
  const byName = new Map(shown.documents.map((d) => [d.name, d]))
  assert.deepEqual([...byName.keys()].sort(), [names.back, names.front, names.proof].sort())
  const expect = [
    [names.front, 'id_front', 'image/jpeg', 'id-front.jpg', front],
    [names.back, 'id_back', 'image/png', 'id-back.png', back],
    [names.proof, 'proof_of_residence', 'application/pdf', 'municipal-account.pdf', proof],
  ] as const
  for (const [name, docType, contentType, original, bytes] of expect) {
    const d = byName.get(name)!
    assert.equal(d.doc_type, docType)
    assert.equal(d.content_type, contentType)
    assert.equal(d.original_filename, original)
    assert.equal(d.size, bytes.length)
    assert.equal(d.sha256, sha256(bytes))
    assert.equal(d.decision, null)
    assert.equal(d.deleted_at, null)
  }
  const listed = await tb.operator.kyc.list({ partner_id: p.partnerId })
  const application = listed.applications.find((a) => a.user_id === userId)
  assert.equal(application?.documents, 3)
  assert.equal(application?.kyc_status, 'pending')
}

test('kyc - the reference SDK flow: bucket as KycDocumentUploader makes it, upload_kyc_documents → {success, message}, user pending with 3 documents', async () => {
  const userId = await applicant()
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
  tb.clock.advance(60_000)
  const names = kycNames(userId)
  const front = jpeg()
  const back = png()
  const proof = pdf('municipal account, 12 Main Road')
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: front, [names.back]: back,
      [names.proof]: proof }, {
    [names.front]: 'id-front.jpg',
    [names.back]: 'id-back.png',
    [names.proof]: 'municipal-account.pdf',
  })
  // The bucket is the SDK's: file storage, one replica, 90 days, 100 MB.
  const status = await (await new Objm(tb.nc).open(`kyc_dropbox_${userId}`)).status()
  assert.equal(status.storage, 'file')
  assert.equal(status.replicas, 1)
  assert.equal(status.ttl, sdk_bucket_ttl_days * 24 * 3600 * 1_000_000_000)
  assert.equal(status.streamInfo.config.max_bytes, sdk_bucket_bytes_max)

  // The body exactly as UserService.upload_kyc_documents serialises UploadKYCDocumentsRequest.
  const body = JSON.stringify({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  const reply = await rawRequest(tb, `svc.user.${p.partnerId}.upload_kyc_documents`, body,
    { token: p.token })
  assert.equal(reply.code, 200)
  assert.deepEqual(Object.keys(reply.body).sort(), ['message', 'success'])
  assert.equal(reply.body.success, true)
  assert.match(reply.body.message, /3 documents/)

  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'pending')
  assert.equal(user.kyc_submitted_at, iso(tb.clock.now()))
  assert.equal(user.kyc_rejection_reason, undefined)

  await assertOperatorView(userId, names, { front, back, proof })

  const events = await eventsOf(tb, userId)
  assert.deepEqual(events.map((e) => [e.type, e.partner_id, e.data.kyc_status]),
    [['kyc.submitted', p.partnerId, 'pending']])
})

test('kyc - without an id back in the bucket the submission has 2 documents', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  const reply = await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  assert.equal(reply.success, true)
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.deepEqual(shown.documents.map((d) => d.doc_type).sort(),
    ['id_front', 'proof_of_residence'])
})

test("kyc - a person (personal entity, pending since creation) submits the same way; kyc_submitted_at moves to the submission", async () => {
  const userId = (await p.client.entities.create(numberedPersonalEntity())).user_id!
  const created = (await p.client.users.get({ user_id: userId })).user
  assert.equal(created.kyc_status, 'pending')
  tb.clock.advance(3600_000)
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: png() })
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'pending')
  assert.equal(user.kyc_submitted_at, iso(tb.clock.now()))
  assert.notEqual(user.kyc_submitted_at, created.kyc_submitted_at)
  assert.equal((await tb.operator.kyc.show({ user_id: userId })).documents.length, 2)
})

test('kyc - an object missing from the bucket → 400 naming its field; nothing stored', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front') })
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field),
    ['proof_of_residence'])
  await assertNothingStored(userId)
})

test('kyc - no bucket at all → 400 naming both documents; nothing stored', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field).sort(),
    ['id_document', 'proof_of_residence'])
  await assertNothingStored(userId)
})

test('kyc - an empty file → 400 naming its field; nothing stored', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: new Uint8Array(),
    [names.proof]: pdf('proof') })
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field), ['id_document'])
  assert.match(JSON.stringify(error.details), /empty/)
  await assertNothingStored(userId)
})

test('kyc - a file of 10 MB + 1 byte → 400 naming its field; one of exactly 10 MB is taken', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  const over = largePdf(document_bytes_max + 1)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: over })
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field),
    ['proof_of_residence'])
  assert.match(JSON.stringify(error.details), new RegExp(String(document_bytes_max)))
  await assertNothingStored(userId)

  // At the limit: the same object one byte shorter goes through, its hash the bytes'.
  const atLimit = over.subarray(0, document_bytes_max)
  const later = kycNames(userId, 1_763_800_100)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [later.proof]: atLimit })
  // Copying 10 MB into the database takes seconds on a loaded machine: this client waits
  // as long as the reference SDK's apps do (30 s), and more, rather than the default 10 s.
  const patient = new BankClient({ connection: tb.nc, token: p.token, partnerId: p.partnerId,
    timeoutMs: 60_000 })
  await patient.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: later.proof })
  const proof = (await tb.operator.kyc.show({ user_id: userId })).documents.find(
    (d) => d.name === later.proof)!
  assert.equal(proof.size, document_bytes_max)
  assert.equal(proof.sha256, sha256(atLimit))
})

test('kyc - a text file named .pdf is refused by its content (400), whatever its name says', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: new TextEncoder().encode(
    'just some text, not a PDF'), [names.proof]: pdf('proof') }, 'id-front.pdf')
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field), ['id_document'])
  assert.match(JSON.stringify(error.details), /PDF, JPEG or PNG/)
  await assertNothingStored(userId)
})

test('kyc - both documents failing are reported together, each under its field', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: new TextEncoder().encode(
    'GIF89a not accepted'), [names.proof]: new Uint8Array([0x50, 0x4b, 0x03, 0x04]) })
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  assert.deepEqual((error.details as Array<{ field: string }>).map((d) => d.field).sort(),
    ['id_document', 'proof_of_residence'])
  assert.match(error.message, /and 1 more/)
  // Missing and empty together too.
  const second = await applicant()
  const n2 = kycNames(second)
  await putObjects(tb.nc, `kyc_dropbox_${second}`, { [n2.proof]: new Uint8Array() })
  const both = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: second,
    id_document: n2.front, proof_of_residence: n2.proof }), 400, 'proof_of_residence')
  assert.deepEqual((both.details as Array<{ field: string }>).map((d) => d.field).sort(),
    ['id_document', 'proof_of_residence'])
  await assertNothingStored(userId)
  await assertNothingStored(second)
})

test('kyc - a bad id back in the bucket is refused under id_back', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.back]: new TextEncoder().encode('not an image'), [names.proof]: pdf('proof') })
  await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof }), 400, 'id_back')
  await assertNothingStored(userId)
})

test('kyc - both fields naming one object → 400', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front') })
  await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.front }), 400, 'proof_of_residence')
  await assertNothingStored(userId)
})

test("kyc - another partner's user id → 404 and nothing is copied, though the bucket is full", async () => {
  const userId = await applicant(p)
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  await expectRefusal(other.client.users.uploadKycDocuments(
    { user_id: userId, id_document: names.front, proof_of_residence: names.proof }), 404)
  await assertNothingStored(userId, p)
  const count = await tb.bank.database.db.selectFrom('kyc_documents').select((eb) =>
    eb.fn.countAll<string>().as('n')).where('owner_id', '=', userId).executeTakeFirstOrThrow()
  assert.equal(Number(count.n), 0)
  // An unknown user id is 404 alike.
  await expectRefusal(p.client.users.uploadKycDocuments(
    { user_id: randomUUID(), id_document: names.front, proof_of_residence: names.proof }), 404)
})

test('kyc - a user whose KYC is approved → 409, nothing stored', async () => {
  const { id: entityId } = await p.client.entities.create(businessEntity())
  const { userId } = await p.client.users.create(userRequest(entityId, { verified: true }))
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'approved')
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof }), 409, undefined, 'invalid_state')
  assert.equal((await tb.operator.kyc.show({ user_id: userId })).submission, null)
})

test('kyc - request shape: required names (null → 400 is required), bad ids, unknown fields', async () => {
  const userId = await applicant()
  const subject = `svc.user.${p.partnerId}.upload_kyc_documents`
  const asSent = async (body: unknown) => rawRequest(tb, subject, JSON.stringify(body),
    { token: p.token })
  const nullProof = await asSent({ user_id: userId, id_document: 'a', proof_of_residence: null })
  assert.equal(nullProof.code, 400)
  assert.ok(nullProof.body.error.details.some((d: { field: string }) => d.field
    === 'proof_of_residence'))
  const empty = await asSent({ user_id: userId, id_document: '', proof_of_residence: 'b' })
  assert.equal(empty.code, 400)
  assert.ok(empty.body.error.details.some((d: { field: string }) => d.field === 'id_document'))
  const badId = await asSent({ user_id: 'not-a-uuid', id_document: 'a', proof_of_residence: 'b' })
  assert.equal(badId.code, 400)
  const unknown = await asSent({ user_id: userId, id_document: 'a', proof_of_residence: 'b',
    id_back: 'c' })
  assert.equal(unknown.code, 400)
  assert.ok(unknown.body.error.details.some((d: { field: string }) => d.field === 'id_back'))
  await assertNothingStored(userId)
})

test('kyc - permissions: a read credential may not submit (403); without a token 401', async () => {
  const userId = await applicant()
  const names = kycNames(userId)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  const readOnly = clientFor(tb, p.partnerId, (await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })).token)
  await expectRefusal(readOnly.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof }), 403)
  const anonymous = await rawRequest(tb, `svc.user.${p.partnerId}.upload_kyc_documents`,
    JSON.stringify({ user_id: userId, id_document: names.front, proof_of_residence: names.proof }))
  assert.equal(anonymous.code, 401)
  await assertNothingStored(userId)
})

test('kyc - of several id backs in the bucket the newest is taken; an object name of 256 characters → 400', async () => {
  const userId = await applicant()
  const older = kycNames(userId, 1_763_700_000)
  const newer = kycNames(userId, 1_763_800_000)
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [older.back]: png() })
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [newer.front]: pdf('front'),
    [newer.back]: jpeg(), [newer.proof]: pdf('proof') })
  await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: 'x'.repeat(256), proof_of_residence: newer.proof }), 400, 'id_document')
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: newer.front,
    proof_of_residence: newer.proof })
  const backs = (await tb.operator.kyc.show({ user_id: userId })).documents.filter(
    (d) => d.doc_type === 'id_back')
  assert.deepEqual(backs.map((d) => [d.name, d.content_type]), [[newer.back, 'image/jpeg']])
})
