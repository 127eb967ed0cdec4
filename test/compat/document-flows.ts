import assert from 'node:assert/strict'
import { createHash, randomInt } from 'node:crypto'
import { test } from 'node:test'
import { jpeg, pdf, png } from '../kyc/helpers.ts'
import { uuidPattern } from '../support/assertions.ts'
import { uploadKybDocuments, uploadKycDocuments, type PartnerFile } from './dropbox-uploader.ts'
import { businessEntityValues, personalEntityValues, userValues, type FlowContext } from './flows.ts'

// The reference SDK's document flows end to end (UploadKycApp → SubmitKycApp, UploadKybApp
// → SubmitKybApp, and KYBService's other methods), over real NATS and a real JetStream
// Object Store: files go into the subject's dropbox bucket as the SDK's uploaders put them,
// then each request is written as the SDK writes it (UserService and KYBService configure
// nothing, so every component is on the wire, absent ones as null) and each reply is read
// into the SDK's record by ReferenceSdk.call (docs/guides/moving-from-the-incumbent.md and
// docs/guides/kyc-kyb.md).

const file = (filename: string, bytes: Uint8Array): PartnerFile => ({ filename, bytes })
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/**
 * A registration number the simulated registry answers by its last two digits: `07` two
 * directors, `00` none yet (docs/guides/kyc-kyb.md).
 */
export function registrationEnding(tail: '07' | '00'): string {
  return `2020${String(randomInt(1_000_000)).padStart(6, '0')}${tail}`
}

/** What UploadKybApp finds in tmp/: three business documents and four per director. */
function businessFiles(): Record<string, PartnerFile> {
  return {
    business_registration: file('business_registration.pdf', pdf('CIPC registration certificate')),
    proof_of_address: file('proof_of_address.jpg', jpeg()),
    tax_verification: file('tax_verification.pdf', pdf('SARS tax clearance')),
  }
}

function directorFiles(): Record<string, PartnerFile> {
  return {
    director_id_front: file('director_id_front.png', png()),
    director_id_back: file('director_id_back.png', png()),
    director_selfie: file('director_selfie.jpg', jpeg()),
    director_proof_of_address: file('director_proof_of_address.pdf', pdf('municipal account')),
  }
}

/** What the SDK reads of a KYB just submitted: its documents and each director's, in order. */
async function assertKybSubmitted(c: FlowContext, entityId: string,
  upload: Awaited<ReturnType<typeof uploadKybDocuments>>) {
  const submitted = await c.sdk.call('kybGet', { entity_id: entityId })
  assert.equal(submitted.state, 'submitted')
  assert.deepEqual(
    submitted.documents.map((d: { key: string; doc_type: string }) => [d.key, d.doc_type]),
    upload.businessDocKeys.map((key) => [key, key.replace(/_\d+$/, '')]),
  )
  for (const director of submitted.directors) {
    // Listed in the order submitted.
    assert.deepEqual(director.documents.map((d: { key: string }) => d.key),
      upload.directorDocKeys[director.id])
    assert.deepEqual(
      director.documents.map((d: { doc_type: string }) => d.doc_type).sort(),
      ['director_id_back', 'director_id_front', 'director_proof_of_address', 'director_selfie'],
    )
    assert.ok(
      director.documents.every((d: { approved: boolean; rejection_reason: string | null }) =>
      !d.approved && d.rejection_reason === null))
  }
}

/** The three files of a KYC upload as the bank froze them: hash, size, type and file name. */
async function assertFrozen(c: FlowContext, userId: string,
  upload: Awaited<ReturnType<typeof uploadKycDocuments>>,
  files: Record<'front' | 'back' | 'proof', { filename: string; bytes: Uint8Array }>) {
  const shown = await c.tb.operator.kyc.show({ user_id: userId })
  const frozen = Object.fromEntries(shown.documents.map((d) => [d.name, d]))
  const expected = [
    [upload.idDocument, files.front, 'application/pdf'],
    [upload.idBack!, files.back, 'image/png'],
    [upload.proofOfResidence, files.proof, 'image/jpeg'],
  ] as const
  assert.deepEqual(Object.keys(frozen).sort(), expected.map(([key]) => key).sort())
  for (const [key, sent, type] of expected) {
    assert.equal(frozen[key]!.sha256, sha256(sent.bytes), key)
    assert.equal(frozen[key]!.size, sent.bytes.length, key)
    assert.equal(frozen[key]!.content_type, type, key)
    assert.equal(frozen[key]!.original_filename, sent.filename, key)
  }
}

/** A test's title, with the label of the file that runs the flows. */
type TitleOf = (behaviour: string) => string

export function referenceSdkDocumentFlows(label: string, context: () => FlowContext): void {
  const name = (behaviour: string) => `reference SDK (${label}) - ${behaviour}`
  kycFlows(name, context)
  businessUserKycFlows(name, context)
  kybFlows(name, context)
  noDirectorsKybFlows(name, context)
  kybUpdateFlows(name, context)
}

/** KYC: UploadKycApp then SubmitKycApp. */
function kycFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('UploadKycApp then SubmitKycApp: files put as KycDocumentUploader does, upload_kyc_documents, the user reads pending'), async () => {
    const c = context()
    const { id: entityId, user_id: userId } = await c.sdk.call('entityCreate',
      personalEntityValues())
    const files = { front: file('id-front.pdf', pdf('id front')), back: file('id-back.png', png()),
      proof: file('proof.jpg', jpeg()) }
    const upload = await uploadKycDocuments(c.sdk.partner.nc, userId, files)

    const values = { user_id: userId, id_document: upload.idDocument,
      proof_of_residence: upload.proofOfResidence }
    const text = await c.sdk.write('userUploadKycDocuments', values)
    assert.deepEqual(JSON.parse(text), values,
      'UploadKYCDocumentsRequest carries its three components')
    const reply = await c.sdk.call('userUploadKycDocuments', values)
    assert.equal(reply.success, true)
    assert.equal(typeof reply.message, 'string')

    const { users } = await c.sdk.call('userList', { entity_id: entityId })
    assert.equal(users.length, 1)
    assert.equal(users[0].kyc_status, 'pending')
    assert.ok(users[0].kyc_submitted_at, 'kyc_submitted_at is set')
    const waiting = await c.tb.operator.kyc.list({ partner_id: c.sdk.partner.partnerId })
    assert.ok(waiting.applications.some((a) => a.user_id === userId && a.documents === 3),
      'the submission waits for review')

    // The bank froze the three files (the id back taken along though the request does not name it).
    await assertFrozen(c, userId, upload, files)

    // Approved by an operator, the user reads approved (kyc_reviewed_at set) and the entity has its
    // account.
    await c.tb.operator.kyc.decide({ user_id: userId, decision: 'approve' })
    const [approved] = (await c.sdk.call('userList', { entity_id: entityId })).users
    assert.equal(approved.kyc_status, 'approved')
    assert.ok(approved.kyc_reviewed_at)
    assert.equal((await c.sdk.call('entityInfo', { entity_id: entityId })).approved, true)
    assert.equal((await c.sdk.call('accountsByEntity', { entity_id: entityId })).accounts.length, 1)
  })
}

/** SubmitKycApp for a business's user. */
function businessUserKycFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('a user of a business submits KYC as SubmitKycApp does: not_started becomes pending with kyc_submitted_at'), async () => {
    const c = context()
    const { userId } = await c.sdk.call('userCreate', userValues(c.rootEntityId))
    const before = (await c.sdk.call('userList', { entity_id: c.rootEntityId })).users.find(
      (u: { id: string }) => u.id === userId)
    assert.deepEqual([before.kyc_status, before.kyc_submitted_at ?? null], ['not_started', null])
    const upload = await uploadKycDocuments(c.sdk.partner.nc, userId,
      { front: file('id-front.jpg', jpeg()), proof: file('proof.pdf', pdf('proof')) })
    assert.equal(upload.idBack, null)
    const reply = await c.sdk.call('userUploadKycDocuments', { user_id: userId,
      id_document: upload.idDocument, proof_of_residence: upload.proofOfResidence })
    assert.equal(reply.success, true)
    const after = (await c.sdk.call('userList', { entity_id: c.rootEntityId })).users.find(
      (u: { id: string }) => u.id === userId)
    assert.equal(after.kyc_status, 'pending')
    assert.ok(after.kyc_submitted_at)
    assert.equal((await c.tb.operator.kyc.show({ user_id: userId })).documents.length, 2,
      'no id back in the bucket: two documents')
  })
}

/** KYB: UploadKybApp then SubmitKybApp. */
function kybFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('UploadKybApp then SubmitKybApp: get (two directors), put as KybDocumentUploader does, submit, get reads submitted, then approved'), async () => {
    const c = context()
    const { id: entityId } = await c.sdk.call('entityCreate',
      businessEntityValues({ registration_number: registrationEnding('07') }))
    const kyb = await c.sdk.call('kybGet', { entity_id: entityId })
    assert.equal(kyb.entity_id, entityId)
    assert.equal(kyb.state, 'not_started')
    assert.equal(kyb.rejection_reason, null)
    assert.deepEqual(kyb.documents, [])
    assert.equal(kyb.directors.length, 2)
    for (const director of kyb.directors) {
      assert.match(director.id, uuidPattern)
      assert.ok(director.name.length > 0)
      assert.deepEqual([director.approved, director.verified, director.verification_sent,
        director.documents], [false, false, false, []])
    }

    const directorIds: string[] = kyb.directors.map((d: { id: string }) => d.id)
    const upload = await uploadKybDocuments(c.sdk.partner.nc, entityId, businessFiles(),
      Object.fromEntries(directorIds.map((id) => [id, directorFiles()])))
    const values = { entity_id: entityId, documents: upload.businessDocKeys,
      directors: upload.directorDocKeys }
    assert.deepEqual(JSON.parse(await c.sdk.write('kybSubmit', values)), values)
    assert.deepEqual(await c.sdk.call('kybSubmit', values), {})

    await assertKybSubmitted(c, entityId, upload)

    await c.tb.operator.kyb.decide({
      entity_id: entityId,
      decision: 'approve',
      directors: directorIds.map((id) => ({ director_id: id, approved: true, verified: true })),
    })
    const approved = await c.sdk.call('kybGet', { entity_id: entityId })
    assert.equal(approved.state, 'approved')
    assert.ok(approved.documents.every((d: { approved: boolean }) => d.approved))
    assert.ok(approved.directors.every((d: { approved: boolean; verified: boolean }) => d.approved
      && d.verified))
    assert.equal((await c.sdk.call('entityInfo', { entity_id: entityId })).approved, true)
  })
}

/** KYB of a business with no directors yet. */
function noDirectorsKybFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('a business with no directors yet (…00): submit with directors null is taken, state submitted'), async () => {
    const c = context()
    const { id: entityId } = await c.sdk.call('entityCreate',
      businessEntityValues({ registration_number: registrationEnding('00') }))
    const kyb = await c.sdk.call('kybGet', { entity_id: entityId })
    assert.deepEqual(kyb.directors, [],
      'UploadKybApp stops here and tries later; a partner may still submit the business documents')
    const upload = await uploadKybDocuments(c.sdk.partner.nc, entityId, businessFiles(), {})
    const text = await c.sdk.write('kybSubmit',
      { entity_id: entityId, documents: upload.businessDocKeys, directors: null })
    assert.match(text, /"directors":null/)
    assert.deepEqual(await c.sdk.accept('kybSubmit', await c.sdk.send('kybSubmit', text)), {})
    assert.equal((await c.sdk.call('kybGet', { entity_id: entityId })).state, 'submitted')
  })
}

/** KYB updates: update, update_director and send_verification_email. */
function kybUpdateFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('update, update_director and send_verification_email with null components read as their records'), async () => {
    const c = context()
    const { id: entityId } = await c.sdk.call('entityCreate',
      businessEntityValues({ registration_number: registrationEnding('07') }))
    const { directors } = await c.sdk.call('kybGet', { entity_id: entityId })
    const directorId: string = directors[0].id

    const metadata = { industry: 'logistics', employees: 12, vat_registered: true }
    const updated = await c.sdk.call('kybUpdate', { entity_id: entityId, metadata })
    assert.equal(updated.entity_id, entityId)
    assert.deepEqual(updated.metadata, metadata)
    assert.equal(updated.directors.length, 2)

    const email = `director-${randomInt(1_000_000)}@kudu.example`
    const first = { entity_id: entityId, director_id: directorId, full_name: 'Thandi Mbali Nkosi',
      email, metadata: null }
    assert.match(await c.sdk.write('kybUpdateDirector', first), /"metadata":null/)
    assert.deepEqual(await c.sdk.call('kybUpdateDirector', first), {})
    // Nulls leave what is on record as it is.
    assert.deepEqual(await c.sdk.call('kybUpdateDirector', { entity_id: entityId,
      director_id: directorId, full_name: null, email: null, metadata: { pep: false } }), {})
    const shown = (await c.tb.operator.kyb.show({ entity_id: entityId })).directors.find(
      (d) => d.director_id === directorId)
    assert.deepEqual([shown?.full_name, shown?.email, shown?.metadata],
      ['Thandi Mbali Nkosi', email, { pep: false }])

    // email null: the address on record is used.
    assert.match(await c.sdk.write('kybSendVerificationEmail', { entity_id: entityId, director_id: directorId }), /"email":null/)
    assert.deepEqual(await c.sdk.call('kybSendVerificationEmail',
      { entity_id: entityId, director_id: directorId, email: null }), {})
    const sent = await c.tb.bank.database.db.selectFrom('notifier_messages').select(
      ['subject', 'body']).where('recipient', '=', email).execute()
    assert.equal(sent.length, 1)
    assert.match(sent[0]!.body, /Thandi Mbali Nkosi/)
    const after = await c.sdk.call('kybGet', { entity_id: entityId })
    assert.equal(after.directors.find((d: { id: string }) => d.id === directorId).verification_sent,
      true)
    assert.deepEqual(after.metadata, metadata)
  })
}
