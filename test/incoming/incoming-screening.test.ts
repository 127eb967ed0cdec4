import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, secondOperator, useTestBank, type TestPartner } from '../support/harness.ts'
import { fixture, uploadList } from '../screening/list-upload.ts'
import { accountNumberOf, balances, newAccount } from '../transfers/helpers.ts'

// Incoming payers screened against the sanctions lists through a real bank (RULINGS
// "Financial crime controls"; src/incoming/incoming-screening.ts): a credit from a listed
// payer is booked, but the bank holds its amount (a legal hold naming the review) until an
// operator decides: cleared, the hold is released; confirmed, it stays and the customer's
// accounts are frozen. A payer not on the lists is credited as before.

const tb = useTestBank()
let checker: Awaited<ReturnType<typeof secondOperator>>

before(async () => {
  await tb.ready
  checker = await secondOperator(tb)
  await uploadList(tb, fixture('ofac-sdn.xml'))
  await uploadList(tb, fixture('un-consolidated.xml'))
})

async function credit(p: TestPartner, payerName: string, amount: number) {
  const account = await newAccount(p)
  const reply = await tb.operator.sandbox.incoming({ account_number:
    await accountNumberOf(p, account), amount, payer_name: payerName })
  assert.equal(reply.status, 'credited')
  return { account, txId: reply.tx_id! }
}

async function reviewOf(p: TestPartner, txId: string) {
  const { reviews } = await tb.operator.screening.reviews({ partner_id: p.partnerId })
  return reviews.find((r) => r.subject_id === txId)
}

test('incoming screening - a credit from a listed payer is booked but held in review; clearing the review releases the hold', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { account, txId } = await credit(p, 'Dmitri Volkovsky', 40_000)
  assert.deepEqual(await balances(p, account), { balance: '40000', available: '0' })
  const review = await reviewOf(p, txId)
  assert.ok(review, 'a review of the credit')
  assert.deepEqual([review.subject, review.cause, review.status, review.entity_id],
    ['incoming', 'incoming', 'open', p.rootEntityId])
  const status = await p.client.accounts.status({ account_id: account })
  assert.equal(status.status, 'active', 'an undecided review holds the credit, not the account')
  assert.deepEqual(status.holds.map((h) => [h.amount, h.reference]),
    [['40000', `sanctions screening review ${review.id}`]])

  const first = await tb.operator.screening.decide({ review_id: review.id, decision: 'clear',
    reason: 'The payer is a namesake: a local tenant' })
  if (first.status !== 'cleared') {
    await checker.client.screening.decide({ review_id: review.id, decision: 'clear',
      reason: 'Agreed' })
  }
  assert.deepEqual(await balances(p, account), { balance: '40000', available: '40000' })
  assert.deepEqual((await p.client.accounts.status({ account_id: account })).holds, [])
  await assertLedgerClean(tb)
})

test('incoming screening - confirming a payer\'s hit keeps the hold and freezes the customer\'s accounts', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { account, txId } = await credit(p, 'Northern Star Petroleum', 25_000)
  const review = await reviewOf(p, txId)
  assert.ok(review)
  await tb.operator.screening.decide({ review_id: review.id, decision: 'confirm',
    reason: 'The paying account is the listed company\'s' })
  const status = await p.client.accounts.status({ account_id: account })
  assert.deepEqual([status.status, status.changed_by, status.holds.length],
    ['frozen', 'system', 1])
  assert.deepEqual(await balances(p, account), { balance: '25000', available: '0' })
  await assertLedgerClean(tb)
})

test('incoming screening - a payer not on the lists is credited as before, with no review and no hold', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { account, txId } = await credit(p, 'Thandi Nkosi', 12_345)
  assert.deepEqual(await balances(p, account), { balance: '12345', available: '12345' })
  assert.equal(await reviewOf(p, txId), undefined)
})
