import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'

// The debit tables (migration 0010) on both back ends: dates read back as written, and the
// constraints that keep an order whole (end_date for recurring orders, not before the
// collection date; one mandate reference per entity; one live key per partner).

const tb = useTestBank()
let p: TestPartner
let accountId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  accountId =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
})

function mandateRow(reference: string) {
  return {
    id: randomUUID(), partner_id: p.partnerId, entity_id: p.rootEntityId,
      mandate_reference: reference,
    status: 'active' as const, account_holder_name: 'A Debtor', account_number: '1234567890',
      account_type: 'cheque' as const,
    branch_code: '250655', max_amount: 50_000, frequency: 'monthly' as const,
      first_collection_date: '2026-12-01',
    debtor_email: null, used_by_order: null, rejection_reason: null, authentication_due_at: null,
      added_by: 'test',
    created_at: new Date(), authenticated_at: new Date(), decided_at: new Date(),
      cancelled_at: null,
  }
}

function orderRow(mandateId: string, overrides: Record<string, unknown> = {}) {
  return {
    id: randomUUID(), partner_id: p.partnerId, entity_id: p.rootEntityId, account_id: accountId,
      mandate_id: mandateId,
    mandate_reference: 'M', client_tx_id: randomUUID(), amount: 10_000,
      account_holder_name: 'A Debtor',
    account_number: '1234567890', account_type: 'cheque' as const, branch_code: '250655',
      reference: 'Gym',
    frequency: 'monthly' as const, requested_collection_date: '2026-12-05',
      collection_date: '2026-12-07',
    next_collection_date: '2026-12-07', end_date: '2027-06-30', tracking_days: 10,
      notification_email: null,
    metadata: JSON.stringify({ plan: 'gold' }), status: 'scheduled' as const, processed_at: null,
      bank_charges: null,
    net_amount: null, credit_tx_id: null, bank_reference: null, failure_reason: null,
      disputed_at: null,
    reversal_tx_id: null, cancelled_at: null, cancel_reason: null, added_by: 'test',
      created_at: new Date(), updated_at: new Date(),
    ...overrides,
  }
}

test('debit tables - an order and its mandate read back with dates as written', async () => {
  const db = tb.bank.database.db
  const mandate = mandateRow(`M-${randomUUID()}`)
  await db.insertInto('debit_mandates').values(mandate).execute()
  const order = orderRow(mandate.id)
  await db.insertInto('debit_orders').values(order).execute()
  const row = await db.selectFrom('debit_orders').selectAll().where('id', '=', order.id)
    .executeTakeFirstOrThrow()
  assert.equal(row.collection_date, '2026-12-07')
  assert.equal(row.end_date, '2027-06-30')
  assert.equal(row.attempts, 0)
  assert.equal(BigInt(row.amount), 10_000n)
  assert.deepEqual(row.metadata, { plan: 'gold' })
  const m = await db.selectFrom('debit_mandates').selectAll().where('id', '=', mandate.id)
    .executeTakeFirstOrThrow()
  assert.equal(m.first_collection_date, '2026-12-01')
})

test('debit tables - constraints: recurring needs end_date, end_date not before collection_date, reference unique per entity', async () => {
  const db = tb.bank.database.db
  const mandate = mandateRow(`M-${randomUUID()}`)
  await db.insertInto('debit_mandates').values(mandate).execute()
  await assert.rejects(db.insertInto('debit_orders').values(
    orderRow(mandate.id, { end_date: null })).execute())
  await assert.rejects(db.insertInto('debit_orders').values(
    orderRow(mandate.id, { end_date: '2026-12-06' })).execute())
  await assert.rejects(db.insertInto('debit_orders').values(
    orderRow(mandate.id, { collection_date: '7 Dec 2026' })).execute())
  await assert.rejects(db.insertInto('debit_mandates').values(
    { ...mandateRow(mandate.mandate_reference) }).execute())
  await db.insertInto('debit_orders').values(
    orderRow(mandate.id, { frequency: 'once_off', end_date: null })).execute()
})
