import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, iso, uuidPattern } from '../support/assertions.ts'
import {
  balances,
  feeOf,
  fund,
  magic,
  newAccount,
  shaPattern,
  snapshot,
  transactionsOf,
  transferBody,
  type TransactionView,
  txById,
  utcPattern,
} from './helpers.ts'

// The simulated rail's magic recipients (src/rails/simulated-rail.ts) and the status
// transitions of a transaction: Pending → Successful | Failed; Successful → Reversed (a
// reversal credits the money back); Invalid when the rail rejects the recipient (no money
// moves). A payment that is not made is charged no fee and gets no fee row: a payout's fee
// row is written only when it settles Successful. Every test here runs the clearing cycles
// it needs, so each run's report counts only this test's payments.

const fees = { EFT: 250, RTC: 700 }
const start = 100_000
const amount = 10_000

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

async function funded(): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, start)
  return account
}

async function clearing() {
  tb.clock.advance(60_000)
  return tb.operator.clearing.run()
}

/** What the bank has earned in fees so far (the tests of a file run one after another). */
async function feeIncome(): Promise<bigint> {
  return BigInt((await tb.operator.ledger.verify()).internal_balances.fee_income ?? '0')
}

const unpaid: Array<[string, Record<string, string>, 'Failed' | 'Invalid']> = [
  ['a declined account (4000000002)', { account_number: magic.failed }, 'Failed'],
  ['a missing account (4000000010)', { account_number: magic.invalid }, 'Invalid'],
  ['an unknown branch (000000)', { branch_code: magic.invalidBranch }, 'Invalid'],
]

for (const [label, recipient, status] of unpaid) {
  test(`transfers - an EFT to ${label} is held, then ${status} at clearing: hold released, no fee charged`, async () => {
    const account = await funded()
    const earned = await feeIncome()
    const sent = await p.client.accounts.transfer(transferBody(account, { amount, ...recipient }))
    assert.equal(sent.status, 'Pending')
    // The hold covers amount and fee; the fee is on the transfer's row, with no row of its own yet.
    assert.deepEqual(await balances(p, account),
      { balance: String(start), available: String(start - amount - fees.EFT) })
    const taken = await transactionsOf(p, account)
    assert.deepEqual(taken.map((r) => [r.tx_type, r.status]),
      [['transfer', 'Pending'], ['deposit', 'Successful']])
    assert.equal(taken[0]!.fee, String(fees.EFT))

    const report = await clearing()
    assert.equal(report.settled, 0)
    assert.equal(report.failed, status === 'Failed' ? 1 : 0)
    assert.equal(report.invalid, status === 'Invalid' ? 1 : 0)
    assert.equal(report.returned, 0)

    assert.deepEqual(await balances(p, account),
      { balance: String(start), available: String(start) })
    const rows = await transactionsOf(p, account)
    assert.deepEqual(rows.map((r) => r.tx_type), ['transfer', 'deposit'], 'no row was added')
    const transfer = rows[0]!
    assert.equal(transfer.tx_id, sent.tx_id)
    assert.equal(transfer.status, status)
    assert.equal(transfer.verified, true)
    assert.equal(feeOf(rows, sent.tx_id), undefined, 'a payment not made gets no fee row')
    assert.equal(await feeIncome(), earned, 'the fee is not charged either')

    const again = await clearing()
    assert.deepEqual([again.settled, again.failed, again.invalid, again.returned], [0, 0, 0, 0])
    assert.deepEqual(await balances(p, account),
      { balance: String(start), available: String(start) })
    assert.deepEqual(await transactionsOf(p, account), rows, 'nor does a later run write one')
  })

  test(`transfers - an RTC to ${label} is ${status} at once: no money moves, no fee charged`, async () => {
    const account = await funded()
    const earned = await feeIncome()
    const sent = await p.client.accounts.transfer(
      transferBody(account, { amount, pay_and_clear: true, ...recipient }))
    assert.equal(sent.status, status)
    assert.equal(sent.amount, String(amount))
    assert.deepEqual(await balances(p, account),
      { balance: String(start), available: String(start) })
    const rows = await transactionsOf(p, account)
    assert.deepEqual(rows.map((r) => [r.tx_type, r.status]),
      [['transfer', status], ['deposit', 'Successful']])
    assert.equal(feeOf(rows, sent.tx_id), undefined, 'a payment not made gets no fee row')
    assert.equal(await feeIncome(), earned, 'no fee was charged')
    assert.equal((await txById(p, sent.tx_id)).status, status)

    const before = await snapshot(p, account)
    const report = await clearing()
    assert.deepEqual([report.settled, report.failed, report.invalid, report.returned,
      report.rtc_recovered], [0, 0, 0, 0, 0])
    assert.deepEqual(await snapshot(p, account), before)
  })
}

/** The row an RTC's reversal should be: its own id, date and hash as given. */
function rtcReversalRow(reversal: TransactionView, transfer: TransactionView, parentTxId: string,
  balance: number) {
  return {
    tx_id: reversal.tx_id,
    parent_tx_id: parentTxId,
    date: reversal.date,
    amount: String(amount),
    ref: transfer.ref,
    status: 'Successful',
    tx_sha: reversal.tx_sha,
    user_id: '',
    added_by: 'system',
    tx_type: 'reversal',
    tx_payment_type: 'RTC',
    fee: '0',
    recipient_name: transfer.recipient_name,
    credit: String(amount),
    debit: '0',
    running_balance: String(balance),
    verified: true,
  }
}

test('transfers - an RTC to the returning account (4000000028) is Successful, then Reversed at the next clearing run', async () => {
  const account = await funded()
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount, pay_and_clear: true, account_number: magic.returned }))
  assert.equal(sent.status, 'Successful')
  const paid = start - amount - fees.RTC
  assert.deepEqual(await balances(p, account), { balance: String(paid), available: String(paid) })

  const report = await clearing()
  assert.equal(report.returned, 1)
  assert.equal(report.settled, 0)

  // The amount comes back; the fee for a payment that was made is kept.
  assert.deepEqual(await balances(p, account), { balance: String(paid + amount),
    available: String(paid + amount) })
  const rows = await transactionsOf(p, account)
  assert.deepEqual(rows.map((r) => r.tx_type), ['reversal', 'fee', 'transfer', 'deposit'])
  const [reversal, fee, transfer] = rows
  assert.ok(reversal && fee && transfer)
  assert.equal(transfer.status, 'Reversed')
  assert.equal(transfer.running_balance, String(start - amount),
    'the original row keeps its posted running balance')
  assert.equal(fee.status, 'Successful')
  assert.equal(fee.parent_tx_id, sent.tx_id)
  assert.match(reversal.tx_id, uuidPattern)
  assert.notEqual(reversal.tx_id, sent.tx_id)
  assert.deepEqual(reversal, rtcReversalRow(reversal, transfer, sent.tx_id, paid + amount))
  assert.match(reversal.date, utcPattern)
  assert.match(reversal.tx_sha, shaPattern)
  assert.equal(reversal.date, iso(tb.clock.now()))
  assert.deepEqual(await txById(p, reversal.tx_id), reversal)

  const again = await clearing()
  assert.equal(again.returned, 0, 'a payment is reversed once')
  assert.deepEqual(await balances(p, account), { balance: String(paid + amount),
    available: String(paid + amount) })
  assert.equal((await transactionsOf(p, account)).length, 4)
})

test('transfers - an EFT to the returning account settles at the first clearing run and is Reversed at the next', async () => {
  const account = await funded()
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount, account_number: magic.returned }))
  assert.equal(sent.status, 'Pending')

  const first = await clearing()
  assert.deepEqual([first.settled, first.returned], [1, 0])
  const paid = start - amount - fees.EFT
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  assert.deepEqual(await balances(p, account), { balance: String(paid), available: String(paid) })

  const second = await clearing()
  assert.deepEqual([second.settled, second.returned], [0, 1])
  assert.equal((await txById(p, sent.tx_id)).status, 'Reversed')
  const rows = await transactionsOf(p, account)
  const reversal = rows[0]!
  assert.equal(reversal.tx_type, 'reversal')
  assert.equal(reversal.parent_tx_id, sent.tx_id)
  assert.equal(reversal.tx_payment_type, 'EFT')
  assert.equal(reversal.credit, String(amount))
  assert.equal(reversal.debit, '0')
  assert.equal(reversal.added_by, 'system')
  assert.equal(reversal.running_balance, String(paid + amount))
  assert.equal(feeOf(rows, sent.tx_id)?.status, 'Successful', 'the fee is kept')
  assert.deepEqual(await balances(p, account), { balance: String(paid + amount),
    available: String(paid + amount) })

  const third = await clearing()
  assert.equal(third.returned, 0)
  assert.deepEqual(await balances(p, account), { balance: String(paid + amount),
    available: String(paid + amount) })
})

test('transfers - a reversed amount can be spent again', async () => {
  const account = await newAccount(p)
  await fund(tb, account, amount + fees.RTC)
  await p.client.accounts.transfer(
    transferBody(account, { amount, pay_and_clear: true, account_number: magic.returned }))
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  await clearing()
  assert.deepEqual(await balances(p, account),
    { balance: String(amount), available: String(amount) })
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: amount - fees.EFT }))
  assert.equal(sent.status, 'Pending')
  await clearing()
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('transfers - only the magic recipients fail: neighbouring numbers are paid', async () => {
  const account = await funded()
  for (const account_number of ['4000000001', '4000000003', '40000000020', '4000000029']) {
    const sent = await p.client.accounts.transfer(
      transferBody(account, { amount: 100, pay_and_clear: true, account_number }))
    assert.equal(sent.status, 'Successful', account_number)
  }
  const sent = await p.client.accounts.transfer(
    transferBody(account, { amount: 100, pay_and_clear: true, branch_code: '000001' }))
  assert.equal(sent.status, 'Successful')
  assert.equal((await clearing()).returned, 0)
})

test('transfers - the ledger verifies clean after failures, rejections and reversals', async () => {
  await assertLedgerClean(tb)
})
