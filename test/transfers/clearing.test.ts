import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { balances, feeOf, fund, magic, newAccount, snapshot, transactionsOf, transferBody, txById } from './helpers.ts'

// The EFT clearing cycle behind `ops.clearing.run` (src/transfers/clearing-service.ts):
// it settles pending EFTs, collects returns and leaves RTCs alone; running it again
// settles nothing twice. Every test here leaves no EFT pending, so each report counts
// only its own test's payments.

const fees = { EFT: 250, RTC: 700 }

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

function counts(report: {
    settled: number; failed: number; invalid: number; returned: number; rtc_recovered: number }) {
  const { settled, failed, invalid, returned, rtc_recovered } = report
  return { settled, failed, invalid, returned, rtc_recovered }
}

const nothing = { settled: 0, failed: 0, invalid: 0, returned: 0, rtc_recovered: 0 }

test('clearing - a run with nothing pending reports zero and changes nothing', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const before = await snapshot(p, account)
  const report = await tb.operator.clearing.run()
  assert.deepEqual(Object.keys(report).sort(), ['cycle', 'failed', 'invalid', 'resumed', 'returned',
    'rtc_recovered', 'settled'])
  assert.deepEqual(counts(report), nothing)
  assert.equal(report.resumed, false)
  assert.match(report.cycle, /^manual:/)
  assert.deepEqual(await snapshot(p, account), before)
})

test('clearing - a run settles EFTs and leaves RTCs alone', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const eft = await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  const rtc = await p.client.accounts.transfer(
    transferBody(account, { amount: 20_000, pay_and_clear: true }))
  const rtcFailed = await p.client.accounts.transfer(
    transferBody(account, { amount: 5_000, pay_and_clear: true, account_number: magic.failed }))
  assert.deepEqual([eft.status, rtc.status, rtcFailed.status], ['Pending', 'Successful', 'Failed'])
  const taken = await transactionsOf(p, account)
  const rtcRows = taken.filter((r) => r.tx_payment_type === 'RTC')
  // The settled RTC has its fee row; the failed one has none; the pending EFT has none yet.
  assert.deepEqual(rtcRows.map((r) => [r.tx_type, r.status]),
    [['transfer', 'Failed'], ['fee', 'Successful'], ['transfer', 'Successful']])
  assert.equal(feeOf(rtcRows, rtc.tx_id)?.status, 'Successful')
  assert.equal(feeOf(rtcRows, rtcFailed.tx_id), undefined)
  assert.equal(feeOf(taken, eft.tx_id), undefined)

  const report = await tb.operator.clearing.run()
  assert.deepEqual(counts(report), { ...nothing, settled: 1 })

  const after = await transactionsOf(p, account)
  assert.deepEqual(after.filter((r) => r.tx_payment_type === 'RTC'), rtcRows,
    'RTC rows are untouched')
  assert.equal(after.find((r) => r.tx_id === eft.tx_id)!.status, 'Successful')
  // Settling the EFT appends its fee row, the newest row, and nothing else.
  assert.equal(after.length, taken.length + 1)
  assert.equal(after[0], feeOf(after, eft.tx_id))
  assert.deepEqual([after[0]!.tx_payment_type, after[0]!.status], ['EFT', 'Successful'])
  const left = String(100_000 - 10_000 - fees.EFT - 20_000 - fees.RTC)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
})

test('clearing - running twice settles nothing twice: the second run reports zero and balances stay', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  for (const amount of [1_000, 2_000, 3_000]) await p.client.accounts.transfer(
    transferBody(account, { amount }))
  const first = await tb.operator.clearing.run()
  assert.deepEqual(counts(first), { ...nothing, settled: 3 })
  const settled = await snapshot(p, account)
  const left = String(100_000 - 6_000 - 3 * fees.EFT)
  assert.equal(settled.details.balance, left)
  assert.equal(settled.details.available_balance, left)

  const second = await tb.operator.clearing.run()
  assert.notEqual(second.cycle, first.cycle, 'every manual run is its own cycle')
  assert.deepEqual(counts(second), nothing)
  assert.deepEqual(await snapshot(p, account), settled)
  tb.clock.advance(3_600_000)
  assert.deepEqual(counts(await tb.operator.clearing.run()), nothing)
  assert.deepEqual(await snapshot(p, account), settled)
})

test('clearing - the report counts settled, failed, invalid and (next run) returned payments', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const recipients = [
    {}, {}, {},
    { account_number: magic.failed }, { account_number: magic.failed },
    { account_number: magic.invalid },
    { branch_code: magic.invalidBranch },
    { account_number: magic.returned },
  ]
  const sent = []
  for (const recipient of recipients) sent.push(await p.client.accounts.transfer(
    transferBody(account, { amount: 10_000, ...recipient })))
  assert.ok(sent.every((s) => s.status === 'Pending'))
  assert.equal((await balances(p, account)).available, String(1_000_000 - 8 * (10_000 + fees.EFT)))

  const first = await tb.operator.clearing.run()
  assert.deepEqual(counts(first), { ...nothing, settled: 4, failed: 2, invalid: 2 })
  const statuses = await Promise.all(sent.map(async (s) => (await txById(p, s.tx_id)).status))
  assert.deepEqual(statuses, ['Successful', 'Successful', 'Successful', 'Failed', 'Failed',
    'Invalid', 'Invalid', 'Successful'])
  // Only a payment that was made has a fee row.
  const rows = await transactionsOf(p, account)
  const feeStatuses = sent.map((s) => feeOf(rows, s.tx_id)?.status)
  assert.deepEqual(feeStatuses, ['Successful', 'Successful', 'Successful', undefined, undefined,
    undefined, undefined, 'Successful'])
  const paid = 1_000_000 - 4 * (10_000 + fees.EFT)
  assert.deepEqual(await balances(p, account), { balance: String(paid), available: String(paid) })

  const second = await tb.operator.clearing.run()
  assert.deepEqual(counts(second), { ...nothing, returned: 1 })
  assert.equal((await txById(p, sent[7]!.tx_id)).status, 'Reversed')
  assert.deepEqual(await balances(p, account), { balance: String(paid + 10_000),
    available: String(paid + 10_000) })
})

test("clearing - one run settles every partner's EFTs, each on its own account", async () => {
  const mine = await newAccount(p)
  const theirs = await newAccount(other)
  await fund(tb, mine, 50_000)
  await fund(tb, theirs, 60_000)
  await p.client.accounts.transfer(transferBody(mine, { amount: 10_000 }))
  await other.client.accounts.transfer(transferBody(theirs, { amount: 20_000 }))
  await other.client.accounts.transfer(transferBody(theirs, { amount: 30_000 }))
  assert.deepEqual(counts(await tb.operator.clearing.run()), { ...nothing, settled: 3 })
  const mineLeft = String(50_000 - 10_000 - fees.EFT)
  const theirsLeft = String(60_000 - 50_000 - 2 * fees.EFT)
  assert.deepEqual(await balances(p, mine), { balance: mineLeft, available: mineLeft })
  assert.deepEqual(await balances(other, theirs), { balance: theirsLeft, available: theirsLeft })
})

test('clearing - settled amounts and fees land in the bank settlement and fee income accounts', async () => {
  const before = await tb.operator.ledger.verify()
  const internal = (report: typeof before, name: string) => BigInt(report.internal_balances[name]
    ?? '0')
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  await p.client.accounts.transfer(transferBody(account, { amount: 20_000, pay_and_clear: true }))
  const held = await tb.operator.ledger.verify()
  // A pending EFT is only held: nothing has gone to settlement or fees yet.
  assert.equal(internal(held, 'settlement:EFT') - internal(before, 'settlement:EFT'), -100_000n)
  assert.equal(internal(held, 'settlement:RTC') - internal(before, 'settlement:RTC'), 20_000n)
  assert.equal(internal(held, 'fee_income') - internal(before, 'fee_income'), BigInt(fees.RTC))
  await tb.operator.clearing.run()
  const settled = await tb.operator.ledger.verify()
  assert.equal(internal(settled, 'settlement:EFT') - internal(before, 'settlement:EFT'),
    -100_000n + 10_000n)
  assert.equal(internal(settled, 'fee_income') - internal(before, 'fee_income'),
    BigInt(fees.RTC + fees.EFT))
  assert.equal(settled.postings_total, '0')
  assert.equal(settled.ok, true)
})

test('clearing - ops.clearing.run needs an operator credential', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  const reply = await rawRequest(tb, 'ops.clearing.run', '{}', { token: p.token })
  assert.equal(reply.code, 403)
  assert.equal((await balances(p, account)).balance, '10000', 'a refused run settled nothing')
  const anonymous = await rawRequest(tb, 'ops.clearing.run', '{}')
  assert.equal(anonymous.code, 401)
  assert.deepEqual(counts(await tb.operator.clearing.run()), { ...nothing, settled: 1 })
})

test('clearing - the ledger verifies clean after the clearing tests', async () => {
  await assertLedgerClean(tb)
})
