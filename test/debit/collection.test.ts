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
  eventsOf,
  eventTypesOf,
  fee,
  newOrder,
  poolAccountOf,
  sast,
  statusOf,
} from './collection-helpers.ts'

// Collection runs (docs/guides/debit-orders.md): the run of each SA business day at 00:00 SAST,
// driven by the sandbox clock (ops.sandbox.clock.advance runs what falls due on the way),
// against the simulated debit rail's magic debtor accounts. One timeline for the file:
// every order is created on Monday 2026-11-23 10:00 SAST and the clock only moves forward.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let account: string
const orders: Record<string, string> = {}

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  account = await poolAccountOf(p)
  // Wednesday 2026-11-25 is the earliest collection date of an order created on a Monday.
  orders.always = await newOrder(tb, p, { account_number: debtors.ordinary,
    collection_date: '2026-11-25', amount: 10_000 })
  orders.closed = await newOrder(tb, p, { account_number: debtors.accountClosed,
    collection_date: '2026-11-25' })
  orders.forEver = await newOrder(tb, p, { account_number: debtors.insufficientForEver,
    collection_date: '2026-11-25', tracking_days: 3 })
  orders.noTracking = await newOrder(tb, p, { account_number: debtors.insufficientForEver,
    collection_date: '2026-11-25', tracking_days: 0 })
  orders.twice = await newOrder(tb, p, { account_number: debtors.insufficientTimes(2),
    collection_date: '2026-11-25', amount: 20_000 })
  orders.revoked = await newOrder(tb, p, {
    account_number: debtors.insufficientTimes(2), collection_date: '2026-12-01', amount: 25_000,
      frequency: 'monthly', end_date: '2027-03-25',
  })
  // Saturday 2026-11-28 moves to Monday 2026-11-30; 16 December (a holiday) to Thursday 17
  // December.
  orders.weekend = await newOrder(tb, p, { collection_date: '2026-11-28', amount: 30_000 })
  orders.holiday = await newOrder(tb, p, { collection_date: '2026-12-16', amount: 40_000 })
})

test('collection - nothing is collected before 00:00 SAST of the collection date', async () => {
  await advanceTo(tb, sast('2026-11-24', '23:59'))
  for (const id of Object.values(orders)) assert.equal((await statusOf(p, id)).status, 'scheduled')
  assert.equal((await balanceOf(p, account)).balance, 0)
})

test('collection - the run at 00:00 SAST credits amount − bank charges as a debit_order transaction with its history', async () => {
  await advanceTo(tb, sast('2026-11-25', '00:30'))
  const status = await statusOf(p, orders.always!)
  assert.equal(status.status, 'successful')
  assert.equal(status.processed_date, '2026-11-24T22:00:00Z')
  assert.equal(status.bank_charges, String(fee))
  assert.equal(status.net_amount, String(10_000 - fee))
  assert.deepEqual(status.status_history.map((h) => h.status),
    ['scheduled', 'processing', 'successful'])
  const collected = status.status_history[2]!
  assert.match(collected.bank_reference ?? '', /^SIMDO[0-9A-F]{12}$/)
  assert.equal(collected.timestamp, '2026-11-24T22:00:00Z')
  const rows = await debitRowsOf(tb, account)
  assert.equal(rows.length, 1)
  assert.equal(rows[0]!.tx_type, 'debit_order')
  assert.equal(rows[0]!.status, 'Successful')
  assert.equal(Number(rows[0]!.amount), 10_000)
  assert.equal(Number(rows[0]!.credit), 10_000 - fee)
  assert.equal(Number(rows[0]!.fee), fee)
  assert.equal((await balanceOf(p, account)).balance, 10_000 - fee)
})

test('collection - a closed account fails at once with its reason', async () => {
  const status = await statusOf(p, orders.closed!)
  assert.equal(status.status, 'failed')
  assert.match(status.status_history.at(-1)!.description, /closed/)
  assert.equal(status.net_amount, '0')
})

test('collection - insufficient funds with no tracking days fails at the first attempt', async () => {
  const status = await statusOf(p, orders.noTracking!)
  assert.equal(status.status, 'failed')
  assert.match(status.status_history.at(-1)!.description, /insufficient funds.*tracking days ran out after 1 attempt/)
})

test('collection - insufficient funds is retried on the next business days and collected on the third attempt', async () => {
  assert.equal((await statusOf(p, orders.twice!)).status, 'processing')
  await advanceTo(tb, sast('2026-11-26'))
  assert.equal((await statusOf(p, orders.twice!)).status, 'processing')
  await advanceTo(tb, sast('2026-11-27'))
  const status = await statusOf(p, orders.twice!)
  assert.equal(status.status, 'successful')
  assert.equal(status.processed_date, '2026-11-26T22:00:00Z')
  const retries = status.status_history.filter((h) => /tried again/.test(h.description))
  assert.deepEqual(retries.map((h) => h.description), [
    'insufficient funds (attempt 1); tried again on 2026-11-26',
    'insufficient funds (attempt 2); tried again on 2026-11-27',
  ])
  const [collection] = await collectionsOf(tb, orders.twice!)
  assert.equal(collection!.attempts, 3)
})

test('collection - retries skip the weekend and end when tracking_days run out', async () => {
  await advanceTo(tb, sast('2026-11-29', '23:00'))
  let status = await statusOf(p, orders.forEver!)
  assert.equal(status.status, 'processing')
  assert.equal(status.status_history.filter((h) => /tried again/.test(h.description)).length, 3) // Wed, Thu, Fri
  assert.equal((await statusOf(p, orders.weekend!)).status, 'scheduled')
  await advanceTo(tb, sast('2026-11-30'))
  status = await statusOf(p, orders.forEver!)
  assert.equal(status.status, 'failed')
  assert.match(status.status_history.at(-1)!.description, /tracking days ran out after 4 attempts/)
  const [collection] = await collectionsOf(tb, orders.forEver!)
  assert.equal(collection!.attempts, 4) // 25, 26, 27 and 30 November: 1 + 3 tracking days
})

test('collection - a date moved past a weekend is collected on the Monday', async () => {
  const status = await statusOf(p, orders.weekend!)
  assert.equal(status.collection_date, '2026-11-30')
  assert.equal(status.status, 'successful')
  assert.equal(status.processed_date, '2026-11-29T22:00:00Z')
})

test('collection - a mandate cancelled while its order is retried ends the order failed; the debtor is not asked again', async () => {
  await advanceTo(tb, sast('2026-12-01'))
  assert.equal((await statusOf(p, orders.revoked!)).status, 'processing',
    'insufficient funds on the first attempt: retried')
  const { mandate_reference } = await tb.bank.database.db.selectFrom('debit_orders').select(
    'mandate_reference').where('id', '=', orders.revoked!).executeTakeFirstOrThrow()
  await p.client.mandates.cancel({ entity_id: p.rootEntityId, mandate_reference })
  const before = await balanceOf(p, account)
  // This debtor's bank would collect on the third attempt (3 December), had it been asked.
  await advanceTo(tb, sast('2026-12-03'))
  const status = await statusOf(p, orders.revoked!)
  assert.equal(status.status, 'failed')
  assert.match(status.status_history.at(-1)!.description, /mandate is no longer active/)
  const [collection] = await collectionsOf(tb, orders.revoked!)
  assert.equal(collection!.attempts, 1, 'asked once, before the mandate was cancelled')
  const list = await p.client.debitOrders.list({ entity_id: p.rootEntityId, status: 'failed' })
  assert.equal(list.debit_orders.find((o) => o.debit_order_id === orders.revoked)
    ?.next_collection_date ?? null, null, 'no later collection is scheduled')
  const credits = (await debitRowsOf(tb, account)).filter((row) => String(row.amount) === '25000')
  assert.deepEqual(credits, [], 'nothing was collected')
  assert.ok((await balanceOf(p, account)).balance >= before.balance)
})

test('collection - no run on a public holiday; the moved date is collected the next business day', async () => {
  await advanceTo(tb, sast('2026-12-16', '12:00'))
  const waiting = await statusOf(p, orders.holiday!)
  assert.equal(waiting.collection_date, '2026-12-17')
  assert.equal(waiting.status, 'scheduled')
  await advanceTo(tb, sast('2026-12-17'))
  const status = await statusOf(p, orders.holiday!)
  assert.equal(status.status, 'successful')
  assert.equal(status.processed_date, '2026-12-16T22:00:00Z')
})

test('collection - each transition is announced once: processing, then successful or failed (retries are not)', async () => {
  assert.deepEqual(await eventTypesOf(tb, orders.always!),
    ['debit_order.processing', 'debit_order.successful'])
  assert.deepEqual(await eventTypesOf(tb, orders.closed!),
    ['debit_order.processing', 'debit_order.failed'])
  assert.deepEqual(await eventTypesOf(tb, orders.forEver!),
    ['debit_order.processing', 'debit_order.failed'])
  assert.deepEqual(await eventTypesOf(tb, orders.twice!),
    ['debit_order.processing', 'debit_order.successful'])
  const [, successful] = await eventsOf(tb, orders.always!)
  assert.equal(successful!.data.status, 'successful')
  assert.equal(successful!.data.debit_order_id, orders.always)
  assert.equal(successful!.data.entity_id, p.rootEntityId)
  assert.equal(successful!.data.net_amount, String(10_000 - fee))
  assert.deepEqual((successful!.data.status_history as Array<{ status: string }>).map(
    (h) => h.status), ['scheduled', 'processing', 'successful'])
})

test('collection - the ledger is clean and its internal accounts account for every collection', async () => {
  const collected = [10_000, 20_000, 30_000, 40_000]
  const internal = await assertLedgerClean(tb)
  assert.equal(internal['settlement:DEBIT_ORDER'], String(-collected.reduce((a, b) => a + b, 0)))
  assert.equal(internal['fee_income'], String(fee * collected.length))
  assert.equal((await balanceOf(p, account)).balance, collected.reduce((a, b) => a + b - fee, 0))
})

test('collection - a run of a day again (operator) collects nothing twice', async () => {
  const before = await balanceOf(p, account)
  const again = await tb.bank.services.debitCollection.runNow('2026-11-25')
  assert.deepEqual({ submitted: again.submitted, successful: again.successful, failed: again.failed,
    retrying: again.retrying }, { submitted: 0, successful: 0, failed: 0, retrying: 0 })
  await tb.bank.services.debitCollection.runNow('2026-12-17')
  assert.deepEqual(await balanceOf(p, account), before)
  assert.equal((await debitRowsOf(tb, account)).length, 4)
  await assertLedgerClean(tb)
})
