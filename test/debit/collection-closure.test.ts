import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { expectApiError } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { advanceTo, assertLedgerClean, balanceOf, debtors, newOrder, poolAccountOf, sast,
  statusOf } from './collection-helpers.ts'

// Closing an account while a debit order's collection into it is under way with the
// debtor's bank (`processing`: the money may still come in) is refused as a pending
// transaction; once the collection has ended the account closes, and the credit went to the
// account while it was open, never to a closed one.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
})

test('closure - refused while a debit order\'s collection into the account is under way; closes once it ended', async () => {
  const account = await poolAccountOf(p)
  const keep = (await p.client.accounts.create({ entity_id: p.rootEntityId })).account_id
  // The debtor has too little money on the first attempt: the collection stays processing,
  // tried again the next business day.
  const order = await newOrder(tb, p, { account_number: debtors.insufficientTimes(1),
    collection_date: '2026-11-25', amount: 20_000, tracking_days: 3 })
  await advanceTo(tb, sast('2026-11-25'))
  assert.equal((await statusOf(p, order)).status, 'processing')

  const refused = await expectApiError(tb.operator.accounts.close({ account_id: account,
    reason: 'Customer leaves', pay_to_account_id: keep }), 422)
  assert.equal(refused.type, 'account_not_closable')
  assert.deepEqual((refused.details as Array<{ obstacle: string }>).map((d) => d.obstacle),
    ['pending_transactions'])
  assert.match(refused.message, /1 debit order collection under way with the debtor's bank/)
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')
  assert.equal((await statusOf(p, order)).status, 'processing', 'the order is not cancelled')

  await advanceTo(tb, sast('2026-11-26'))
  const collected = await statusOf(p, order)
  assert.equal(collected.status, 'successful')
  const credited = (await balanceOf(p, account)).balance
  assert.equal(credited, Number(collected.net_amount))
  const closed = await tb.operator.accounts.close({ account_id: account,
    reason: 'Customer leaves', pay_to_account_id: keep })
  assert.deepEqual([closed.status, closed.payout?.amount], ['closed', String(credited)])
  assert.equal((await balanceOf(p, keep)).balance, credited)
  await assertLedgerClean(tb)
})
