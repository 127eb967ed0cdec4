import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { iso } from '../support/assertions.ts'
import { businessEntity, numberedPersonalEntity, registrationNumber, userRequest } from '../support/fixtures.ts'
import { useTestBank } from '../support/harness.ts'
import { deliverDue, partnerWithReceiver,  type Receiver, type WebhookPartner } from '../webhooks/helpers.ts'
import { destroyBucketsAfter, epoch, kycNames, pdf, putObjects } from './helpers.ts'

// The kyc.* and kyb.* events reach the partner as webhooks: POSTed to its endpoint, signed
// with its secret (checked by the standardwebhooks library), with the user record or the
// KYB view as data, in the order the changes happened.

const tb = useTestBank({ env: { BANK_SANDBOX: 'true' } })
destroyBucketsAfter(tb)
let partner: WebhookPartner
let receiver: Receiver

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  ;({ partner, receiver } = await partnerWithReceiver(tb, { endpoint: true }))
})

after(async () => {
  await receiver?.close()
})

/** The verified webhook bodies about one resource, in the order received. */
function webhooksAbout(resourceId: string, key: 'id' | 'entity_id'): Array<{
    type: string; timestamp: string; data: any }> {
  return receiver.received
    .map((r) => {
      assert.equal(r.verified.length, 1)
      assert.ok(!(r.verified[0] instanceof Error), `signature checks out: ${String(r.verified[0])}`)
      return JSON.parse(r.body) as { type: string; timestamp: string; data: any }
    })
    .filter((body) => body.data?.[key] === resourceId)
}

test('kyc webhooks - kyc.submitted, kyc.rejected, kyc.submitted, kyc.approved reach the endpoint, signed, with the user record', async () => {
  const { id: entityId } = await partner.client.entities.create(businessEntity())
  const body = '880303000108'
  const { userId } = await partner.client.users.create(
    userRequest(entityId, { id_number: body + luhnCheckDigit(body) }))
  const submit = async (at: number) => {
    const names = kycNames(userId, at)
    await putObjects(tb.nc, `kyc_dropbox_${userId}`, { [names.front]: pdf('front'),
      [names.proof]: pdf('proof') })
    await partner.client.users.uploadKycDocuments({ user_id: userId, id_document: names.front,
      proof_of_residence: names.proof })
  }
  await submit(epoch)
  await tb.operator.kyc.decide({ user_id: userId, decision: 'reject',
    reason: 'proof of residence older than 3 months' })
  await submit(epoch + 1)
  await tb.operator.kyc.decide({ user_id: userId, decision: 'approve' })
  await deliverDue(tb)
  const hooks = webhooksAbout(userId, 'id')
  assert.deepEqual(
    hooks.map((h) => [h.type, h.data.kyc_status, h.data.kyc_rejection_reason]),
    [
      ['kyc.submitted', 'pending', undefined],
      ['kyc.rejected', 'rejected', 'proof of residence older than 3 months'],
      ['kyc.submitted', 'pending', undefined],
      ['kyc.approved', 'approved', undefined],
    ],
  )
  assert.ok(hooks.every((h) => h.data.entity_id === entityId
    && h.timestamp === iso(tb.clock.now())))
})

test('kyb webhooks - kyb.submitted and kyb.approved with the KYB view as data; a person approved through KYC announces kyc.approved', async () => {
  const { id: entityId } = await partner.client.entities.create(
    businessEntity({ registration_number: registrationNumber().slice(0, 10) + '42' }))
  await putObjects(tb.nc, `kyb_dropbox_${entityId}`,
    { [`business_registration_${epoch}`]: pdf('registration') })
  await partner.client.kyb.submit(
    { entity_id: entityId, documents: [`business_registration_${epoch}`] })
  await tb.operator.kyb.decide({ entity_id: entityId, decision: 'approve' })
  const person = await partner.client.entities.create(numberedPersonalEntity())
  const names = kycNames(person.user_id!)
  await putObjects(tb.nc, `kyc_dropbox_${person.user_id}`, { [names.front]: pdf('front'),
    [names.proof]: pdf('proof') })
  await partner.client.users.uploadKycDocuments(
    { user_id: person.user_id!, id_document: names.front, proof_of_residence: names.proof })
  await tb.operator.kyc.decide({ user_id: person.user_id!, decision: 'approve' })
  await deliverDue(tb)

  const kyb = webhooksAbout(entityId, 'entity_id')
  assert.deepEqual(kyb.map((h) => [h.type, h.data.state]), [['kyb.submitted', 'submitted'],
    ['kyb.approved', 'approved']])
  assert.deepEqual(kyb[1]!.data.documents, [{ key: `business_registration_${epoch}`,
    doc_type: 'business_registration', rejection_reason: null, approved: true }])
  assert.deepEqual(Object.keys(kyb[1]!.data).sort(), ['directors', 'documents', 'entity_id',
    'metadata', 'rejection_reason', 'state'])
  assert.deepEqual(webhooksAbout(person.user_id!, 'id').map((h) => h.type),
    ['kyc.submitted', 'kyc.approved'])
})
