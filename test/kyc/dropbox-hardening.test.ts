import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import type { BankApiError } from '../../src/client/index.ts'
import { expectRefusal } from '../support/assertions.ts'
import { businessEntity, registrationNumber } from '../support/fixtures.ts'
import { useTestBank, type TestPartner } from '../support/harness.ts'
import {
  kycApplicants,
  destroyBucketsAfter,
  eventsOf,
  kycNames,
  largePdf,
  metaFor,
  objectDigest,
  objectInfo,
  pdf,
  png,
  publishChunks,
  publishMeta,
  putBucketLink,
  putLink,
  putObjects,
  sha256,
  submissionsOf,
} from './helpers.ts'

// What a partner writes into its dropbox is the partner's, metadata included, and the bank
// trusts none of it: an Object Store link (to an object of the same bucket, of another
// bucket, or to a whole bucket) is refused rather than followed, and an object whose chunks
// hold more or fewer bytes than its metadata says, or other bytes than its digest, is
// refused after reading no more than its metadata announced. Each refusal is a 400 naming the
// object under the request field that named it, and stores nothing. The crafted objects are
// written the way @nats-io/obj writes objects (chunks, then metadata), on the real JetStream
// of the test's nats-server.

const tb = useTestBank()
destroyBucketsAfter(tb)
let p: TestPartner
let other: TestPartner
const applicants = kycApplicants(tb, '910412')

before(async () => {
  await tb.ready
  ;[p, other] = await applicants.onboard()
})

/** A new user of a business entity of partner `owner` (KYC not_started); resolves with their id. */
const applicant = (owner: TestPartner = p): Promise<string> => applicants.applicant(owner)

/** The documents the bank holds for an owner (user or entity). */
async function documentCount(ownerId: string): Promise<number> {
  const row = await tb.bank.database.db.selectFrom('kyc_documents').select((eb) =>
    eb.fn.countAll<string>().as('n')).where('owner_id', '=', ownerId).executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Nothing changed for the user: still not_started, no submission, no document, no event, no audit.
 */
async function assertUserUnchanged(userId: string, owner: TestPartner = p): Promise<void> {
  const { user } = await owner.client.users.get({ user_id: userId })
  assert.equal(user.kyc_status, 'not_started')
  assert.equal(user.kyc_submitted_at, undefined)
  const shown = await tb.operator.kyc.show({ user_id: userId })
  assert.equal(shown.submission, null)
  assert.deepEqual(shown.documents, [])
  assert.equal(await documentCount(userId), 0)
  assert.deepEqual(await submissionsOf(tb, userId), [])
  assert.deepEqual((await eventsOf(tb, userId)).map((e) => e.type), [])
  assert.deepEqual((await tb.operator.audit.list({ subject_id: userId })).entries, [])
}

/**
 * The refusal's message for one field, which must be the only field refused unless `fields` says
 * otherwise.
 */
function issueOf(error: BankApiError, field: string, fields: string[] = [field]): string {
  const details = error.details as Array<{ field: string; message: string }>
  assert.deepEqual(details.map((d) => d.field).sort(), [...fields].sort())
  return details.find((d) => d.field === field)!.message
}

const not_links = /the bank reads only objects stored in the dropbox itself, not links/

test('kyc dropbox - a link to another object of the same bucket → 400 naming the link; nothing stored, the object itself still taken', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  const real = `kyc_proof_of_residence_${userId}_1763700000`
  await putObjects(tb.nc, bucket, { [names.front]: pdf('front'), [real]: pdf('proof') })
  await putLink(tb.nc, bucket, names.proof, await objectInfo(tb.nc, bucket, real))

  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  const message = issueOf(error, 'proof_of_residence')
  assert.ok(message.includes(`object ${names.proof} is a link`), message)
  assert.ok(message.includes(real), 'the message says where the link points')
  assert.match(message, not_links)
  assert.ok(error.message.includes(names.proof))
  await assertUserUnchanged(userId)

  // The object the link points at is fine when named itself: only the link was refused.
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: real })
  assert.deepEqual((await tb.operator.kyc.show({ user_id: userId })).documents.map((d) => d.name),
    [names.front, real])
})

test("kyc dropbox - a link to an object of another partner's user's dropbox, and a link to a whole bucket → 400 naming each; nothing stored or read", async () => {
  const victim = await applicant(other)
  const victimBucket = `kyc_dropbox_${victim}`
  const secret = kycNames(victim).proof
  await putObjects(tb.nc, victimBucket, { [secret]: pdf("someone else's municipal account") })

  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  await putObjects(tb.nc, bucket, { [`placeholder_${userId}`]: png() })
  await putLink(tb.nc, bucket, names.proof, await objectInfo(tb.nc, victimBucket, secret))
  await putBucketLink(tb.nc, bucket, names.front, victimBucket)

  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  const proof = issueOf(error, 'proof_of_residence', ['id_document', 'proof_of_residence'])
  assert.ok(proof.includes(`object ${names.proof} is a link`), proof)
  assert.ok(proof.includes(victimBucket), 'the message names the bucket the link points into')
  assert.match(proof, not_links)
  const front = issueOf(error, 'id_document', ['id_document', 'proof_of_residence'])
  assert.ok(front.includes(`object ${names.front} is a link`), front)
  assert.ok(front.includes(`bucket ${victimBucket}`), front)
  assert.match(front, not_links)
  await assertUserUnchanged(userId)
  await assertUserUnchanged(victim, other)
  // The other dropbox is as it was.
  assert.equal((await objectInfo(tb.nc, victimBucket, secret)).size,
    pdf("someone else's municipal account").length)
})

test('kyc dropbox - a link named like an id back is not taken as the id back; the submission has the 2 documents named', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  await putObjects(tb.nc, bucket, { [names.front]: pdf('front'), [names.proof]: pdf('proof') })
  await putLink(tb.nc, bucket, names.back, await objectInfo(tb.nc, bucket, names.front))
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  const documents = (await tb.operator.kyc.show({ user_id: userId })).documents
  assert.deepEqual(documents.map((d) => d.name), [names.front, names.proof])
})

test('kyc dropbox - chunks holding more bytes than the metadata says → 400 naming the object and both sizes; reading stops at the first chunk past the size', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  // An honest object of 3 chunks (128 KiB, 128 KiB, the rest) whose chunks the lie reuses.
  const big = largePdf(300_000)
  const source = `source_${userId}`
  await putObjects(tb.nc, bucket, { [names.front]: pdf('front'), [source]: big })
  const info = await objectInfo(tb.nc, bucket, source)
  assert.equal(info.chunks, 3)
  await publishMeta(tb.nc, bucket, { ...metaFor(names.proof, bucket, info.nuid, big), size: 1000,
    chunks: 1 })
  // And one chunk of 200 bytes announced as 150, written by hand.
  const small = pdf('x'.repeat(180))
  const id = await publishChunks(tb.nc, bucket, [small])
  await publishMeta(tb.nc, bucket, { ...metaFor(names.front, bucket, id, small), size: 150 })

  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  const proof = issueOf(error, 'proof_of_residence', ['id_document', 'proof_of_residence'])
  assert.ok(proof.includes(`object ${names.proof}`), proof)
  assert.ok(proof.includes('metadata says 1000 bytes'), proof)
  // What had arrived when reading stopped: the first chunk, not the 300 000 bytes.
  assert.ok(proof.includes(`${128 * 1024} had arrived`), proof)
  const front = issueOf(error, 'id_document', ['id_document', 'proof_of_residence'])
  assert.ok(front.includes(`object ${names.front}`), front)
  assert.ok(front.includes('metadata says 150 bytes'), front)
  assert.ok(front.includes(`${small.length} had arrived`), front)
  await assertUserUnchanged(userId)
})

test('kyc dropbox - chunks holding fewer bytes than the metadata says (some, or none at all) → 400 naming the object and both sizes', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  await putObjects(tb.nc, bucket, { [`placeholder_${userId}`]: png() })
  // Two chunks of a PDF, announced as 10 bytes longer than they are (the digest is theirs).
  const first = pdf('first part')
  const second = new TextEncoder().encode('second part')
  const whole = Buffer.concat([first, second])
  const id = await publishChunks(tb.nc, bucket, [first, second])
  await publishMeta(tb.nc, bucket, { ...metaFor(names.front, bucket, id, whole), chunks: 2,
    size: whole.length + 10 })
  // Metadata of 500 bytes whose chunks were never written.
  const missing = await publishChunks(tb.nc, bucket, [])
  await publishMeta(tb.nc, bucket, { ...metaFor(names.proof, bucket, missing, pdf('never written')),
    size: 500 })

  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'id_document')
  const front = issueOf(error, 'id_document', ['id_document', 'proof_of_residence'])
  assert.ok(front.includes(`object ${names.front} holds ${whole.length} bytes but its metadata ` +
    `says ${whole.length + 10} bytes`), front)
  const proof = issueOf(error, 'proof_of_residence', ['id_document', 'proof_of_residence'])
  assert.ok(proof.includes(`object ${names.proof} holds 0 bytes but its metadata says 500 bytes`),
    proof)
  await assertUserUnchanged(userId)
})

test('kyc dropbox - chunks of the right size but not the digest of the metadata → 400 naming the object', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  await putObjects(tb.nc, bucket, { [names.front]: pdf('front') })
  const held = pdf('what the chunks hold')
  const claimed = pdf('what the digest says')
  assert.equal(held.length, claimed.length)
  const id = await publishChunks(tb.nc, bucket, [held])
  await publishMeta(tb.nc, bucket, { ...metaFor(names.proof, bucket, id, held),
    digest: objectDigest(claimed) })
  const error = await expectRefusal(p.client.users.uploadKycDocuments({ user_id: userId,
    id_document: names.front, proof_of_residence: names.proof }), 400, 'proof_of_residence')
  const proof = issueOf(error, 'proof_of_residence')
  assert.ok(proof.includes(
    `object ${names.proof} does not match the SHA-256 digest of its metadata`), proof)
  await assertUserUnchanged(userId)
})

test('kyb dropbox - a director document that is a link, a business document whose chunks outgrow its metadata → 400 under its field; nothing stored', async () => {
  const entityId = (await p.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '07' }))).id
  const [director] = (await p.client.kyb.get({ entity_id: entityId })).directors.map((d) => d.id)
  assert.ok(director)
  const bucket = `kyb_dropbox_${entityId}`
  const registration = 'business_registration_1763800000'
  const address = 'proof_of_address_1763800000'
  const selfie = `director_selfie_${director}_1763800000`
  const idFront = `director_id_front_${director}_1763800000`
  await putObjects(tb.nc, bucket, { [registration]: pdf('CoR 14.3'), [idFront]: pdf('id') })
  await putLink(tb.nc, bucket, selfie, await objectInfo(tb.nc, bucket, idFront))
  const bytes = pdf('proof of address, longer than it says')
  const id = await publishChunks(tb.nc, bucket, [bytes])
  await publishMeta(tb.nc, bucket, { ...metaFor(address, bucket, id, bytes), size: 20 })

  // The link is refused from the metadata, before anything is read.
  const linked = await expectRefusal(
    p.client.kyb.submit({ entity_id: entityId, documents: [registration],
      directors: { [director]: [idFront, selfie] } }),
    400,
    `directors.${director}[1]`,
  )
  const link = issueOf(linked, `directors.${director}[1]`)
  assert.ok(link.includes(`object ${selfie} is a link`), link)
  assert.match(link, not_links)
  // The size only once read.
  const outgrown =
    await expectRefusal(p.client.kyb.submit({ entity_id: entityId, documents: [registration,
    address], directors: { [director]: [idFront] } }), 400, 'documents[1]')
  const size = issueOf(outgrown, 'documents[1]')
  assert.ok(size.includes(`object ${address}`) && size.includes('metadata says 20 bytes')
    && size.includes(`${bytes.length} had arrived`), size)

  const kyb = await p.client.kyb.get({ entity_id: entityId })
  assert.equal(kyb.state, 'not_started')
  assert.deepEqual(kyb.documents, [])
  assert.deepEqual(kyb.directors.flatMap((d) => d.documents), [])
  assert.deepEqual(await submissionsOf(tb, entityId), [])
  assert.equal(await documentCount(entityId), 0)
  assert.deepEqual((await eventsOf(tb, entityId)).map((e) => e.type), [])
})

test('kyc dropbox - an object written by hand whose metadata tells the truth (2 chunks) is taken, beside a plain upload: the bytes and hash are the chunks\'', async () => {
  const userId = await applicant()
  const bucket = `kyc_dropbox_${userId}`
  const names = kycNames(userId)
  const front = pdf('front, uploaded as the SDK does')
  await putObjects(tb.nc, bucket, { [names.front]: front }, 'front.pdf')
  const first = pdf('proof, first chunk')
  const second = new TextEncoder().encode('and the second')
  const whole = Buffer.concat([first, second])
  const id = await publishChunks(tb.nc, bucket, [first, second])
  await publishMeta(tb.nc, bucket, { ...metaFor(names.proof, bucket, id, whole, 'proof.pdf'),
    chunks: 2 })

  const reply = await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  assert.equal(reply.success, true)
  assert.equal((await p.client.users.get({ user_id: userId })).user.kyc_status, 'pending')
  const documents = (await tb.operator.kyc.show({ user_id: userId })).documents
  assert.deepEqual(
    documents.map((d) => [d.name, d.size, d.sha256, d.original_filename, d.content_type]),
    [
      [names.front, front.length, sha256(front), 'front.pdf', 'application/pdf'],
      [names.proof, whole.length, sha256(whole), 'proof.pdf', 'application/pdf'],
    ],
  )
})
