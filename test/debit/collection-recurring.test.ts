import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  advanceTo,
  assertLedgerClean,
  balanceOf,
  collectionsOf,
  debitRowsOf,
  debtors,
  eventTypesOf,
  fee,
  newOrder,
  poolAccountOf,
  sast,
  statusOf,
} from './collection-helpers.ts'

// Recurring debit orders (docs/guides/debit-orders.md): after each collection the order returns
// to `scheduled` with its next date until `end_date`, then ends in its last collection's
// status; monthly keeps the day of month, or takes the month's last business day when the
// month has no such day. The clock moves forward only, through ops.sandbox.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let account: string
let monthly31: string
let weekly: string
let failing: string
let closed: string
let slowWeekly: string

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-12-01', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  account = await poolAccountOf(p)
  monthly31 = await newOrder(tb, p, { frequency: 'monthly', collection_date: '2026-12-31',
    end_date: '2027-03-31', amount: 10_000 })
  weekly = await newOrder(tb, p, { frequency: 'weekly', collection_date: '2026-12-03',
    end_date: '2026-12-17', amount: 1_000 })
  failing = await newOrder(tb, p, { account_number: debtors.insufficientForEver,
    frequency: 'monthly', collection_date: '2026-12-04', end_date: '2027-01-04', tracking_days: 0 })
  closed = await newOrder(tb, p, { account_number: debtors.accountClosed, frequency: 'monthly',
    collection_date: '2026-12-04', end_date: '2027-06-04' })
  // Each collection finds insufficient funds 6 times and is collected at the 7th attempt.
  slowWeekly = await newOrder(tb, p, { account_number: debtors.insufficientTimes(6),
    frequency: 'weekly', collection_date: '2026-12-03', end_date: '2027-01-07', amount: 2_000 })
})

test('recurring - weekly: collected each week, back to scheduled in between, until its end date', async () => {
  await advanceTo(tb, sast('2026-12-03'))
  let status = await statusOf(p, weekly)
  assert.equal(status.status, 'scheduled')
  const listed = await p.client.debitOrders.list({ entity_id: p.rootEntityId, status: 'scheduled' })
  assert.equal(listed.debit_orders.find((o) => o.debit_order_id === weekly)?.next_collection_date,
    '2026-12-10')
  await advanceTo(tb, sast('2026-12-18'))
  status = await statusOf(p, weekly)
  // 3, 10 and 17 December; 17 December is the end date: nothing after it.
  assert.equal(status.status, 'successful')
  assert.deepEqual((await collectionsOf(tb, weekly)).map((c) => [c.collection_date, c.status]), [
    ['2026-12-03', 'successful'], ['2026-12-10', 'successful'], ['2026-12-17', 'successful'],
  ])
  const all = await p.client.debitOrders.list({ entity_id: p.rootEntityId })
  assert.equal(all.debit_orders.find((o) => o.debit_order_id === weekly)?.next_collection_date,
    null)
  assert.deepEqual(status.status_history.map((h) => h.status), [
    'scheduled', 'processing', 'successful', 'scheduled', 'processing', 'successful', 'scheduled',
      'processing', 'successful',
  ])
  assert.equal(status.status_history.filter((h) => h.bank_reference).length, 3)
  assert.deepEqual(await eventTypesOf(tb, weekly), [
    'debit_order.processing', 'debit_order.successful', 'debit_order.processing',
      'debit_order.successful', 'debit_order.processing', 'debit_order.successful',
  ])
})

test('recurring - a failed collection leaves the schedule running; a closed account ends it', async () => {
  const failed = await statusOf(p, failing)
  assert.equal(failed.status, 'scheduled') // 4 December failed, 4 January next
  assert.ok(failed.status_history.some((h) => h.status === 'failed'))
  const list = await p.client.debitOrders.list({ entity_id: p.rootEntityId })
  assert.equal(list.debit_orders.find((o) => o.debit_order_id === failing)?.next_collection_date,
    '2027-01-04')
  const ended = await statusOf(p, closed)
  assert.equal(ended.status, 'failed')
  assert.equal(list.debit_orders.find((o) => o.debit_order_id === closed)?.next_collection_date,
    null)
})

test('recurring - an occurrence that falls while a collection is still retried is skipped, not collected late', async () => {
  // 3 December was tried on 3, 4, 7, 8, 9 and 10 December and collected on the 11th; the
  // occurrence of 10 December fell meanwhile and is skipped: the next one is 17 December.
  const collections = await collectionsOf(tb, slowWeekly)
  assert.deepEqual(collections.map((c) => [c.collection_date, c.status, c.attempts]), [
    ['2026-12-03', 'successful', 7],
    ['2026-12-17', 'processing', 2],
  ])
  const status = await statusOf(p, slowWeekly)
  assert.equal(status.processed_date, '2026-12-10T22:00:00Z')
  assert.ok(
    status.status_history.some((h) => h.description === 'next collection scheduled for 2026-12-17'))
})

test('recurring - monthly on the 31st: the month’s last business day when it has no 31st, until the end date', async () => {
  await advanceTo(tb, sast('2027-04-02'))
  // 31 January 2027 is a Sunday (→ 1 February); February has no 31st (its last business day
  // is Friday 26 February); 31 March is a Wednesday and the end date.
  assert.deepEqual((await collectionsOf(tb, monthly31)).map((c) => [c.collection_date, c.status,
      Number(c.net_amount)]), [
    ['2026-12-31', 'successful', 10_000 - fee],
    ['2027-02-01', 'successful', 10_000 - fee],
    ['2027-02-26', 'successful', 10_000 - fee],
    ['2027-03-31', 'successful', 10_000 - fee],
  ])
  const status = await statusOf(p, monthly31)
  assert.equal(status.status, 'successful')
  assert.equal(status.processed_date, '2027-03-30T22:00:00Z')
  // 4 January failed too, and the end date came
  assert.equal((await statusOf(p, failing)).status, 'failed')
})

test('recurring - one credit per collection and a clean ledger', async () => {
  const credits = (await debitRowsOf(tb, account)).filter((r) => r.tx_type === 'debit_order')
  // slowWeekly: 3 December (collected 11 December), 17 December (28 December), 31 December (11
  // January); then the end date.
  assert.deepEqual((await collectionsOf(tb, slowWeekly)).map((c) => c.collection_date),
    ['2026-12-03', '2026-12-17', '2026-12-31'])
  assert.equal(credits.length, 4 + 3 + 3)
  assert.equal((await balanceOf(p, account)).balance, 4 * (10_000 - fee) + 3 * (1_000 - fee) + 3 * (
    2_000 - fee))
  await assertLedgerClean(tb)
})
