import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { uuidPattern } from '../support/assertions.ts'
import { balances, newAccount, transactionsOf, transferBody, txById } from '../transfers/helpers.ts'
import { runBank, type BankRun } from '../cli/run-bank.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'

// The operator CLI's ledger commands, run as an operator would (`bank …`, the program
// bin/bank.js runs) against this test's bank. Exit codes (src/cli/main.ts): 0 done, 1 the
// bank refused, 2 a usage mistake, 3 `ledger verify` found a mismatch.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

/** `bank <args>` against this test's bank (in this process: see ../cli/run-bank.ts). */
function bank(args: string[], env: Record<string, string> = {}): Promise<BankRun> {
  return runBank(args, { ...process.env, NATS_URL: tb.natsUrl,
    BANK_OPERATOR_TOKEN: tb.operatorToken, ...env })
}

test('ledger cli - account deposit prints the deposit as JSON and credits the account', async () => {
  const account = await newAccount(p)
  const result = await bank(['account', 'deposit', account, '150000', '--ref', 'R'])
  assert.equal(result.code, 0, result.stderr)
  const printed = JSON.parse(result.stdout)
  assert.deepEqual(Object.keys(printed).sort(), ['account_id', 'amount', 'approval_id',
    'available_balance', 'balance', 'status', 'tx_id'])
  assert.match(printed.tx_id, uuidPattern)
  assert.equal(printed.account_id, account)
  assert.equal(printed.amount, '150000')
  assert.equal(printed.balance, '150000')
  assert.equal(printed.available_balance, '150000')
  assert.deepEqual(await balances(p, account), { balance: '150000', available: '150000' })
  const row = await txById(p, printed.tx_id)
  assert.equal(row.ref, 'R')
  assert.equal(row.tx_type, 'deposit')
  // Money an operator moves is attributed to the operator's credential, never to `system`.
  assert.equal(row.added_by, await operatorCredentialId(tb))
})

test('ledger cli - account deposit without --ref uses the default reference', async () => {
  const account = await newAccount(p)
  const result = await bank(['account', 'deposit', account, '2500'])
  assert.equal(result.code, 0, result.stderr)
  assert.equal((await txById(p, JSON.parse(result.stdout).tx_id)).ref, 'deposit')
})

test('ledger cli - account deposit with an amount that is not whole cents exits 2 and deposits nothing', async () => {
  const account = await newAccount(p)
  for (const amount of ['abc', '12.50', '-5', '1e5', 'R100']) {
    const result = await bank(['account', 'deposit', account, amount])
    assert.equal(result.code, 2, `${amount}: ${result.stderr}`)
    assert.equal(result.stdout, '', amount)
    assert.match(result.stderr, /amount_cents/, amount)
  }
  const missing = await bank(['account', 'deposit', account])
  assert.equal(missing.code, 2)
  assert.deepEqual(await transactionsOf(p, account), [])
})

test('ledger cli - account deposit the bank refuses exits 1 with the error JSON on stderr', async () => {
  const account = await newAccount(p)
  const unknown = await bank(['account', 'deposit', '00000000-0000-4000-8000-000000000000', '100'])
  assert.equal(unknown.code, 1)
  assert.equal(JSON.parse(unknown.stderr).error.code, 404)
  const zero = await bank(['account', 'deposit', account, '0'])
  assert.equal(zero.code, 1)
  assert.equal(JSON.parse(zero.stderr).error.code, 400)
  // A number JavaScript cannot hold exactly must be refused, never rounded and deposited.
  const huge = await bank(['account', 'deposit', account, '9007199254740993'])
  assert.equal(huge.code, 1, huge.stdout)
  assert.equal(JSON.parse(huge.stderr).error.code, 400)
  assert.deepEqual(await transactionsOf(p, account), [])
})

test('ledger cli - clearing run prints the report and settles pending EFTs', async () => {
  const account = await newAccount(p)
  await tb.operator.accounts.deposit({ account_id: account, amount: 50_000 })
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  const result = await bank(['clearing', 'run'])
  assert.equal(result.code, 0, result.stderr)
  const report = JSON.parse(result.stdout)
  assert.equal(report.settled, 1)
  assert.equal(report.failed, 0)
  assert.equal(report.returned, 0)
  assert.match(report.cycle, /^manual:/)
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  assert.deepEqual(await balances(p, account), { balance: '39750', available: '39750' })
  const again = await bank(['clearing', 'run'])
  assert.equal(again.code, 0)
  assert.equal(JSON.parse(again.stdout).settled, 0)
})

test('ledger cli - ledger verify exits 0 on a clean ledger and 3 after tampering', async () => {
  const account = await newAccount(p)
  const deposit = await tb.operator.accounts.deposit({ account_id: account, amount: 7_000 })
  const clean = await bank(['ledger', 'verify'])
  assert.equal(clean.code, 0, clean.stdout + clean.stderr)
  const report = JSON.parse(clean.stdout)
  assert.equal(report.ok, true)
  assert.deepEqual(report.problems, [])
  assert.equal(report.postings_total, '0')

  const db = tb.bank.database.db
  await db.updateTable('transactions').set({ amount: 1 }).where('id', '=', deposit.tx_id).execute()
  try {
    const tampered = await bank(['ledger', 'verify'])
    assert.equal(tampered.code, 3, tampered.stderr)
    const found = JSON.parse(tampered.stdout)
    assert.equal(found.ok, false)
    assert.ok(found.problems.some((problem: { tx_id?: string }) => problem.tx_id === deposit.tx_id),
      tampered.stdout)
  } finally {
    await db.updateTable('transactions').set({ amount: 7_000 }).where('id', '=', deposit.tx_id)
      .execute()
  }
  await db.updateTable('accounts').set({ balance: 7_001 }).where('id', '=', account).execute()
  try {
    const tampered = await bank(['ledger', 'verify'])
    assert.equal(tampered.code, 3)
    assert.ok(JSON.parse(tampered.stdout).problems.some((problem: { kind: string }) => problem.kind
      === 'balance_mismatch'))
  } finally {
    await db.updateTable('accounts').set({ balance: 7_000 }).where('id', '=', account).execute()
  }
  assert.equal((await bank(['ledger', 'verify'])).code, 0)
})

test('ledger cli - ledger verify --incremental starts from the last clean verify and exits 3 on a mismatch after it', async () => {
  const account = await newAccount(p)
  assert.equal((await bank(['ledger', 'verify'])).code, 0)
  const deposit = await tb.operator.accounts.deposit({ account_id: account, amount: 3_000 })
  const clean = await bank(['ledger', 'verify', '--incremental'])
  assert.equal(clean.code, 0, clean.stdout + clean.stderr)
  const report = JSON.parse(clean.stdout)
  assert.equal(report.incremental, true)
  assert.equal(typeof report.since, 'string')
  assert.equal(report.journals_checked, 1)
  const db = tb.bank.database.db
  await db.updateTable('transactions').set({ amount: 1 }).where('id', '=', deposit.tx_id).execute()
  try {
    const tampered = await bank(['ledger', 'verify', '--incremental'])
    assert.equal(tampered.code, 3, tampered.stderr)
    assert.equal(JSON.parse(tampered.stdout).incremental, true)
  } finally {
    const restore = db.updateTable('transactions').set({ amount: 3_000 })
    await restore.where('id', '=', deposit.tx_id).execute()
  }
})

test('ledger cli - a wrong operator token exits 1 and moves nothing', async () => {
  const account = await newAccount(p)
  const result = await bank(['account', 'deposit', account, '100'],
    { BANK_OPERATOR_TOKEN: 'not-a-token' })
  assert.equal(result.code, 1)
  assert.equal(JSON.parse(result.stderr).error.code, 401)
  const partner = await bank(['ledger', 'verify'], { BANK_OPERATOR_TOKEN: p.token })
  assert.equal(partner.code, 1)
  assert.equal(JSON.parse(partner.stderr).error.code, 403)
  assert.deepEqual(await transactionsOf(p, account), [])
})
