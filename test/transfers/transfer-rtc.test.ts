import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, iso, uuidPattern } from '../support/assertions.ts'
import { balances, feeOf, fund, newAccount, sast, snapshot, transactionsOf, transferBody } from './helpers.ts'

// RTC (pay_and_clear: true) is settled at once. Limits (docs/guides/payments.md):
// RTC ≤ R5,000,000 on South African business days 00:00–16:00 SAST, else ≤ R250,000.
// The harness clock starts on Monday 2026-11-23 at 10:00 SAST (08:00Z).

const rtc_fee = 700
const high_max = 500_000_000
const low_max = 25_000_000
const start = '2026-11-23T08:00:00Z'

const tb = useTestBank()
let p: TestPartner
/** One well-funded account for the limit tests; RTCs settle at once so its balance only falls. */
let rich: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  rich = await newAccount(p)
  await fund(tb, rich, 4_000_000_000)
})

async function rtc(amount: number) {
  return p.client.accounts.transfer(transferBody(rich, { amount, pay_and_clear: true }))
}

async function assertRtcRefused(amount: number, message: string): Promise<void> {
  const before = await snapshot(p, rich)
  const error = await expectApiError(rtc(amount), 400, 'amount')
  assert.equal(error.type, 'limit_exceeded', message)
  assert.deepEqual(await snapshot(p, rich), before, `${message}: nothing moved`)
}

async function assertRtcAccepted(amount: number, message: string): Promise<void> {
  const sent = await rtc(amount)
  assert.equal(sent.status, 'Successful', message)
  assert.equal(sent.amount, String(amount), message)
}

test('transfers - an RTC is Successful at once: balance and available drop by amount plus fee', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: 25_000, pay_and_clear: true }))
  assert.deepEqual(Object.keys(sent).sort(), ['amount', 'status', 'tx_id'])
  assert.match(sent.tx_id, uuidPattern)
  assert.equal(sent.amount, '25000')
  assert.equal(sent.status, 'Successful')
  const left = String(100_000 - 25_000 - rtc_fee)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
})

test('transfers - an RTC and its fee are posted rows: Successful, RTC, running balances after each', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 30_000, pay_and_clear: true, name: 'Instant Payee',
    ref: 'Now please' })
  const sent = await p.client.accounts.transfer(body)
  const rows = await transactionsOf(p, account)
  assert.equal(rows.length, 3)
  const transfer = rows.find((r) => r.tx_id === sent.tx_id)
  const fee = feeOf(rows, sent.tx_id)
  assert.ok(transfer && fee)
  const now = iso(tb.clock.now())
  assert.deepEqual(transfer, {
    tx_id: sent.tx_id,
    parent_tx_id: '',
    date: now,
    amount: '30000',
    ref: 'Now please',
    status: 'Successful',
    tx_sha: transfer.tx_sha,
    user_id: '',
    added_by: p.credentialId,
    tx_type: 'transfer',
    tx_payment_type: 'RTC',
    fee: String(rtc_fee),
    recipient_name: 'Instant Payee',
    credit: '0',
    debit: '30000',
    running_balance: '70000',
    verified: true,
  })
  assert.equal(fee.parent_tx_id, sent.tx_id)
  assert.equal(fee.tx_type, 'fee')
  assert.equal(fee.tx_payment_type, 'RTC')
  assert.equal(fee.status, 'Successful')
  assert.equal(fee.amount, String(rtc_fee))
  assert.equal(fee.debit, String(rtc_fee))
  assert.equal(fee.credit, '0')
  assert.equal(fee.fee, '0')
  assert.equal(fee.added_by, p.credentialId)
  assert.equal(fee.user_id, '')
  assert.equal(fee.running_balance, String(70_000 - rtc_fee))
  assert.equal(fee.verified, true)
  assert.deepEqual(rows[0], fee, 'newest first: the fee follows its transfer')
})

test('transfers - a clearing run leaves a settled RTC alone', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 10_000, pay_and_clear: true }))
  const before = await snapshot(p, account)
  const report = await tb.operator.clearing.run()
  assert.equal(report.rtc_recovered, 0)
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - RTC at R5,000,000 is accepted at 10:00 SAST on a business day and one cent more is 400', async () => {
  tb.clock.set(start)
  await assertRtcRefused(high_max + 1, 'one cent over R5,000,000')
  await assertRtcAccepted(high_max, 'exactly R5,000,000')
})

test('transfers - RTC above R250,000 is allowed at 15:59 SAST on a business day, to the last millisecond', async () => {
  tb.clock.set(sast('2026-11-23', '15:59'))
  await assertRtcAccepted(low_max + 1, '15:59 SAST Monday')
  tb.clock.set('2026-11-23T13:59:59.999Z')
  await assertRtcAccepted(low_max + 1, '15:59:59.999 SAST Monday')
})

test('transfers - RTC above R250,000 at 16:00 and 17:00 SAST on a business day is 400, R250,000 is allowed', async () => {
  for (const hhmm of ['16:00', '17:00', '23:59']) {
    tb.clock.set(sast('2026-11-23', hhmm))
    await assertRtcRefused(low_max + 1, `${hhmm} SAST Monday`)
    await assertRtcAccepted(low_max, `${hhmm} SAST Monday`)
  }
})

test('transfers - RTC high limit returns at 00:00 SAST on the next business day', async () => {
  tb.clock.set(sast('2026-11-24', '00:00'))
  await assertRtcAccepted(low_max + 1, '00:00 SAST Tuesday')
})

test('transfers - the RTC limit follows the SAST date, not the UTC date', async () => {
  // Friday 22:30 UTC is Saturday 00:30 SAST: a weekend.
  tb.clock.set('2026-11-27T22:30:00Z')
  await assertRtcRefused(low_max + 1, 'Saturday 00:30 SAST')
  // Sunday 22:30 UTC is Monday 00:30 SAST: a business day.
  tb.clock.set('2026-11-29T22:30:00Z')
  await assertRtcAccepted(low_max + 1, 'Monday 00:30 SAST')
})

test('transfers - RTC above R250,000 on a Saturday or Sunday is 400, R250,000 is allowed', async () => {
  for (const date of ['2026-11-28', '2026-11-29']) {
    tb.clock.set(sast(date, '10:00'))
    await assertRtcRefused(low_max + 1, `${date} 10:00 SAST`)
    await assertRtcAccepted(low_max, `${date} 10:00 SAST`)
  }
})

test('transfers - RTC above R250,000 on a public holiday (2026-12-16) is 400, R250,000 is allowed', async () => {
  tb.clock.set(sast('2026-12-16', '10:00'))
  await assertRtcRefused(low_max + 1, 'Day of Reconciliation')
  await assertRtcAccepted(low_max, 'Day of Reconciliation')
  tb.clock.set(sast('2026-12-17', '10:00'))
  await assertRtcAccepted(low_max + 1, 'the business day after')
})

test('transfers - a Sunday public holiday moves to Monday for the RTC limit (2027-03-22)', async () => {
  tb.clock.set(sast('2027-03-22', '10:00'))
  await assertRtcRefused(low_max + 1, 'Human Rights Day observed on Monday')
  tb.clock.set(sast('2027-03-23', '10:00'))
  await assertRtcAccepted(low_max + 1, 'the Tuesday after')
})

test('transfers - RTC limits never apply to EFT: R250,000.01 by EFT at 17:00 SAST on a Saturday is accepted', async () => {
  tb.clock.set(sast('2026-11-28', '17:00'))
  const sent = await p.client.accounts.transfer(transferBody(rich, { amount: low_max + 1 }))
  assert.equal(sent.status, 'Pending')
})

test('transfers - the ledger verifies clean after RTCs', async () => {
  tb.clock.set(sast('2027-03-23', '11:00'))
  await assertLedgerClean(tb)
})
