import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { onboardPartner, secondOperator, useTestBank, type TestPartner } from '../support/harness.ts'
import { clearReview, fixture, uploadList } from '../screening/list-upload.ts'
import { balances, fund, newAccount, transferBody, txById } from './helpers.ts'

// Payout recipients screened against the sanctions lists through a real bank (RULINGS
// "Financial crime controls": "A payout hit → the payment stays `Pending` in review"): a
// payout to a listed name is taken (its money held) but stays Pending and is not sent, by
// the clearing cycle or the RTC gateway, until an operator decides its review; cleared, it is
// paid as any payout; confirmed, it fails, its money stays with the payer and the paying
// customer's accounts are frozen. A name not on the lists is untouched, and the partner never
// sees the list's entry.

const fees = { EFT: 250, RTC: 700 }
const listed = 'Dmitri Volkovsky'

const tb = useTestBank()
let p: TestPartner
let checker: Awaited<ReturnType<typeof secondOperator>>

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  checker = await secondOperator(tb)
  await uploadList(tb, fixture('ofac-sdn.xml'))
  await uploadList(tb, fixture('un-consolidated.xml'))
})

async function reviewOf(txId: string, partner = p) {
  const { reviews } = await tb.operator.screening.reviews({ partner_id: partner.partnerId })
  return reviews.find((r) => r.subject_id === txId)
}

/** Clears a review (a second operator's too when its score asks for one). */
const clear = (reviewId: string) => clearReview(tb, checker, reviewId,
  'Another person of that name: the recipient is a local supplier')

test('payout screening - an EFT to a listed recipient is taken but stays Pending in review, is not sent, and the partner never sees the list entry', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 10_000,
    name: listed }))
  assert.equal(sent.status, 'Pending')
  const told = JSON.stringify(sent)
  for (const secret of ['screening', 'ofac', 'VOLKOVSKY', 'score']) {
    assert.ok(!told.toLowerCase().includes(secret.toLowerCase()), `the reply tells ${secret}`)
  }
  const held = String(100_000 - 10_000 - fees.EFT)
  assert.deepEqual(await balances(p, account), { balance: '100000', available: held })

  const review = await reviewOf(sent.tx_id)
  assert.ok(review, 'a review of the payout')
  assert.deepEqual([review.subject, review.cause, review.status, review.entity_id],
    ['payout', 'payout', 'open', p.rootEntityId])
  assert.deepEqual(review.screened.map((s) => s.kind), ['individual', 'entity'])

  const report = await tb.operator.clearing.run()
  assert.equal(report.settled, 0, 'a payout in review is not sent')
  assert.equal((await txById(p, sent.tx_id)).status, 'Pending')
  // An undecided payout review holds the payment, not its customer.
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')

  await clear(review.id)
  const cleared = await tb.operator.clearing.run()
  assert.equal(cleared.settled, 1)
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  const left = String(100_000 - 10_000 - fees.EFT)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('payout screening - confirming a payout\'s hit fails it, returns its money and freezes the paying customer\'s accounts', async () => {
  // A partner of its own: its customer's accounts end frozen.
  const payer = await onboardPartner(tb, { approve: true })
  const account = await newAccount(payer)
  await fund(tb, account, 50_000)
  const sent = await payer.client.accounts.transfer(transferBody(account, { amount: 20_000,
    name: 'Northern Star Petroleum' }))
  assert.equal(sent.status, 'Pending')
  const review = await reviewOf(sent.tx_id, payer)
  assert.ok(review)
  const confirmed = await tb.operator.screening.decide({ review_id: review.id,
    decision: 'confirm', reason: 'The recipient account is the listed company\'s' })
  assert.equal(confirmed.status, 'confirmed')

  const failed = await txById(payer, sent.tx_id)
  assert.equal(failed.status, 'Failed')
  assert.ok(!JSON.stringify(failed).includes('990003'), 'the list entry is not told')
  assert.deepEqual(await balances(payer, account), { balance: '50000', available: '50000' })
  const status = await payer.client.accounts.status({ account_id: account })
  assert.deepEqual([status.status, status.changed_by], ['frozen', 'system'])
  const report = await tb.operator.clearing.run()
  assert.equal(report.settled + report.failed, 0, 'nothing of it is sent')
  await assertLedgerClean(tb)
})

test('payout screening - an RTC to a listed recipient is not paid until cleared; the RTC recovery pays it then', async () => {
  const other = await onboardPartner(tb, { approve: true })
  const account = await newAccount(other)
  await fund(tb, account, 100_000)
  const sent = await other.client.accounts.transfer(transferBody(account, { amount: 30_000,
    name: 'VOLKOVSKY, Dmitri', pay_and_clear: true }))
  assert.equal(sent.status, 'Pending')
  const review = await reviewOf(sent.tx_id, other)
  assert.ok(review, 'a review of the RTC')

  tb.clock.advance(24 * 3_600_000)
  const waiting = await tb.operator.clearing.run()
  assert.equal(waiting.rtc_recovered, 0, 'an RTC in review is not paid')
  assert.equal((await other.client.accounts.getTransaction({ tx_id: sent.tx_id }))
    .transaction.status, 'Pending')

  await clear(review.id)
  const paid = await tb.operator.clearing.run()
  assert.equal(paid.rtc_recovered, 1)
  assert.equal((await other.client.accounts.getTransaction({ tx_id: sent.tx_id }))
    .transaction.status, 'Successful')
  const left = String(100_000 - 30_000 - fees.RTC)
  const details = await other.client.accounts.getDetails({ account_id: account })
  assert.deepEqual([details.balance, details.available_balance], [left, left])
  await assertLedgerClean(tb)
})

test('payout screening - a recipient not on the lists is paid as before, with no review; bad input is still 400', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const rtc = await p.client.accounts.transfer(transferBody(account, { amount: 10_000,
    name: 'Thandiwe Mokoena', pay_and_clear: true }))
  assert.equal(rtc.status, 'Successful')
  const eft = await p.client.accounts.transfer(transferBody(account, { amount: 10_000,
    name: 'Thandiwe Mokoena' }))
  assert.equal(eft.status, 'Pending')
  assert.equal(await reviewOf(rtc.tx_id), undefined)
  assert.equal(await reviewOf(eft.tx_id), undefined)
  await expectApiError(p.client.accounts.transfer(transferBody(account, { amount: -1,
    name: listed })), 400, 'amount')
})
