import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  advanceTo,
  assertLedgerClean,
  balanceOf,
  debitRowsOf,
  debtOf,
  debtors,
  eventTypesOf,
  fee,
  newOrder,
  poolAccountOf,
  sast,
  statusOf,
} from './collection-helpers.ts'

// Disputes (docs/guides/debit-orders.md): a successful collection the debtor disputes within 40
// days goes `disputed` and its credit is reversed. When the account cannot cover the
// reversal it goes to zero and the rest is the partner's debt, recovered first from its
// later credits (deposits, internal payments to it, collections); no balance goes below zero and
// `ledger verify` accounts for the debt. The simulated rail's debtor 5000000005 disputes 3 days
// after the collection; the bank books it at the next run (a business day).

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let rich: TestPartner
let poor: TestPartner
let richAccount: string
let poorAccount: string
let richOrder: string
let poorOrder: string
const amount = 10_000
const net = amount - fee

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  rich = await onboardPartner(tb, { approve: true })
  poor = await onboardPartner(tb, { approve: true })
  richAccount = await poolAccountOf(rich)
  poorAccount = await poolAccountOf(poor)
  richOrder = await newOrder(tb, rich, { account_number: debtors.disputed,
    collection_date: '2026-11-25', amount })
  poorOrder = await newOrder(tb, poor, { account_number: debtors.disputed,
    collection_date: '2026-11-25', amount })
  await tb.operator.accounts.deposit({ account_id: richAccount, amount: 50_000 })
})

test('disputes - collected first, then the poor partner pays most of it out', async () => {
  await advanceTo(tb, sast('2026-11-25', '10:00'))
  assert.equal((await statusOf(rich, richOrder)).status, 'successful')
  assert.equal((await statusOf(poor, poorOrder)).status, 'successful')
  // RTC out of the poor partner's account: 8,000 plus the 700 RTC fee leaves 950.
  await poor.client.accounts.transfer({
    account_id: poorAccount, clientTxId: randomUUID(), amount: 8_000, ref: 'payout',
      own_ref: 'payout',
    account_number: '62000000001', branch_code: '250655', name: 'Supplier', pay_and_clear: true,
  } as Parameters<TestPartner['client']['accounts']['transfer']>[0])
  assert.equal((await balanceOf(poor, poorAccount)).balance, net - 8_700)
})

test('disputes - nothing is disputed before the debtor raises it; the next run after books it', async () => {
  // The debtor disputes on Saturday 28 November 00:00 SAST (3 days after the collection).
  await advanceTo(tb, sast('2026-11-29', '23:00'))
  assert.equal((await statusOf(rich, richOrder)).status, 'successful')
  await advanceTo(tb, sast('2026-11-30'))
  const status = await statusOf(rich, richOrder)
  assert.equal(status.status, 'disputed')
  assert.deepEqual(status.status_history.map((h) => h.status),
    ['scheduled', 'processing', 'successful', 'disputed'])
  assert.match(status.status_history.at(-1)!.description, /disputed by the debtor/)
  assert.deepEqual(await eventTypesOf(tb, richOrder),
    ['debit_order.processing', 'debit_order.successful', 'debit_order.disputed'])
})

test('disputes - with the funds there, the credit is reversed in full', async () => {
  assert.equal((await balanceOf(rich, richAccount)).balance, 50_000)
  const rows = await debitRowsOf(tb, richAccount)
  assert.deepEqual(rows.map((r) => [r.tx_type, r.status, Number(r.credit), Number(r.debit)]), [
    ['debit_order', 'Reversed', net, 0],
    ['reversal', 'Successful', 0, net],
  ])
  assert.equal(rows[1]!.parent_tx_id, rows[0]!.id)
  assert.equal(await debtOf(tb, rich.partnerId), 0)
})

test('disputes - without the funds, the account goes to zero and the rest is owed by the partner', async () => {
  const status = await statusOf(poor, poorOrder)
  assert.equal(status.status, 'disputed')
  assert.match(status.status_history.at(-1)!.description, /8700 cents the account could not cover are owed by the partner/)
  assert.deepEqual(await balanceOf(poor, poorAccount), { balance: 0, available: 0 })
  const reversal = (await debitRowsOf(tb, poorAccount)).find((r) => r.tx_type === 'reversal')!
  assert.equal(Number(reversal.debit), net - 8_700)
  assert.equal(await debtOf(tb, poor.partnerId), 8_700)
  const internal = await assertLedgerClean(tb)
  assert.equal(internal[`partner_debt:${poor.partnerId}`], '-8700')
})

test('disputes - the debt is recovered first from a later deposit', async () => {
  await tb.operator.accounts.deposit({ account_id: poorAccount, amount: 5_000 })
  assert.equal((await balanceOf(poor, poorAccount)).balance, 0)
  assert.equal(await debtOf(tb, poor.partnerId), 3_700)
  await assertLedgerClean(tb)
})

test('disputes - and from an internal payment another partner makes to it', async () => {
  const { account_number } = await poor.client.accounts.getDetails({ account_id: poorAccount })
  await rich.client.accounts.transferInternal({
    account_id: richAccount, clientTxId: randomUUID(), amount: 1_000, ref: 'refund',
      own_ref: 'refund', account_number, name: 'Poor partner',
  } as Parameters<TestPartner['client']['accounts']['transferInternal']>[0])
  assert.equal((await balanceOf(poor, poorAccount)).balance, 0)
  assert.equal(await debtOf(tb, poor.partnerId), 2_700)
  await assertLedgerClean(tb)
})

test('disputes - and from a later collection, whose rest is the partner’s', async () => {
  tb.clock.set(sast('2026-11-30', '10:00'))
  const later = await newOrder(tb, poor, { collection_date: '2026-12-02', amount })
  await advanceTo(tb, sast('2026-12-02'))
  assert.equal((await statusOf(poor, later)).status, 'successful')
  assert.equal(await debtOf(tb, poor.partnerId), 0)
  assert.equal((await balanceOf(poor, poorAccount)).balance, net - 2_700)
  const recoveries = (await debitRowsOf(tb, poorAccount)).filter(
    (r) => r.own_ref === 'disputed debit order shortfall')
  assert.deepEqual(recoveries.map((r) => Number(r.debit)), [5_000, 1_000, 2_700])
  const internal = await assertLedgerClean(tb)
  assert.equal(internal[`partner_debt:${poor.partnerId}`], '0')
})

test('disputes - a dispute raised after 40 days is refused; the collection stays successful', async () => {
  const id = await newOrder(tb, rich, { collection_date: '2026-12-04', amount })
  await advanceTo(tb, sast('2026-12-04', '10:00'))
  const collected = await statusOf(rich, id)
  assert.equal(collected.status, 'successful')
  await advanceTo(tb, sast('2027-01-14', '10:00')) // 41 days after 00:00 SAST on 4 December
  await tb.bank.services.debitRail.raiseDispute?.(
    { debit_order_id: id, collection_date: '2026-12-04',
    bank_reference: collected.status_history.at(-1)!.bank_reference! })
  await advanceTo(tb, sast('2027-01-15'))
  assert.equal((await statusOf(rich, id)).status, 'successful')
  await assertLedgerClean(tb)
})

test('disputes - an operator’s dispute within 40 days is booked at the next run', async () => {
  const id = await newOrder(tb, rich, { collection_date: '2027-01-19', amount })
  await advanceTo(tb, sast('2027-01-19', '10:00'))
  const collected = await statusOf(rich, id)
  await tb.bank.services.debitRail.raiseDispute?.(
    { debit_order_id: id, collection_date: '2027-01-19',
    bank_reference: collected.status_history.at(-1)!.bank_reference! })
  await advanceTo(tb, sast('2027-01-20'))
  assert.equal((await statusOf(rich, id)).status, 'disputed')
  await assertLedgerClean(tb)
})

test('disputes - ledger verify finds a recorded debt that its postings do not bear out', async () => {
  const db = tb.bank.database.db
  await db.updateTable('partner_debts').set({ owed: 1 }).where('partner_id', '=', poor.partnerId)
    .execute()
  const report = await tb.operator.ledger.verify({})
  assert.equal(report.ok, false)
  assert.deepEqual(report.problems.map((p) => p.kind), ['debt_mismatch'])
  assert.match(report.problems[0]!.message,
    new RegExp(`partner ${poor.partnerId} owes 1 but its debt postings say 0`))
  await db.updateTable('partner_debts').set({ owed: 0 }).where('partner_id', '=', poor.partnerId)
    .execute()
  await assertLedgerClean(tb)
})
