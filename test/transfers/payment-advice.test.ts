import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { SimulatedNotifier, type SentMessage } from '../../src/notify/simulated-notifier.ts'
import { payment_advice_job_kind } from '../../src/transfers/payment-advice.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { accountNumberOf, fund, internalBody, magic, newAccount, sast, transferBody } from './helpers.ts'

// Payment advices (docs/guides/payments.md): a payment sent with `notification_email`
// tells that address, once the payment is Successful, that it was paid — an RTC when it
// settles, an EFT when the clearing cycle settles it, an internal payment at once — and
// exactly once. A Failed or Invalid payment sends nothing. The advice is a job
// (`payment_advice.send`) committed with the change that made the payment Successful;
// this file stops the bank's own job loop and runs due jobs by hand, so that what ran is
// known when each assertion is made.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let account: string
let payeeNumber: string
let notifier: SimulatedNotifier
/** The root entity's name, which the advice gives as the payer (fixtures.businessEntity). */
const payer_name = 'Acme Holdings (Pty) Ltd'

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  p = await onboardPartner(tb, { approve: true })
  account =
    (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts[0]!.account_id
  await fund(tb, account, 100_000_000)
  payeeNumber = await accountNumberOf(p, await newAccount(p))
  notifier = new SimulatedNotifier(tb.bank.database.db, tb.clock)
})

let mailbox = 0
/** A fresh address per test, so each test reads only its own messages. */
const newAddress = () => `payee-${++mailbox}-${Date.now()}@example.com`

const runJobs = () => tb.bank.services.jobRunner.runDue()

async function messagesTo(address: string): Promise<SentMessage[]> {
  return notifier.list({ limit: 100, to: address })
}

async function adviceRow(txId: string) {
  return tb.bank.database.db.selectFrom('payment_advices').selectAll().where('tx_id', '=', txId)
    .executeTakeFirst()
}

async function adviceJobs(txId: string) {
  return tb.bank.database.db.selectFrom('jobs').select(['state']).where('kind', '=',
    payment_advice_job_kind).where('key', '=', txId).execute()
}

test('transfers - an RTC with notification_email sends one advice: amount in rand, ref, payer, SAST date', async () => {
  tb.clock.set(sast('2026-11-23', '10:15'))
  const to = newAddress()
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: 123_456_78, pay_and_clear: true, ref: 'INV-2026-0042',
      notification_email: to, notification_name: 'Jane Payee' }),
  )
  assert.equal(sent.status, 'Successful')
  assert.deepEqual(await adviceJobs(sent.tx_id), [{ state: 'queued' }],
    'queued with the settle step')
  assert.equal((await messagesTo(to)).length, 0, 'nothing is sent before the job runs')
  await runJobs()
  const messages = await messagesTo(to)
  assert.equal(messages.length, 1)
  const [message] = messages
  assert.equal(message!.key, `payment_advice:${sent.tx_id}`)
  assert.equal(message!.subject, `Payment advice: R123,456.78 from ${payer_name}`)
  for (const line of [
    'Dear Jane Payee,',
    `${payer_name} has paid you R123,456.78.`,
    'Reference:   INV-2026-0042',
    `Paid by:     ${payer_name}`,
    'Date:        2026-11-23 10:15 SAST',
    'Method:      real-time clearing (RTC)',
    `Payment id:  ${sent.tx_id}`,
  ]) {
    assert.ok(message!.text.split('\n').includes(line),
      `the advice lacks "${line}":\n${message!.text}`)
  }
  const row = await adviceRow(sent.tx_id)
  assert.ok(row?.sent_at, 'the advice is marked sent')
  assert.deepEqual(await adviceJobs(sent.tx_id), [{ state: 'done' }])
  // Running jobs again sends nothing more.
  assert.equal(await runJobs(), 0)
  assert.equal((await messagesTo(to)).length, 1)
})

test('transfers - an EFT with notification_email is advised when clearing settles it, and only then, once', async () => {
  tb.clock.set(sast('2026-11-23', '11:00'))
  const to = newAddress()
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: 5_000, notification_email: to }))
  assert.equal(sent.status, 'Pending')
  assert.ok(await adviceRow(sent.tx_id), 'recorded with the payment')
  assert.deepEqual(await adviceJobs(sent.tx_id), [], 'a Pending payment has no advice job')
  await runJobs()
  assert.equal((await messagesTo(to)).length, 0)
  await tb.operator.clearing.run()
  assert.deepEqual(await adviceJobs(sent.tx_id), [{ state: 'queued' }])
  await runJobs()
  const messages = await messagesTo(to)
  assert.equal(messages.length, 1)
  assert.ok(messages[0]!.text.startsWith('Hello,'), 'no notification_name: a plain greeting')
  assert.ok(messages[0]!.text.includes('Method:      EFT'))
  assert.ok(messages[0]!.subject.includes('R50.00'))
  // Another clearing run finds nothing to settle and advises nothing again.
  await tb.operator.clearing.run()
  await runJobs()
  assert.equal((await messagesTo(to)).length, 1)
  assert.equal((await adviceJobs(sent.tx_id)).length, 1)
})

test('transfers - an internal payment with notification_email is advised at once', async () => {
  const to = newAddress()
  const sent = await p.client.accounts.transferInternal(internalBody(account, payeeNumber,
    { amount: 100_00, notification_email: to, notification_name: 'Landlord' }))
  assert.deepEqual(await adviceJobs(sent.tx_id), [{ state: 'queued' }],
    'committed with the payment')
  await runJobs()
  const messages = await messagesTo(to)
  assert.equal(messages.length, 1)
  assert.equal(messages[0]!.subject, `Payment advice: R100.00 from ${payer_name}`)
  assert.ok(messages[0]!.text.includes('Method:      transfer between accounts of this bank'))
  assert.ok(messages[0]!.text.startsWith('Dear Landlord,'))
})

test('transfers - failed and invalid payments send no advice, by RTC or after clearing', async () => {
  const to = newAddress()
  const failed = await p.client.accounts.transfer(transferBody(account,
    { pay_and_clear: true, account_number: magic.failed, notification_email: to }))
  const invalid = await p.client.accounts.transfer(transferBody(account,
    { pay_and_clear: true, account_number: magic.invalid, notification_email: to }))
  assert.equal(failed.status, 'Failed')
  assert.equal(invalid.status, 'Invalid')
  const eftFailed = await p.client.accounts.transfer(
    transferBody(account, { account_number: magic.failed, notification_email: to }))
  const eftInvalid = await p.client.accounts.transfer(
    transferBody(account, { branch_code: magic.invalidBranch, notification_email: to }))
  await tb.operator.clearing.run()
  await runJobs()
  for (const payment of [failed, invalid, eftFailed, eftInvalid]) {
    assert.deepEqual(await adviceJobs(payment.tx_id), [], `${payment.tx_id} has no advice job`)
    assert.equal((await adviceRow(payment.tx_id))?.sent_at, null, 'recorded, never sent')
  }
  assert.equal((await messagesTo(to)).length, 0)
})

test('transfers - a payment without notification_email records no advice', async () => {
  const rtc = await p.client.accounts.transfer(transferBody(account, { pay_and_clear: true }))
  const internal = await p.client.accounts.transferInternal(internalBody(account, payeeNumber,
    { notification_name: 'Name only' }))
  for (const payment of [rtc, internal]) {
    assert.equal(await adviceRow(payment.tx_id), undefined)
    assert.deepEqual(await adviceJobs(payment.tx_id), [])
  }
})

test('transfers - a payment refused for funds records no advice; a duplicate adds no second one', async () => {
  const poor = await newAccount(p)
  const to = newAddress()
  await expectRefusal(p.client.accounts.transferInternal(internalBody(poor, payeeNumber,
    { notification_email: to })), 'insufficient_funds', 'amount')
  const none = await tb.bank.database.db.selectFrom('payment_advices').select('tx_id').where(
    'email', '=', to).execute()
  assert.deepEqual(none, [])
  const body = transferBody(account, { pay_and_clear: true, notification_email: to })
  const first = await p.client.accounts.transfer(body)
  await expectRefusal(p.client.accounts.transfer(body), 'duplicate')
  await runJobs()
  assert.equal((await messagesTo(to)).length, 1)
  assert.equal((await messagesTo(to))[0]!.key, `payment_advice:${first.tx_id}`)
})

test('transfers - an advice sent before a crash (not yet marked sent) is not sent twice when its job runs again', async () => {
  const to = newAddress()
  const sent = await p.client.accounts.transferInternal(internalBody(account, payeeNumber,
    { notification_email: to }))
  // As if a run had sent the message and died before marking the advice sent.
  await notifier.send({ key: `payment_advice:${sent.tx_id}`, to, subject: 'first attempt',
    text: 'sent before the crash' })
  await runJobs()
  const messages = await messagesTo(to)
  assert.deepEqual(messages.map((m) => m.subject), ['first attempt'])
  assert.ok((await adviceRow(sent.tx_id))?.sent_at, 'the rerun marks it sent')
})

test('transfers - concurrent payments with advices each get exactly one', async () => {
  const addresses = Array.from({ length: 12 }, () => newAddress())
  const payments = await Promise.all(
    addresses.map((to, i) =>
      i % 2 === 0
        ? p.client.accounts.transfer(transferBody(account, { amount: 1_000 + i, pay_and_clear: true,
          notification_email: to }))
        : p.client.accounts.transferInternal(internalBody(account, payeeNumber,
          { amount: 1_000 + i, notification_email: to })),
    ),
  )
  assert.ok(payments.every((payment) => payment.status === 'Successful'))
  await runJobs()
  for (const [i, to] of addresses.entries()) {
    const messages = await messagesTo(to)
    assert.equal(messages.length, 1, to)
    assert.equal(messages[0]!.key, `payment_advice:${payments[i]!.tx_id}`)
  }
})

test('transfers - an RTC settled by the clearing recovery is advised once, though its own late settle step follows', async () => {
  // The rail call is held until a clearing run has recovered the payment (its settle step
  // looked lost); the late settle step then finds it settled. Either step may enqueue the
  // advice; it is one job and one message.
  const rail = tb.bank.services.isoRail
  const original = rail.payRealTime
  let entered!: () => void
  let release!: () => void
  const called = new Promise<void>((resolve) => (entered = resolve))
  const gate = new Promise<void>((resolve) => (release = resolve))
  let held = false
  rail.payRealTime = async (payment) => {
    if (payment.amount === 4_321n && !held) {
      held = true
      entered()
      await gate
    }
    return original.call(rail, payment)
  }
  try {
    const to = newAddress()
    const pending = p.client.accounts.transfer(
      transferBody(account, { amount: 4_321, pay_and_clear: true, notification_email: to }))
    await called
    tb.clock.advance(120_000)
    assert.equal((await tb.operator.clearing.run()).rtc_recovered, 1)
    release()
    const sent = await pending
    assert.equal(sent.status, 'Successful')
    assert.deepEqual(await adviceJobs(sent.tx_id), [{ state: 'queued' }])
    await runJobs()
    assert.equal((await messagesTo(to)).length, 1)
  } finally {
    rail.payRealTime = original
  }
})

test('transfers - the ledger verifies clean after advised payments', async () => {
  await assertLedgerClean(tb)
})
