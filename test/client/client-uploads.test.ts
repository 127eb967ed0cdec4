import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { Objm } from '@nats-io/obj'
import { BankApiError, BankClient, DocumentCheckError, DropboxError, type DocumentFile, type KybDocumentFile } from '../../src/client/index.ts'
import { document_bytes_max } from '../../src/kyc/kyc-contract.ts'
import { expectRefusal } from '../support/assertions.ts'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { jpeg, kycApplicants, largePdf, pdf, png, sha256 } from '../kyc/helpers.ts'

// The SDK's uploads (src/client/uploads.ts) against a real bank and the real JetStream Object
// Store of the test's nats-server: `bank.kyc.uploadDocuments` and `bank.kyb.uploadDocuments`
// put the files into the partner's dropbox and submit them, the bank takes them (what the
// operator sees is what was uploaded), a retry is safe, files the bank would refuse are
// refused before anything is sent, and another partner's ids are refused by the bank with
// nothing put into a dropbox.

const tb = useTestBank()
/** A bank on NATS set up as in production: each partner in a NATS account of its own. */
const prod = useTestBank({ natsAuthority: true })
let p: TestPartner
let other: TestPartner
const applicants = kycApplicants(tb, '770412')
/** Every dropbox a test may have made, destroyed after the file (see destroyBucketsAfter). */
const buckets = new Set<string>()

before(async () => {
  await tb.ready
  ;[p, other] = await applicants.onboard()
})

after(async () => {
  const nc = await connect({ servers: tb.natsUrl })
  try {
    const objm = new Objm(nc)
    for (const bucket of buckets) await objm.open(bucket).then((s) => s.destroy()).catch(() => {})
  } finally {
    await nc.close()
  }
})

const kycBucket = (userId: string) => { buckets.add(`kyc_dropbox_${userId}`)
  return `kyc_dropbox_${userId}` }
const kybBucket = (entityId: string) => { buckets.add(`kyb_dropbox_${entityId}`)
  return `kyb_dropbox_${entityId}` }

/** The objects of a bucket by name, with their size and `original_filename`; null: no bucket. */
async function objectsIn(bucket: string) {
  const store = await new Objm(tb.nc).open(bucket).catch(() => null)
  if (!store) return null
  const infos = (await store.list()).filter((i) => !i.deleted)
  // A listing gives each object's headers as a plain record of lists (src/kyc/dropbox.ts).
  const filename = (headers: unknown) =>
    (headers as Record<string, string[]> | undefined)?.original_filename?.[0]
  return new Map(infos.map((i) => [i.name, { size: i.size, filename: filename(i.headers) }]))
}

const file = (bytes: Uint8Array, filename: string,
  content_type: DocumentFile['content_type']): DocumentFile => ({ file: bytes, filename,
  content_type })

/** A business entity of `owner` whose registration number ends in 07: two directors. */
async function business(owner: TestPartner = p): Promise<string> {
  const registration = registrationNumber().slice(0, 10) + '07'
  return (await owner.client.entities.create(
    businessEntity({ registration_number: registration }))).id
}

/** Refused by the SDK itself: a DocumentCheckError (a 400 invalid_request) naming `fields`. */
async function refusedLocally(call: Promise<unknown>,
    fields: string[]): Promise<DocumentCheckError> {
  const error = await expectRefusal(call, 'invalid_request')
  assert.ok(error instanceof DocumentCheckError, `${error.name}: ${error.message}`)
  assert.deepEqual(error.details.map((d) => d.field).sort(), [...fields].sort(), error.message)
  return error
}

test('uploads - kyc: the files go into the user\'s dropbox and are submitted; the operator sees exactly them; the user is pending', async () => {
  const userId = await applicants.applicant(p)
  const front = jpeg()
  const back = png()
  const proof = pdf('municipal account, 12 Main Road')
  const reply = await p.client.kyc.uploadDocuments({
    user_id: userId,
    id_document: file(front, 'id-front.jpg', 'image/jpeg'),
    proof_of_residence: file(proof, 'municipal-account.pdf', 'application/pdf'),
    id_back: file(back, 'id-back.png', 'image/png'),
  })
  assert.equal(reply.success, true)
  assert.match(reply.message, /3 documents/)
  assert.deepEqual(reply.documents.map((d) => [d.field, d.size, d.sha256, d.content_type]), [
    ['id_document', front.length, sha256(front), 'image/jpeg'],
    ['proof_of_residence', proof.length, sha256(proof), 'application/pdf'],
    ['id_back', back.length, sha256(back), 'image/png'],
  ])
  const names = reply.documents.map((d) => d.name)
  assert.match(names[0]!, new RegExp(`^kyc_id_front_${userId}_\\d+$`))
  assert.match(names[1]!, new RegExp(`^kyc_proof_of_residence_${userId}_\\d+$`))
  assert.match(names[2]!, new RegExp(`^kyc_id_back_${userId}_\\d+$`))

  const objects = await objectsIn(kycBucket(userId))
  assert.deepEqual([...objects!.entries()].sort(), [
    [names[0], { size: front.length, filename: 'id-front.jpg' }],
    [names[1], { size: proof.length, filename: 'municipal-account.pdf' }],
    [names[2], { size: back.length, filename: 'id-back.png' }],
  ].sort())

  const { user } = await p.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'pending')
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission?.state, 'pending')
  assert.deepEqual(shown.documents.map((d) => [d.name, d.doc_type, d.content_type,
    d.original_filename, d.size, d.sha256]), [
    [names[0], 'id_front', 'image/jpeg', 'id-front.jpg', front.length, sha256(front)],
    [names[1], 'proof_of_residence', 'application/pdf', 'municipal-account.pdf', proof.length,
      sha256(proof)],
    [names[2], 'id_back', 'image/png', 'id-back.png', back.length, sha256(back)],
  ])
})

test('uploads - kyc: uploading the same files again (a retry) puts them under the same names and submits again', async () => {
  const userId = await applicants.applicant(p)
  const request = {
    user_id: userId.toUpperCase(),
    id_document: file(pdf('id'), 'id.pdf', 'application/pdf'),
    proof_of_residence: file(pdf('proof'), 'proof.pdf', 'application/pdf'),
  }
  const first = await p.client.kyc.uploadDocuments(request)
  const again = await p.client.kyc.uploadDocuments(request)
  assert.equal(again.success, true)
  assert.deepEqual(again.documents, first.documents)
  // The id written in capitals is the user's id as the bank reads it: one bucket, in lower case.
  assert.ok(first.documents.every((d) => d.bucket === kycBucket(userId)))
  const objects = await objectsIn(kycBucket(userId))
  assert.deepEqual([...objects!.keys()].sort(), first.documents.map((d) => d.name).sort())
  // The second submission replaced the first, still waiting for review.
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission?.state, 'pending')
  assert.deepEqual(shown.documents.map((d) => d.sha256), first.documents.map((d) => d.sha256))
  const listed = await tb.operator.kyc.list({ partner_id: p.partnerId })
  assert.equal(listed.applications.filter((a) => a.user_id === userId).length, 1)
})

test('uploads - kyb: business and directors\' files go into the entity\'s dropbox and are submitted; the operator sees each with its director', async () => {
  const entityId = await business()
  const directors = (await p.client.kyb.get({ entity_id: entityId })).directors.map((d) => d.id)
  assert.equal(directors.length, 2)
  const registration = pdf('CoR 14.3')
  const address = jpeg()
  const ids = directors.map((d) => pdf(`id of ${d}`))
  const doc = (doc_type: string, bytes: Uint8Array, filename: string,
    type: DocumentFile['content_type']): KybDocumentFile => ({ doc_type, ...file(bytes, filename,
    type) })
  const reply = await p.client.kyb.uploadDocuments({
    entity_id: entityId,
    documents: [doc('business_registration', registration, 'cor14-3.pdf', 'application/pdf'),
      doc('proof_of_address', address, 'lease.jpg', 'image/jpeg')],
    directors: Object.fromEntries(directors.map((d, i) =>
      [d, [doc('director_id_front', ids[i]!, `id-${i}.pdf`, 'application/pdf')]])),
  })
  assert.deepEqual(reply.documents.map((d) => d.field), ['documents[0]', 'documents[1]',
    `directors.${directors[0]}[0]`, `directors.${directors[1]}[0]`])
  assert.match(reply.documents[0]!.name, /^business_registration_\d+$/)
  assert.match(reply.documents[2]!.name, new RegExp(`^director_id_front_${directors[0]}_\\d+$`))

  const objects = await objectsIn(kybBucket(entityId))
  assert.deepEqual([...objects!.keys()].sort(), reply.documents.map((d) => d.name).sort())
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).state, 'submitted')
  const shown = await tb.operator.kyb.show({ entity_id: entityId })
  assert.equal(shown.state, 'submitted')
  assert.deepEqual(shown.documents.map((d) => [d.doc_type, d.original_filename, d.content_type,
    d.sha256]), [
    ['business_registration', 'cor14-3.pdf', 'application/pdf', sha256(registration)],
    ['proof_of_address', 'lease.jpg', 'image/jpeg', sha256(address)],
  ])
  for (const [i, id] of directors.entries()) {
    const director = shown.directors.find((d) => d.director_id === id)!
    assert.deepEqual(director.documents.map((d) => [d.doc_type, d.director_id, d.sha256]),
      [['director_id_front', id, sha256(ids[i]!)]])
  }
})

test('uploads - too large, empty, of a type the bank does not take or not what its content is: refused by the SDK, nothing sent, nothing in the dropbox', async () => {
  const userId = await applicants.applicant(p)
  const proof = file(pdf('proof'), 'proof.pdf', 'application/pdf')
  const cases: Array<[string, DocumentFile, string]> = [
    ['too large', file(largePdf(document_bytes_max + 1), 'big.pdf', 'application/pdf'),
      'id_document.file'],
    ['empty', file(new Uint8Array(0), 'empty.pdf', 'application/pdf'), 'id_document.file'],
    ['a GIF', file(Buffer.from('GIF89a....'), 'id.gif', 'image/gif' as never),
      'id_document.content_type'],
    ['a PNG said to be a PDF', file(png(), 'id.pdf', 'application/pdf'),
      'id_document.content_type'],
    ['text said to be a PDF', file(Buffer.from('hello'), 'id.pdf', 'application/pdf'),
      'id_document.content_type'],
  ]
  // A client whose NATS server is nowhere: a refusal that reaches for the network would be a
  // BankConnectionError, not the SDK's own.
  const offline = new BankClient({ servers: 'nats://127.0.0.1:1', token: p.token,
    partnerId: p.partnerId })
  try {
    for (const [what, bad, field] of cases) {
      const request = { user_id: userId, id_document: bad, proof_of_residence: proof }
      const error = await refusedLocally(p.client.kyc.uploadDocuments(request), [field])
      assert.equal(error.code, 400, what)
      await refusedLocally(offline.kyc.uploadDocuments(request), [field])
    }
    // Every problem at once, each under its field.
    const error = await refusedLocally(p.client.kyc.uploadDocuments({ user_id: 'nobody',
      id_document: file(new Uint8Array(0), '', 'application/pdf'),
      proof_of_residence: file(jpeg(), 'proof.pdf', 'application/pdf') }),
    ['user_id', 'id_document.file', 'id_document.filename', 'proof_of_residence.content_type'])
    assert.match(error.message, /\(and 3 more\)/)
  } finally {
    await offline.close()
  }
  assert.equal(await objectsIn(kycBucket(userId)), null, 'no dropbox was made')
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
})

test('uploads - kyb: no business document, a bad doc_type, a file given twice, an empty file, a director the bank does not list: refused by the SDK, nothing in the dropbox', async () => {
  const proof = file(pdf('proof'), 'proof.pdf', 'application/pdf')
  const entityId = await business()
  const kyb = (documents: KybDocumentFile[]) => p.client.kyb.uploadDocuments({ entity_id: entityId,
    documents })
  await refusedLocally(kyb([]), ['documents'])
  await refusedLocally(kyb([{ doc_type: 'Business Registration!', ...proof }]),
    ['documents[0].doc_type'])
  await refusedLocally(kyb([{ doc_type: 'business_registration', ...proof },
    { doc_type: 'business_registration', ...proof }]), ['documents[1]'])
  await refusedLocally(kyb([{ doc_type: 'business_registration', ...proof },
    { doc_type: 'tax', ...file(new Uint8Array(0), 'tax.pdf', 'application/pdf') }]),
  ['documents[1].file'])
  // A director the bank does not list: refused once the bank has said who the directors are.
  await refusedLocally(p.client.kyb.uploadDocuments({ entity_id: entityId,
    documents: [{ doc_type: 'business_registration', ...proof }],
    directors: { 'not-a-director': [{ doc_type: 'director_id_front', ...proof }] } }),
  ['directors.not-a-director'])
  assert.equal(await objectsIn(kybBucket(entityId)), null, 'no dropbox was made')
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).state, 'not_started')
})

test('uploads - another partner\'s user or entity: the bank answers 404 and nothing is put into its dropbox', async () => {
  const theirUser = await applicants.applicant(other)
  const theirEntity = await business(other)
  const proof = file(pdf('proof'), 'proof.pdf', 'application/pdf')
  const error = await expectRefusal(p.client.kyc.uploadDocuments({ user_id: theirUser,
    id_document: proof, proof_of_residence: file(png(), 'proof.png', 'image/png') }),
  'not_found')
  assert.ok(!(error instanceof DocumentCheckError))
  assert.ok(error instanceof BankApiError)
  await expectRefusal(p.client.kyb.uploadDocuments({ entity_id: theirEntity,
    documents: [{ doc_type: 'business_registration', ...proof }] }), 'not_found')
  assert.equal(await objectsIn(kycBucket(theirUser)), null)
  assert.equal(await objectsIn(kybBucket(theirEntity)), null)
  assert.equal((await other.client.users.get({ user_id: theirUser })).user.kyc_status,
    'not_started')
  assert.equal((await other.client.kyb.get({ entity_id: theirEntity })).state, 'not_started')
})

test('uploads - a dropbox that does not take a file (the partner made it with room for 1 KB): DropboxError naming bucket and object, nothing submitted', async () => {
  const userId = await applicants.applicant(p)
  await new Objm(tb.nc).create(kycBucket(userId), { max_bytes: 1024 })
  const error = await p.client.kyc.uploadDocuments({ user_id: userId,
    id_document: file(largePdf(4096), 'id.pdf', 'application/pdf'),
    proof_of_residence: file(pdf('proof'), 'proof.pdf', 'application/pdf') })
    .then(() => assert.fail('the upload went through'), (e: unknown) => e)
  assert.ok(error instanceof DropboxError, String(error))
  assert.equal(error.bucket, kycBucket(userId))
  assert.match(error.object, new RegExp(`^kyc_id_front_${userId}_\\d+$`))
  assert.match(error.message, /could not put kyc_id_front_.* into the dropbox kyc_dropbox_/)
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'not_started')
  assert.equal((await tb.operator.kyc.show({ user_id: userId })).submission, null)
})

test('uploads - on NATS as production runs it (the partner in its own NATS account, TLS): the dropbox is the partner\'s own and the bank reads it', async () => {
  await prod.ready
  const partner = await onboardPartner(prod, { approve: true })
  assert.ok(partner.natsCreds, 'the partner connects with the creds file it was issued')
  const entityId = (await partner.client.entities.create(businessEntity())).id
  const { userId } = await partner.client.users.create(userRequest(entityId))
  const front = jpeg()
  const reply = await partner.client.kyc.uploadDocuments({ user_id: userId,
    id_document: file(front, 'id.jpg', 'image/jpeg'),
    proof_of_residence: file(pdf('proof'), 'proof.pdf', 'application/pdf') })
  assert.equal(reply.success, true)
  // The bucket is in the partner's account: its own connection sees it, the operator's (of
  // another account) does not.
  const bucket = `kyc_dropbox_${userId}`
  const own = await new Objm(partner.nc).open(bucket)
  assert.deepEqual((await own.list()).map((i) => i.name).sort(),
    reply.documents.map((d) => d.name).sort())
  await assert.rejects(new Objm(prod.nc).open(bucket))
  const shown = await prod.operator.kyc.show({ user_id: userId })
  assert.equal(shown.documents[0]?.sha256, sha256(front))
  await own.destroy()
})
