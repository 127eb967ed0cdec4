import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { expectRefusal, iso } from '../support/assertions.ts'
import { businessEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { destroyBucketsAfter, fetchDocument, jpeg, kycNames, pdf, putObjects, sha256 } from './helpers.ts'

// Retention of a superseded submission's documents, counted from its replacement as
// src/kyc/document-retention.ts says ("once BANK_DOCUMENT_RETENTION_DAYS have passed since
// the decision (or the replacement)"), not from its own submission: documents replaced
// only days ago stay although the first submission is older than the period.

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
  return (await p.client.users.create(userRequest(businessId, { id_number: body + luhnCheckDigit(body) }))).userId
}

/** Submits a KYC of two documents; resolves with their ids and bytes. */
async function submitKyc(userId: string, at: number) {
  const names = kycNames(userId, at)
  const files = { [names.front]: jpeg(), [names.proof]: pdf(`proof of ${userId} at ${at}`) }
  await putObjects(tb.nc, `kyc_dropbox_${userId}`, files)
  await p.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front, proof_of_residence: names.proof })
  const { documents } = await tb.operator.kyc.show({ user_id: userId })
  return documents.filter((d) => d.name in files).map((d) => ({ id: d.document_id, bytes: files[d.name]! }))
}

async function assertKept(documents: Array<{ id: string; bytes: Uint8Array }>, what: string): Promise<void> {
  for (const d of documents) {
    const fetched = await fetchDocument(tb, d.id)
    assert.ok(fetched.bytes.equals(Buffer.from(d.bytes)), `${what}: bytes kept`)
  }
}

async function assertDeleted(documents: Array<{ id: string; bytes: Uint8Array }>, deletedAt: string, what: string): Promise<void> {
  for (const d of documents) {
    const error = await expectRefusal(tb.operator.kyc.document({ document_id: d.id }), 409)
    assert.match(error.message, /retention/, what)
    const audit = (await tb.operator.audit.list({ subject_id: d.id })).entries
    assert.deepEqual(audit.filter((e) => e.action === 'document.deleted').map((e) => [e.actor, e.at]), [['system', deletedAt]], `${what}: deletion audited once`)
  }
}

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
