import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, fetchDocument, jpeg, kycNames, pdf, putObjects, sha256 } from './helpers.ts'

// Retention (BANK_DOCUMENT_RETENTION_DAYS, here 30): the bytes of documents of rejected or
// superseded submissions are deleted once the period has passed; their metadata, hash and
// the audit trail stay; approved (and pending) documents are kept. The tests move the bank's
// clock and run the sweep the daily kyc.retention job runs.

const retention_days = 30
const day_ms = 24 * 3600_000
const tb = useTestBank({ env: { BANK_DOCUMENT_RETENTION_DAYS: String(retention_days) } })
destroyBucketsAfter(tb)
let p: TestPartner
let businessId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  businessId = (await p.client.entities.create(businessEntity())).id
})

let applicants = 0

async function businessUser(): Promise<string> {
  const body = `870202${String(++applicants).padStart(4, '0')}08`
  return (await p.client.users.create(
    userRequest(businessId, { id_number: body + luhnCheckDigit(body) }))).userId
}

/** Submits a KYC of two documents; resolves with their ids and bytes. */
async function submitKyc(userId: string, at: number) {
  const names = kycNames(userId, at)
  const files = { [names.front]: jpeg(), [names.proof]: pdf(`proof of ${userId} at ${at}`) }
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, files)
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
    proof_of_residence: names.proof })
  const { documents } = await tb.operator.kyc.show({ user_id: userId })
  return documents.filter((d) => d.name in files).map(
    (d) => ({ id: d.document_id, bytes: files[d.name]! }))
}

async function assertKept(documents: Array<{ id: string; bytes: Uint8Array }>,
    what: string): Promise<void> {
  for (const d of documents) {
    const fetched = await fetchDocument(tb, d.id)
    assert.ok(fetched.bytes.equals(Buffer.from(d.bytes)), `${what}: bytes kept`)
  }
}

async function assertDeleted(documents: Array<{ id: string; bytes: Uint8Array }>, deletedAt: string,
    what: string): Promise<void> {
  for (const d of documents) {
    const error = await expectRefusal(tb.operator.kyc.document({ document_id: d.id }), 409)
    assert.match(error.message, /retention/, what)
    const audit = (await tb.operator.audit.list({ subject_id: d.id })).entries
    assert.deepEqual(audit.filter((e) => e.action === 'document.deleted').map(
      (e) => [e.actor, e.at]), [['system', deletedAt]], `${what}: deletion audited once`)
  }
}

/** A business entity whose KYB (one document) was rejected, and that document. */
async function rejectedKyb() {
  const { id: entityId } = await p.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '42' }))
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { business_registration_5: pdf('registration') })
  await p.client.kyb.submit({ entity_id: entityId, documents: ['business_registration_5'] })
  await tb.operator.kyb.decide({ entity_id: entityId, decision: 'reject',
    reason: 'deregistered company' })
  const kybDocument = (await tb.operator.kyb.show({ entity_id: entityId })).documents[0]!
  return { entityId, kybRejected: [{ id: kybDocument.document_id, bytes: pdf('registration') }] }
}

test('kyc retention - after the period the bytes of rejected and superseded submissions go; metadata, hash and audit stay; approved and pending are kept', async () => {
  const decidedAt = tb.clock.now().getTime()
  const rejectedUser = await businessUser()
  const rejected = await submitKyc(rejectedUser, 1)
  await tb.operator.kyc.decide({ user_id: rejectedUser, decision: 'reject',
    reason: 'not the same person' })
  const approvedUser = await businessUser()
  const approved = await submitKyc(approvedUser, 2)
  await tb.operator.kyc.decide({ user_id: approvedUser, decision: 'approve' })
  const resubmitter = await businessUser()
  const superseded = await submitKyc(resubmitter, 3)
  const current = await submitKyc(resubmitter, 4)
  // A rejected KYB too.
  const { entityId, kybRejected } = await rejectedKyb()

  // A minute short of the period: nothing goes.
  tb.clock.set(new Date(decidedAt + retention_days * day_ms - 60_000))
  assert.equal(await tb.bank.services.documentRetention.sweep(), 0)
  await assertKept([...rejected, ...superseded, ...kybRejected], 'within the period')

  tb.clock.set(new Date(decidedAt + retention_days * day_ms + 60_000))
  const sweptAt = iso(tb.clock.now())
  assert.equal(await tb.bank.services.documentRetention.sweep(),
    rejected.length + superseded.length + kybRejected.length)
  await assertDeleted(rejected, sweptAt, 'rejected KYC')
  await assertDeleted(superseded, sweptAt, 'superseded KYC')
  await assertDeleted(kybRejected, sweptAt, 'rejected KYB')
  await assertKept(approved, 'approved KYC')
  await assertKept(current, 'pending KYC')

  // What the documents were stays visible: name, type, size, hash, decision, and when the bytes
  // went.
  const shown = await tb.operator.kyc.show({ user_id: rejectedUser })
  assert.equal(shown.submission?.state, 'rejected')
  assert.equal(shown.documents.length, 2)
  for (const d of shown.documents) {
    const original = rejected.find((r) => r.id === d.document_id)!
    assert.equal(d.sha256, sha256(original.bytes))
    assert.equal(d.size, original.bytes.length)
    assert.equal(d.deleted_at, sweptAt)
  }
  const kybShown = await tb.operator.kyb.show({ entity_id: entityId })
  assert.deepEqual([kybShown.documents[0]!.sha256, kybShown.documents[0]!.deleted_at],
    [sha256(kybRejected[0]!.bytes), sweptAt])
  assert.equal((await p.client.kyb.get({ entity_id: entityId })).documents[0]!.key,
    'business_registration_5')
  assert.ok((await tb.operator.kyc.show({ user_id: approvedUser })).documents.every(
    (d) => d.deleted_at === null))
  // The submissions' own audit entries are untouched.
  assert.deepEqual((await tb.operator.audit.list({ subject_id: rejectedUser })).entries.map(
    (e) => e.action), ['kyc.rejected', 'kyc.submitted'])

  // A second sweep finds nothing more to do and audits nothing twice.
  assert.equal(await tb.bank.services.documentRetention.sweep(), 0)
  await assertDeleted(rejected, sweptAt, 'rejected KYC, after a second sweep')
})

test('kyc retention - the daily kyc.retention job deletes them when the sandbox clock moves past the period', async () => {
  const userId = await businessUser()
  const rejected = await submitKyc(userId, 20)
  await tb.operator.kyc.decide({ user_id: userId, decision: 'reject',
    reason: 'expired identity document' })
  const before = tb.clock.now().getTime()
  await tb.operator.sandbox.advance({ seconds: (retention_days + 1) * 86_400 })
  assert.equal(tb.clock.now().getTime() - before, (retention_days + 1) * day_ms)
  for (const d of rejected) {
    await expectRefusal(tb.operator.kyc.document({ document_id: d.id }), 409)
    const deleted = (await tb.operator.audit.list({ subject_id: d.id })).entries.filter(
      (e) => e.action === 'document.deleted')
    assert.equal(deleted.length, 1)
    assert.equal(deleted[0]!.actor, 'system')
    // The job runs at 02:00 SAST (00:00 UTC) on the first day past the period.
    assert.match(deleted[0]!.at, /T00:00:\d\dZ$/)
  }
})

// A superseded submission's period counts from its replacement, not from its own submission:
// documents replaced only days ago stay although the first submission is older than the period.
test('kyc retention - a superseded submission is kept for the period counted from its replacement (document-retention.ts: "since the decision (or the replacement)")', async () => {
  const userId = await businessUser()
  const first = await submitKyc(userId, 10)
  tb.clock.advance(20 * day_ms)
  await submitKyc(userId, 11)
  // 11 days after the replacement (31 after the first submission): still within the period.
  tb.clock.advance(11 * day_ms)
  await tb.bank.services.documentRetention.sweep()
  await assertKept(first, 'superseded 11 days ago')
  tb.clock.advance(20 * day_ms)
  const sweptAt = iso(tb.clock.now())
  await tb.bank.services.documentRetention.sweep()
  await assertDeleted(first, sweptAt, 'superseded 31 days ago')
})
