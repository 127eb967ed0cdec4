import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { accountNumberOf, balances, feeOf, fund, internalBody, newAccount, sast, snapshot, transactionsOf, transferBody, txById } from './helpers.ts'

// A bank configured away from the defaults: fees per payment type (internal payments too),
// a zero fee meaning no fee transaction, and a declared one-off holiday added to the
// shipped list (docs/operators/configuration.md).

const rtc_fee = 1234
const internal_fee = 150
const low_max = 25_000_000

const tb = useTestBank({
  env: {
    BANK_FEE_EFT_CENTS: '0',
    BANK_FEE_RTC_CENTS: String(rtc_fee),
    BANK_FEE_INTERNAL_CENTS: String(internal_fee),
    BANK_DECLARED_HOLIDAYS: '2026-11-24',
  },
})
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('transfers - with a zero EFT fee an EFT holds only its amount and writes no fee transaction', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '0' })
  await tb.operator.clearing.run()
  const rows = await transactionsOf(p, account)
  assert.equal(feeOf(rows, sent.tx_id), undefined)
  assert.deepEqual(rows.map((r) => r.tx_type), ['transfer', 'deposit'])
  const transfer = await txById(p, sent.tx_id)
  assert.equal(transfer.status, 'Successful')
  assert.equal(transfer.fee, '0')
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('transfers - a configured RTC fee is charged and covered by the funds check', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000 + rtc_fee - 1)
  const before = await snapshot(p, account)
  await expectApiError(p.client.accounts.transfer(
    transferBody(account, { amount: 10_000, pay_and_clear: true })), 400, 'amount')
  assert.deepEqual(await snapshot(p, account), before)
  await fund(tb, account, 1)
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: 10_000, pay_and_clear: true }))
  assert.equal(sent.status, 'Successful')
  const rows = await transactionsOf(p, account)
  const fee = feeOf(rows, sent.tx_id)
  assert.ok(fee)
  assert.equal(fee.amount, String(rtc_fee))
  assert.equal(fee.debit, String(rtc_fee))
  assert.equal(rows.find((r) => r.tx_id === sent.tx_id)!.fee, String(rtc_fee))
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('transfers - a configured internal fee is its own posted fee row, and the funds check covers it', async () => {
  const payer = await newAccount(p)
  const payee = await newAccount(p)
  const payeeNumber = await accountNumberOf(p, payee)
  await fund(tb, payer, 10_000 + internal_fee - 1)
  const before = await snapshot(p, payer)
  await expectApiError(p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: 10_000 })), 400, 'amount')
  assert.deepEqual(await snapshot(p, payer), before)
  await fund(tb, payer, 1)
  const sent = await p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: 10_000 }))
  assert.equal(sent.status, 'Successful')
  const rows = await transactionsOf(p, payer)
  const transfer = rows.find((r) => r.tx_id === sent.tx_id)
  const fee = feeOf(rows, sent.tx_id)
  assert.ok(transfer && fee)
  assert.equal(transfer.fee, String(internal_fee))
  assert.deepEqual(rows[0], fee, 'newest first: the fee follows its payment')
  assert.equal(fee.tx_type, 'fee')
  assert.equal(fee.tx_payment_type, 'INTERNAL')
  assert.equal(fee.status, 'Successful')
  assert.equal(fee.amount, String(internal_fee))
  assert.equal(fee.debit, String(internal_fee))
  assert.equal(fee.added_by, p.credentialId)
  assert.equal(transfer.running_balance, String(internal_fee))
  assert.equal(fee.running_balance, '0')
  assert.deepEqual(await balances(p, payer), { balance: '0', available: '0' })
  // The payee gets the amount; the fee is the payer's alone.
  assert.deepEqual(await balances(p, payee), { balance: '10000', available: '10000' })
  assert.deepEqual((await transactionsOf(p, payee)).map((r) => r.tx_type), ['transfer'])
})

test('transfers - a declared one-off holiday lowers the RTC limit like a public holiday', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000_000)
  const send = (amount: number) => p.client.accounts.transfer(
    transferBody(account, { amount, pay_and_clear: true }))
  tb.clock.set(sast('2026-11-24', '10:00'))
  const before = await snapshot(p, account)
  await expectApiError(send(low_max + 1), 400, 'amount')
  assert.deepEqual(await snapshot(p, account), before)
  assert.equal((await send(low_max)).status, 'Successful')
  tb.clock.set(sast('2026-11-25', '10:00'))
  assert.equal((await send(low_max + 1)).status, 'Successful')
})

test('transfers - the ledger verifies clean with configured fees', async () => {
  await assertLedgerClean(tb)
})
