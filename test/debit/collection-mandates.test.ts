import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { advanceTo, assertLedgerClean, debtors, eventTypesOf, sast, statusOf } from './collection-helpers.ts'

// The simulated debit rail decides mandates (README, "The simulated debit rail"): one
// debtor account is rejected by the debtor's bank, one stays pending until a day after it
// was registered (the sandbox clock moving past that brings the bank's question due
// again); any other is authenticated at once. An order under the late mandate collects.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
})

function register(account_number: string) {
  const mandate_reference = `M-${randomUUID().slice(0, 8)}`
  return p.client.mandates
    .create({
      entity_id: p.rootEntityId, mandate_reference, account_holder_name: 'Thandi Nkosi',
        account_number,
      account_type: 'cheque', branch_code: '250655', max_amount: 100_000, frequency: 'once_off',
    })
    .then(() => mandate_reference)
}

const mandate = (mandate_reference: string) => p.client.mandates.get(
  { entity_id: p.rootEntityId, mandate_reference })

test('mandates - an ordinary debtor account is authenticated at once', async () => {
  const reference = await register(debtors.ordinary)
  await tb.bank.services.jobRunner.runDue()
  assert.equal((await mandate(reference)).status, 'active')
})

test('mandates - 5000000001: the debtor’s bank rejects the mandate', async () => {
  const reference = await register(debtors.mandateRejected)
  await tb.bank.services.jobRunner.runDue()
  const rejected = await mandate(reference)
  assert.equal(rejected.status, 'rejected')
  assert.match(rejected.rejection_reason ?? '', /declined/)
})

test('mandates - 5000000002: pending until a day has passed, then active, and its order collects', async () => {
  const reference = await register(debtors.mandatePendingADay)
  await tb.bank.services.jobRunner.runDue()
  assert.equal((await mandate(reference)).status, 'pending_authentication')
  await advanceTo(tb, sast('2026-11-24', '09:59'))
  assert.equal((await mandate(reference)).status, 'pending_authentication')
  await advanceTo(tb, sast('2026-11-24', '10:00'))
  const active = await mandate(reference)
  assert.equal(active.status, 'active')
  assert.equal(active.authenticated_at, '2026-11-24T08:00:00Z')
  const order = await p.client.debitOrders.create({
    entity_id: p.rootEntityId, clientTxId: randomUUID(), mandate_reference: reference,
      amount: 10_000, collection_date: '2026-11-26',
    account_holder_name: 'Thandi Nkosi', account_number: debtors.mandatePendingADay,
      account_type: 'cheque', branch_code: '250655',
    reference: 'Gym fees', frequency: 'once_off',
  })
  await advanceTo(tb, sast('2026-11-26'))
  assert.equal((await statusOf(p, order.debit_order_id)).status, 'successful')
  assert.deepEqual(await eventTypesOf(tb, order.debit_order_id),
    ['debit_order.processing', 'debit_order.successful'])
  await assertLedgerClean(tb)
})
