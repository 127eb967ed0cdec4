import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, iso, uuidPattern } from '../support/assertions.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { balances, newAccount, shaPattern, transactionsOf, transferBody, txById } from '../transfers/helpers.ts'

// `ops.account.deposit`: the operator credits an account as an inbound payment would
// (how a sandbox partner funds an account). A `deposit` transaction added by `system`.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('ledger - a deposit answers its tx_id, the amount and the new balances as strings', async () => {
  const account = await newAccount(p)
  const first = await tb.operator.accounts.deposit({ account_id: account, amount: 150_000,
    ref: 'Seed' })
  assert.deepEqual(Object.keys(first).sort(), ['account_id', 'amount', 'approval_id',
    'available_balance', 'balance', 'status', 'tx_id'])
  assert.equal(first.status, 'Successful')
  assert.equal(first.approval_id, null)
  assert.match(first.tx_id!, uuidPattern)
  assert.equal(first.account_id, account)
  assert.equal(first.amount, '150000')
  assert.equal(first.balance, '150000')
  assert.equal(first.available_balance, '150000')
  const second = await tb.operator.accounts.deposit({ account_id: account, amount: 1 })
  assert.equal(second.balance, '150001')
  assert.notEqual(second.tx_id, first.tx_id)
  assert.deepEqual(await balances(p, account), { balance: '150001', available: '150001' })
})

test('ledger - a deposit is a Successful credit row added by system, with the ref given or "deposit"', async () => {
  const account = await newAccount(p)
  const named = await tb.operator.accounts.deposit({ account_id: account, amount: 2_000,
    ref: 'Top-up March' })
  const unnamed = await tb.operator.accounts.deposit({ account_id: account, amount: 3_000 })
  const rows = await transactionsOf(p, account)
  assert.deepEqual(rows.map((r) => r.tx_id), [unnamed.tx_id, named.tx_id])
  const row = await txById(p, named.tx_id!)
  assert.deepEqual(row, {
    tx_id: named.tx_id,
    parent_tx_id: '',
    date: iso(tb.clock.now()),
    amount: '2000',
    ref: 'Top-up March',
    status: 'Successful',
    tx_sha: row.tx_sha,
    user_id: '',
    added_by: await operatorCredentialId(tb),
    tx_type: 'deposit',
    tx_payment_type: row.tx_payment_type,
    fee: '0',
    recipient_name: '',
    credit: '2000',
    debit: '0',
    running_balance: '2000',
    verified: true,
  })
  assert.match(row.tx_sha, shaPattern)
  assert.equal(rows[0]!.ref, 'deposit')
  assert.equal(rows[0]!.running_balance, '5000')
})

test('ledger - a deposit raises available by its amount while an EFT is held', async () => {
  const account = await newAccount(p)
  await tb.operator.accounts.deposit({ account_id: account, amount: 10_000 })
  await p.client.accounts.transfer(transferBody(account, { amount: 4_000 }))
  const after = await tb.operator.accounts.deposit({ account_id: account, amount: 1_000 })
  assert.equal(after.balance, '11000')
  assert.equal(after.available_balance, String(11_000 - 4_000 - 250))
  await tb.operator.clearing.run()
})

test('ledger - a deposit to an unknown account is 404 and to a non-uuid is 400', async () => {
  const error = await expectApiError(
    tb.operator.accounts.deposit({ account_id: randomUUID(), amount: 100 }), 404)
  assert.equal(error.type, 'not_found')
  await expectApiError(tb.operator.accounts.deposit({ account_id: 'acc-1', amount: 100 }), 400,
    'account_id')
})

const badAmounts: Array<[string, unknown]> = [
  ['zero', 0],
  ['negative', -5],
  ['a fraction', 10.5],
  ['a string', '100'],
  ['missing', undefined],
]
for (const [label, amount] of badAmounts) {
  test(`ledger - a deposit with an amount ${label} is 400 naming amount and moves nothing`, async () => {
    const account = await newAccount(p)
    const body = { account_id: account, ...(amount === undefined ? {} : { amount }) }
    await expectApiError(tb.operator.accounts.deposit(body as never), 400, 'amount')
    assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
    assert.deepEqual(await transactionsOf(p, account), [])
  })
}

test('ledger - a deposit above 2^53-1 sent as raw JSON is 400 and moves nothing', async () => {
  const account = await newAccount(p)
  const reply = await rawRequest(tb, 'ops.account.deposit',
    `{"account_id":"${account}","amount":9007199254740993}`, { token: tb.operatorToken })
  assert.equal(reply.code, 400)
  assert.deepEqual(reply.body.error.details.map((d: { field: string }) => d.field), ['amount'])
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
})

test('ledger - a deposit with a ref over 30 characters or an unknown field is 400', async () => {
  const account = await newAccount(p)
  await expectApiError(tb.operator.accounts.deposit({ account_id: account, amount: 100,
    ref: 'r'.repeat(31) }), 400, 'ref')
  await expectApiError(tb.operator.accounts.deposit({ account_id: account, amount: 100,
    currency: 'ZAR' } as never), 400, 'currency')
  assert.deepEqual(await transactionsOf(p, account), [])
})

test('ledger - the ledger verifies clean after deposits', async () => {
  await assertLedgerClean(tb)
})
