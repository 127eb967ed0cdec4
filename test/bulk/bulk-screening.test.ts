import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import {
  onboardPartner, secondOperator, useTestBank, type TestPartner,
} from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { clearReview, fixture, uploadList } from '../screening/list-upload.ts'
import { balances, fund, newAccount, sast, txById } from '../transfers/helpers.ts'
import { batchBody, otpOf, payment } from './helpers.ts'

// The recipients of a bulk batch screened against the sanctions lists (RULINGS "Financial
// crime controls": "A payout hit → the payment stays `Pending` in review"), through a real
// bank: when the batch's payments become payouts, a payment to a listed name opens a review
// and waits (`processing`, its transaction `Pending`), neither paid at once (RTC) nor sent
// with a clearing cycle (EFT), while the rest of the batch goes on. Cleared, it is paid as
// any payment of a batch; confirmed, it fails, its money goes back to the payer and the
// paying customer's accounts are frozen. The partner never sees the list's entry, the name
// it matched or the score. The bank's job loop is stopped: jobs run by hand.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000', BANK_SANDBOX: 'true' } })
const fees = { EFT: 250, RTC: 700 }
let checker: Awaited<ReturnType<typeof secondOperator>>

// Written by the partner as a typo of the listed `Dmitri VOLKOVSKY` (OFAC uid 990001), and a
// company listed as `NORTHERN STAR PETROLEUM LLC` (990003): what the list holds differs
// from what the partner wrote, so a reply that told it would show.
const listedPerson = 'Dmitri Volkovski'
const listedCompany = 'Northern Star Petroleum'
const secrets = ['VOLKOVSKY', 'PETROLEUM LLC', '990001', '990003', 'score', 'ofac', 'sdn',
  'un_consolidated', 'list_ref', 'entry_id', 'matched']

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  checker = await secondOperator(tb)
  await uploadList(tb, fixture('ofac-sdn.xml'))
  await uploadList(tb, fixture('un-consolidated.xml'))
  tb.clock.set(sast('2026-11-23', '09:00'))
})

const runJobs = () => tb.bank.services.jobRunner.runDue()

async function clearingCycle(): Promise<void> {
  await tb.operator.clearing.run({})
  await tb.bank.services.events.dispatchPending()
  await runJobs()
}

/** A partner with an account of its root entity funded with `amount` cents. */
async function payer(amount: number) {
  const p = await onboardPartner(tb, { approve: true })
  const account = await newAccount(p)
  await fund(tb, account, amount)
  return { p, account }
}

/** Initiates and verifies a batch, then runs its processing job. */
async function pay(p: TestPartner, account: string, payments: Array<Record<string, unknown>>) {
  const body = batchBody(p.rootEntityId, payments, { account_id: account,
    callback_url: 'https://hooks.example.com/batches' })
  const replies: unknown[] = [await p.client.bulkPayments.initiate(body)]
  replies.push(await p.client.bulkPayments.verify({ entity_id: p.rootEntityId,
    bulk_payment_id: body.bulk_payment_id, otp: await otpOf(tb, p, body.bulk_payment_id) }))
  await runJobs()
  const status = () => p.client.bulkPayments.status({ entity_id: p.rootEntityId,
    bulk_payment_id: body.bulk_payment_id })
  return { body, replies, status }
}

async function reviewsOf(p: TestPartner) {
  return (await tb.operator.screening.reviews({ partner_id: p.partnerId })).reviews
}

/** Clears a review (a second operator's too when its score asks for one). */
const clear = (reviewId: string) => clearReview(tb, checker, reviewId,
  'Another person of that name: a local contractor')

/** Every event the partner is told of, as stored for delivery. */
async function eventsOf(p: TestPartner) {
  return tb.bank.database.db.selectFrom('events').selectAll()
    .where('partner_id', '=', p.partnerId).orderBy('seq').execute()
}

function assertTellsNothing(what: string, told: unknown): void {
  const text = JSON.stringify(told)
  for (const secret of secrets) {
    const found = secret === secret.toUpperCase() || /^\d+$/.test(secret)
      ? text.includes(secret) : text.toLowerCase().includes(secret)
    assert.ok(!found, `${what} tells ${secret}`)
  }
}

test('bulk screening - listed recipients wait Pending in review while the clean ones are paid; cleared, they are paid (EFT at the next cycle, RTC at once) and the batch completes', async () => {
  const { p, account } = await payer(1_000_000)
  const payments = [
    payment(1, { amount: 10_000 }),
    payment(2, { amount: 20_000, name: listedPerson }),
    payment(3, { amount: 30_000, real_time: true }),
    payment(4, { amount: 40_000, real_time: true, name: 'Volkovsky, Dmitri' }),
  ]
  const { replies, status } = await pay(p, account, payments)
  const debited = 100_000 + 2 * fees.EFT + 2 * fees.RTC
  const left = String(1_000_000 - debited)

  // The clean RTC is paid at once; the listed RTC is not, and the job does not wait for it.
  let batch = await status()
  assert.equal(batch.status, 'processing')
  assert.deepEqual(batch.payments.map((x) => x.status),
    ['processing', 'processing', 'success', 'processing'])
  const txOf = (id: string) => batch.payments.find((x) => x.payment_id === id)!.tx_id!
  for (const id of ['p-2', 'p-4']) assert.equal((await txById(p, txOf(id))).status, 'Pending')
  const job = await tb.bank.database.db.selectFrom('jobs').select(['state', 'attempts'])
    .where('kind', '=', 'bulk.process')
    .where('key', '=', (await batchRow(p, batch.bulk_payment_id)).id).executeTakeFirstOrThrow()
  assert.deepEqual([job.state, job.attempts], ['done', 1])

  const reviews = await reviewsOf(p)
  assert.deepEqual(reviews.map((r) => r.subject_id).sort(), [txOf('p-2'), txOf('p-4')].sort())
  for (const review of reviews) {
    assert.deepEqual([review.subject, review.cause, review.status, review.entity_id],
      ['payout', 'payout', 'open', p.rootEntityId])
  }

  // A clearing cycle sends the clean EFT, not the listed one.
  await clearingCycle()
  batch = await status()
  assert.deepEqual(batch.payments.map((x) => x.status),
    ['success', 'processing', 'success', 'processing'])
  assert.equal(batch.status, 'processing')
  assert.equal((await txById(p, txOf('p-2'))).status, 'Pending')
  // An undecided payment review holds the payment, not its customer.
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')

  for (const review of reviews) await clear(review.id)
  // The cleared RTC is paid by the processing run its clearing enqueued.
  await runJobs()
  batch = await status()
  assert.deepEqual(batch.payments.map((x) => x.status),
    ['success', 'processing', 'success', 'success'])
  // The cleared EFT goes with the next cycle; the batch completes, every amount paid.
  await clearingCycle()
  await assertAllPaid(p, await status(), replies)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

/** The first test's batch at its end: completed, all four paid, once each, nothing told. */
async function assertAllPaid(p: TestPartner, batch: BatchView, replies: unknown[]) {
  assert.equal(batch.status, 'completed')
  assert.deepEqual(batch.payments.map((x) => x.status), ['success', 'success', 'success',
    'success'])
  assert.deepEqual([batch.successful_amount, batch.failed_amount, batch.successful_count],
    ['100000', '0', 4])
  const events = await eventsOf(p)
  assert.deepEqual(events.filter((e) => e.type.startsWith('payment.')).map((e) => e.type),
    ['payment.success', 'payment.success', 'payment.success', 'payment.success'])
  assert.equal(events.filter((e) => e.type === 'bulk_payment.completed').length, 1)
  assertTellsNothing('a reply', [...replies, batch])
  assertTellsNothing('an event', events.map((e) => e.data))
}

type BatchView = Awaited<ReturnType<TestPartner['client']['bulkPayments']['status']>>

async function batchRow(p: TestPartner, bulkPaymentId: string) {
  return tb.bank.database.db.selectFrom('bulk_payments').select('id')
    .where('partner_id', '=', p.partnerId).where('bulk_payment_id', '=', bulkPaymentId)
    .executeTakeFirstOrThrow()
}

test('bulk screening - confirming a payment\'s hit fails it, refunds its amount and fee to the cent, freezes the payer\'s accounts; the batch completes with totals that add up', async () => {
  const { p, account } = await payer(500_000)
  const payments = [
    payment(1, { amount: 12_345, real_time: true }),
    payment(2, { amount: 67_891, name: listedCompany }),
    payment(3, { amount: 1_111 }),
  ]
  const { replies, status } = await pay(p, account, payments)
  let batch = await status()
  assert.deepEqual(batch.payments.map((x) => x.status), ['success', 'processing', 'processing'])
  const held = batch.payments[1]!.tx_id!
  const [review] = await reviewsOf(p)
  assert.ok(review)
  assert.equal(review.subject_id, held)

  const confirmed = await tb.operator.screening.decide({ review_id: review.id,
    decision: 'confirm', reason: 'The recipient account is the listed company\'s' })
  assert.equal(confirmed.status, 'confirmed')
  batch = await status()
  assert.equal(batch.payments[1]!.status, 'failed')
  assert.equal(batch.payments[1]!.error_message, "refused by the bank's sanctions screening")
  assert.equal((await txById(p, held)).status, 'Failed')
  // The batch took total plus fees; the refused payment's amount and fee came back.
  const kept = 500_000 - (12_345 + 67_891 + 1_111 + fees.RTC + 2 * fees.EFT) + 67_891 + fees.EFT
  assert.deepEqual(await balances(p, account), { balance: String(kept),
    available: String(kept) })
  const frozen = await p.client.accounts.status({ account_id: account })
  assert.deepEqual([frozen.status, frozen.changed_by], ['frozen', 'system'])

  // The clean EFT still goes with the cycle (its money left at verify) and completes the batch.
  await clearingCycle()
  batch = await status()
  assert.equal(batch.status, 'completed')
  assert.deepEqual(batch.payments.map((x) => x.status), ['success', 'failed', 'success'])
  assert.deepEqual([batch.successful_amount, batch.failed_amount, batch.total_amount],
    [String(12_345 + 1_111), '67891', String(12_345 + 67_891 + 1_111)])
  assert.deepEqual(await balances(p, account), { balance: String(kept),
    available: String(kept) })

  const events = await eventsOf(p)
  const failed = events.filter((e) => e.type === 'payment.failed')
  assert.equal(failed.length, 1)
  assert.equal((failed[0]!.data as { payment_id: string }).payment_id, 'p-2')
  assert.deepEqual(events.filter((e) => e.type === 'entity.screening_changed')
    .map((e) => (e.data as { status: string }).status), ['confirmed'])
  const completed = events.filter((e) => e.type === 'bulk_payment.completed')
  assert.equal(completed.length, 1)
  assert.equal((completed[0]!.data as { failed_amount: string }).failed_amount, '67891')
  assertTellsNothing('a reply', [...replies, batch, await p.client.accounts.status(
    { account_id: account })])
  assertTellsNothing('an event', events.map((e) => e.data))
  await assertLedgerClean(tb)
})

test('bulk screening - a batch of clean recipients opens no review; a review of another batch holds only its own payment', async () => {
  const { p, account } = await payer(200_000)
  const listed = await pay(p, account, [payment(1, { name: listedPerson })])
  const clean = await pay(p, account, [payment(1), payment(2, { real_time: true })])
  assert.deepEqual((await clean.status()).payments.map((x) => x.status),
    ['processing', 'success'])
  await clearingCycle()
  assert.equal((await clean.status()).status, 'completed')
  assert.equal((await listed.status()).status, 'processing')
  const reviews = await reviewsOf(p)
  assert.deepEqual(reviews.map((r) => r.subject_id),
    [(await listed.status()).payments[0]!.tx_id])
})
