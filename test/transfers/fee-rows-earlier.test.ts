import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { LedgerBatch } from '../../src/ledger/ledger-batch.ts'
import { newRowId } from '../../src/ledger/row-id.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { balances, feeOf, fund, magic, newAccount, transactionsOf, transferBody, txById } from './helpers.ts'

// A payout's fee row is written when the payout settles (ledger/payment-journals.ts, settlePayout).
// Earlier versions wrote it Pending beside the payment when the payment was taken; a bank upgraded
// with such payouts still pending must settle each with the fee row it has: posted with its
// payment when the payment succeeds, Failed with it when it fails, and no second fee row.

const eft_fee = 250n

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

/**
 * An EFT taken as earlier versions took it: the payment and its fee as Pending rows, amount + fee
 * held.
 */
async function takenTheEarlierWay(accountId: string, amount: bigint,
    accountNumber: string): Promise<{ txId: string; feeTxId: string }> {
  const body = transferBody(accountId, { account_number: accountNumber })
  const txId = newRowId()
  const feeTxId = newRowId()
  await tb.bank.database.db.transaction().execute(async (trx) => {
    const batch = await LedgerBatch.open(trx, tb.clock, [accountId])
    assert.ok(batch.tryHold(accountId, amount + eft_fee))
    const common = { account_id: accountId, tx_payment_type: 'EFT', status: 'Pending', credit: 0n,
      added_by: p.credentialId, posted: false } as const
    batch.append({
      ...common,
      id: txId,
      tx_type: 'transfer',
      amount,
      fee: eft_fee,
      debit: amount,
      hold_amount: amount + eft_fee,
      ref: body.ref,
      own_ref: body.own_ref,
      recipient_name: body.name,
      recipient_account: body.account_number,
      recipient_branch: body.branch_code,
    })
    batch.append({ ...common, id: feeTxId, parent_tx_id: txId, tx_type: 'fee', amount: eft_fee,
      debit: eft_fee, ref: 'EFT fee' })
    await batch.flush()
  })
  return { txId, feeTxId }
}

test('fee rows - an EFT taken with a Pending fee row settles that row with it: posted, and no second fee row', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const { txId, feeTxId } = await takenTheEarlierWay(account, 30_000n, '62000000001')
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 30_000 - 250) })

  const report = await tb.operator.clearing.run()
  assert.equal(report.settled, 1)

  const rows = await transactionsOf(p, account)
  assert.equal(rows.length, 3, 'the deposit, the payment and its one fee row')
  const fee = feeOf(rows, txId)
  assert.ok(fee)
  assert.equal(fee.tx_id, feeTxId, 'the fee row written with the payment')
  assert.equal((await txById(p, txId)).status, 'Successful')
  assert.equal(fee.status, 'Successful')
  assert.equal(fee.debit, '250')
  assert.equal(fee.running_balance, String(100_000 - 30_000 - 250))
  assert.equal(fee.verified, true)
  const left = String(100_000 - 30_000 - 250)
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  await assertLedgerClean(tb)
})

test('fee rows - an EFT taken with a Pending fee row that fails turns both Failed and charges nothing', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const { txId, feeTxId } = await takenTheEarlierWay(account, 30_000n, magic.failed)

  const report = await tb.operator.clearing.run()
  assert.equal(report.failed, 1)

  const rows = await transactionsOf(p, account)
  assert.equal(rows.length, 3, 'no fee row is added')
  const fee = feeOf(rows, txId)
  assert.equal(fee?.tx_id, feeTxId)
  assert.equal((await txById(p, txId)).status, 'Failed')
  assert.equal(fee?.status, 'Failed')
  assert.deepEqual(await balances(p, account), { balance: '100000', available: '100000' })
  await assertLedgerClean(tb)
})
