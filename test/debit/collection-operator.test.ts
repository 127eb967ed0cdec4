import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectRefusal } from '../support/assertions.ts'
import { assertLedgerClean, eventTypesOf, newOrder, sast, statusOf } from './collection-helpers.ts'

// The operator's side of collection runs: `ops.debit.run` (`bank debit run [--date]`) runs
// one now and answers its counts; `ops.debit.dispute` (`bank debit dispute <id>`, sandbox
// only; see collection-production.test.ts) has the debtor dispute an order's last
// collection, which the next run books.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
})

test('operator - a run for a date collects the orders due by it and answers its counts', async () => {
  const ids = [await newOrder(tb, p, { collection_date: '2026-11-25' }),
    await newOrder(tb, p, { collection_date: '2026-11-26' })]
  const report = await tb.operator.debit.run({ date: '2026-11-25' })
  assert.equal(report.date, '2026-11-25')
  assert.match(report.run, /^manual:2026-11-25:/)
  assert.deepEqual(
    { submitted: report.submitted, successful: report.successful, failed: report.failed,
      retrying: report.retrying, disputed: report.disputed },
    { submitted: 1, successful: 1, failed: 0, retrying: 0, disputed: 0 },
  )
  assert.equal((await statusOf(p, ids[0]!)).status, 'successful')
  assert.equal((await statusOf(p, ids[1]!)).status, 'scheduled')
  // Without a date: today in SAST (2026-11-23), when nothing is due.
  assert.equal((await tb.operator.debit.run({})).date, '2026-11-23')
  await expectRefusal(tb.operator.debit.run({ date: '2026-02-30' }), 400, 'date')
})

test('operator - a dispute of an order’s last collection is booked by the next run', async () => {
  const id = await newOrder(tb, p, { collection_date: '2026-11-25', amount: 20_000 })
  await tb.operator.debit.run({ date: '2026-11-25' })
  const raised = await tb.operator.debit.dispute({ debit_order_id: id })
  assert.equal(raised.collection_date, '2026-11-25')
  assert.match(raised.bank_reference, /^SIMDO/)
  assert.equal(raised.disputed_at, '2026-11-23T08:00:00Z')
  assert.equal((await statusOf(p, id)).status, 'successful')
  const report = await tb.operator.debit.run({})
  assert.equal(report.disputed, 1)
  assert.equal((await statusOf(p, id)).status, 'disputed')
  assert.deepEqual(await eventTypesOf(tb, id), ['debit_order.processing', 'debit_order.successful',
    'debit_order.disputed'])
  // Disputing it again names the same collection and changes nothing.
  assert.equal((await tb.operator.debit.dispute({ debit_order_id: id })).collection_date,
    '2026-11-25')
  assert.equal((await tb.operator.debit.run({})).disputed, 0)
  await assertLedgerClean(tb)
})

test('operator - a dispute of an unknown order is 404; of an order with no collection, 400 naming debit_order_id', async () => {
  await expectRefusal(tb.operator.debit.dispute({ debit_order_id: randomUUID() }), 404)
  const waiting = await newOrder(tb, p, { collection_date: '2026-12-01' })
  await expectRefusal(tb.operator.debit.dispute({ debit_order_id: waiting }), 400, 'debit_order_id')
})
