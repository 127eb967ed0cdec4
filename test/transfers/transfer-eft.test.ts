import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { assertLedgerClean, iso, uuidPattern } from '../support/assertions.ts'
import {
  balances,
  feeOf,
  fund,
  newAccount,
  poolAccount,
  shaPattern,
  transactionsOf,
  transferBody,
  txById,
  utcPattern,
  type TransactionView,
} from './helpers.ts'

// EFT (docs/guides/payments.md): held at once, so available drops by amount plus
// fee; posted when the clearing cycle settles it; the fee is its own `fee` transaction
// linked by parent_tx_id, written when the EFT settles and the fee is posted. Money is
// integer cents in, integer-cent strings out.

const eft_fee = 250

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const viewKeys = [
  'added_by', 'amount', 'credit', 'date', 'debit', 'fee', 'parent_tx_id', 'recipient_name', 'ref',
  'running_balance', 'status', 'tx_id', 'tx_payment_type', 'tx_sha', 'tx_type', 'user_id',
    'verified',
].sort()

function assertViewShape(row: TransactionView): void {
  assert.deepEqual(Object.keys(row).sort(), viewKeys)
  for (const key of viewKeys) {
    if (key === 'verified') assert.equal(typeof row.verified, 'boolean')
    else assert.equal(typeof row[key as keyof TransactionView], 'string', `${key} is a string`)
  }
  for (const money of ['amount', 'fee', 'credit', 'debit', 'running_balance'] as const) {
    assert.match(row[money], /^-?\d+$/, `${money} is integer cents`)
  }
  assert.match(row.tx_id, uuidPattern)
  assert.match(row.date, utcPattern)
  assert.match(row.tx_sha, shaPattern)
}

test('transfers - the pool account of an approved root entity can be funded and pays an EFT', async () => {
  const pool = await poolAccount(p)
  await fund(tb, pool, 50_000)
  const sent = await p.client.accounts.transfer(transferBody(pool, { amount: 20_000 }))
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(await balances(p, pool),
    { balance: '50000', available: String(50_000 - 20_000 - eft_fee) })
})

test('transfers - an EFT answers {tx_id, amount as a string, status Pending} and holds amount plus fee', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 12_345 }))
  assert.deepEqual(Object.keys(sent).sort(), ['amount', 'status', 'tx_id'])
  assert.match(sent.tx_id, uuidPattern)
  assert.equal(sent.amount, '12345')
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 12_345 - eft_fee) })
})

/** A pending EFT's row: 30000 to Landlord Ltd, taken at `taken`; its own hash as given. */
function pendingEftRow(transfer: TransactionView, txId: string, taken: string) {
  return {
    tx_id: txId,
    parent_tx_id: '',
    date: taken,
    amount: '30000',
    ref: 'Rent Nov',
    status: 'Pending',
    tx_sha: transfer.tx_sha,
    user_id: '',
    added_by: p.credentialId,
    tx_type: 'transfer',
    tx_payment_type: 'EFT',
    // The transfer's own row carries its fee, and the hold covers amount and fee.
    fee: String(eft_fee),
    recipient_name: 'Landlord Ltd',
    credit: '0',
    debit: '30000',
    // Not posted yet: the running balance is still the posted balance.
    running_balance: '100000',
    verified: true,
  }
}

/** The opening deposit's row. */
function depositRowOf(deposit: TransactionView, depositId: string, taken: string,
  operatorId: string) {
  return {
    tx_id: depositId,
    parent_tx_id: '',
    date: taken,
    amount: '100000',
    ref: 'opening',
    status: 'Successful',
    tx_sha: deposit.tx_sha,
    user_id: '',
    added_by: operatorId,
    tx_type: 'deposit',
    tx_payment_type: deposit.tx_payment_type,
    fee: '0',
    recipient_name: '',
    credit: '100000',
    debit: '0',
    running_balance: '100000',
    verified: true,
  }
}

/** The fee row an EFT's settlement appends, at `settledAt`. */
function eftFeeRow(fee: TransactionView, parentTxId: string, settledAt: string) {
  return {
    tx_id: fee.tx_id,
    parent_tx_id: parentTxId,
    date: settledAt,
    amount: String(eft_fee),
    ref: 'EFT fee',
    status: 'Successful',
    tx_sha: fee.tx_sha,
    user_id: '',
    added_by: p.credentialId,
    tx_type: 'fee',
    tx_payment_type: 'EFT',
    fee: '0',
    recipient_name: '',
    credit: '0',
    debit: String(eft_fee),
    running_balance: String(70_000 - eft_fee),
    verified: true,
  }
}

test('transfers - a pending EFT is a Pending row with every field as docs/guides/payments.md describes; its fee row is written, Successful, when it settles', async () => {
  const account = await newAccount(p)
  const depositId = await fund(tb, account, 100_000, 'opening')
  const body = transferBody(account, { amount: 30_000, ref: 'Rent Nov', own_ref: 'RENT-11',
    name: 'Landlord Ltd' })
  const sent = await p.client.accounts.transfer(body)
  const taken = iso(tb.clock.now())
  const rows = await transactionsOf(p, account)
  for (const row of rows) assertViewShape(row)
  // Newest first: the transfer after the deposit, and no fee row until the fee is posted.
  assert.deepEqual(rows.map((r) => r.tx_type), ['transfer', 'deposit'])
  assert.equal(feeOf(rows, sent.tx_id), undefined, 'the fee has no row while the EFT is pending')
  const [transfer, deposit] = rows as [TransactionView, TransactionView]

  const pendingTransfer = pendingEftRow(transfer, sent.tx_id, taken)
  assert.deepEqual(transfer, pendingTransfer)
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 30_000 - eft_fee) })
  const depositRow = depositRowOf(deposit, depositId, taken, await operatorCredentialId(tb))
  assert.deepEqual(deposit, depositRow)
  assert.ok(['EFT', 'INTERNAL'].includes(deposit.tx_payment_type))
  assert.equal(new Set(rows.map((r) => r.tx_sha)).size, 2,
    'every link of the chain has its own hash')

  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  const settledAt = iso(tb.clock.now())
  assert.notEqual(settledAt, taken)
  const settled = await transactionsOf(p, account)
  for (const row of settled) assertViewShape(row)
  // The fee row is appended when the EFT settles, after it and newer than it.
  assert.deepEqual(settled.map((r) => r.tx_type), ['fee', 'transfer', 'deposit'])
  const [fee, settledTransfer, settledDeposit] = settled as [TransactionView, TransactionView,
    TransactionView]
  assert.equal(feeOf(settled, sent.tx_id), fee)
  // Settling changes the transfer's status and running balance only; its hash stays.
  assert.deepEqual(settledTransfer, { ...pendingTransfer, status: 'Successful',
    running_balance: '70000' })
  assert.deepEqual(settledDeposit, depositRow)
  assert.deepEqual(fee, eftFeeRow(fee, sent.tx_id, settledAt))
  assert.notEqual(fee.tx_id, sent.tx_id)
  assert.deepEqual(await txById(p, fee.tx_id), fee)
  assert.deepEqual(await balances(p, account), { balance: String(70_000 - eft_fee),
    available: String(70_000 - eft_fee) })
  assert.equal(new Set(settled.map((r) => r.tx_sha)).size, 3,
    'every link of the chain has its own hash')
})

test('transfers - get_transaction returns the same view as the list', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account))
  for (const row of await transactionsOf(p, account)) {
    assert.deepEqual(await txById(p, row.tx_id), row)
  }
  assert.equal((await txById(p, sent.tx_id)).status, 'Pending')
})

test('transfers - the clearing run settles an EFT: Successful, balance drops, fee posted as its own transaction', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 40_000 }))
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(60_000 - eft_fee) })
  assert.equal(feeOf(await transactionsOf(p, account), sent.tx_id), undefined,
    'no fee row before the EFT settles')

  tb.clock.advance(60_000)
  const report = await tb.operator.clearing.run()
  assert.ok(report.settled >= 1)

  assert.deepEqual(await balances(p, account), { balance: String(60_000 - eft_fee),
    available: String(60_000 - eft_fee) })
  const rows = await transactionsOf(p, account)
  const transfer = rows.find((r) => r.tx_id === sent.tx_id)!
  const fee = feeOf(rows, sent.tx_id)
  assert.ok(fee, 'the fee is a separate transaction')
  assert.equal(transfer.status, 'Successful')
  assert.equal(transfer.amount, '40000')
  assert.equal(transfer.debit, '40000')
  assert.equal(transfer.running_balance, '60000')
  assert.equal(transfer.verified, true)
  assert.equal(fee.status, 'Successful')
  assert.equal(fee.tx_type, 'fee')
  assert.equal(fee.amount, String(eft_fee))
  assert.equal(fee.debit, String(eft_fee))
  assert.equal(fee.credit, '0')
  assert.equal(fee.running_balance, String(60_000 - eft_fee))
  assert.equal(fee.verified, true)
  // The view is the one the transfer was taken with: settling changes status and running balance
  // only.
  assert.equal(transfer.date, rows.find((r) => r.tx_type === 'deposit')!.date)
  // Settling appends the fee's row only, newest, dated when the EFT settled.
  assert.deepEqual(rows.map((r) => r.tx_type), ['fee', 'transfer', 'deposit'],
    'settling appends the fee row only')
  assert.equal(fee.date, iso(tb.clock.now()))
  assert.notEqual(fee.date, transfer.date)
})

test('transfers - a second EFT is held against the available balance, not the posted one', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 5_000 }))
  assert.deepEqual(await balances(p, account),
    { balance: '10000', available: String(5_000 - eft_fee) })
  // 4,750 is left: a 4,500 transfer and its 250 fee take all of it.
  const second = await p.client.accounts.transfer(
    transferBody(account, { amount: 5_000 - 2 * eft_fee }))
  assert.equal(second.status, 'Pending')
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '0' })
  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('transfers - the minimum amount of 100 cents is accepted', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100 + eft_fee)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 100 }))
  assert.equal(sent.amount, '100')
  assert.deepEqual(await balances(p, account), { balance: String(100 + eft_fee), available: '0' })
})

test('transfers - an EFT at the R5,000,000 limit is accepted and settles', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 500_000_000 + eft_fee)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 500_000_000 }))
  assert.equal(sent.amount, '500000000')
  assert.equal(sent.status, 'Pending')
  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('transfers - amount plus fee exactly equal to available is accepted', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 7_777 + eft_fee)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 7_777 }))
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(await balances(p, account), { balance: String(7_777 + eft_fee), available: '0' })
})

test('transfers - pay_and_clear false is an EFT like an omitted one', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { pay_and_clear: false }))
  assert.equal(sent.status, 'Pending')
  const row = await txById(p, sent.tx_id)
  assert.equal(row.tx_payment_type, 'EFT')
  assert.equal(row.fee, String(eft_fee))
})

test('transfers - a unicode ref and recipient name are read back exactly as sent', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const sent = await p.client.accounts.transfer(
    transferBody(account, { ref: 'Ünïcödé ref — 42', name: "O'Brien & Sons (Pty) Ltd" }))
  const row = await txById(p, sent.tx_id)
  assert.equal(row.ref, 'Ünïcödé ref — 42')
  assert.equal(row.recipient_name, "O'Brien & Sons (Pty) Ltd")
  assert.equal(row.verified, true)
})

test('transfers - the ledger verifies clean after EFTs, holds and settlement', async () => {
  await assertLedgerClean(tb)
})
