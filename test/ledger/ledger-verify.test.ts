import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { fund, newAccount, poolAccount, transactionsOf, transferBody, txById } from '../transfers/helpers.ts'

// `ops.ledger.verify` (src/ledger/ledger-service.ts) and the `verified` flag of each
// transaction (docs/guides/payments.md: tx_sha is a SHA-256 chain per account, so any edit
// of history is detectable). Each tampering test edits the database behind the service's
// back, checks that the edit is found, and puts the value back, so that the next test starts clean.

const tb = useTestBank()
let p: TestPartner
let account: string
/**
 * deposit, EFT (settled, +fee), RTC (+fee), pending EFT (its fee row comes when it settles), newest
 * last.
 */
const ids: Record<'deposit' | 'eft' | 'rtc' | 'pending', string> = { deposit: '', eft: '', rtc: '',
  pending: '' }

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const db = () => tb.bank.database.db

type Report = Awaited<ReturnType<TestBank['operator']['ledger']['verify']>>

function kinds(report: Report): string[] {
  return [...new Set(report.problems.map((problem) => problem.kind))].sort()
}

async function verifiedFlags(): Promise<Map<string, boolean>> {
  return new Map((await transactionsOf(p, account)).map((r) => [r.tx_id, r.verified]))
}

test('ledger - a fresh bank verifies clean with nothing posted', async () => {
  const report = await assertLedgerClean(tb)
  assert.equal(report.accounts_checked, 1, 'the pool account')
  assert.equal(report.transactions_checked, 0)
  assert.equal(report.journals_checked, 0)
  assert.deepEqual(report.internal_balances, {})
})

test('ledger - after deposits, EFTs and RTCs the ledger verifies clean with exact counts and bank balances', async () => {
  account = await newAccount(p)
  ids.deposit = await fund(tb, account, 100_000)
  ids.eft = (await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))).tx_id
  await tb.operator.clearing.run()
  ids.rtc = (await p.client.accounts.transfer(
    transferBody(account, { amount: 20_000, pay_and_clear: true }))).tx_id
  ids.pending = (await p.client.accounts.transfer(transferBody(account, { amount: 5_000 }))).tx_id
  const report = await assertLedgerClean(tb)
  assert.equal(report.accounts_checked, 2)
  // deposit; EFT and its fee; RTC and its fee; the pending EFT, whose fee has no row yet.
  assert.equal(report.transactions_checked, 6)
  // deposit; EFT and its fee; RTC and its fee. The pending EFT has no journal yet.
  assert.equal(report.journals_checked, 5)
  assert.deepEqual(report.internal_balances, {
    'settlement:EFT': String(-100_000 + 10_000),
    'settlement:RTC': '20000',
    fee_income: String(250 + 700),
  })
  assert.ok([...(await verifiedFlags()).values()].every(Boolean))
  const rows = (await transactionsOf(p, account)).map((r) => [r.tx_type, r.status])
  assert.deepEqual(rows, [
    ['transfer', 'Pending'],
    ['fee', 'Successful'], ['transfer', 'Successful'],
    ['fee', 'Successful'], ['transfer', 'Successful'],
    ['deposit', 'Successful'],
  ])
})

test("ledger - editing a transaction's amount in the database is found: verified false and a chain problem", async () => {
  await db().updateTable('transactions').set({ amount: 1 }).where('id', '=', ids.eft).execute()
  try {
    const flags = await verifiedFlags()
    assert.equal(flags.get(ids.eft), false, 'the list shows the edited row unverified')
    for (const [id, verified] of flags) if (id !== ids.eft) assert.equal(verified, true,
      `${id} is untouched`)
    const row = await txById(p, ids.eft)
    assert.equal(row.verified, false)
    assert.equal(row.amount, '1')

    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    const broken = report.problems.filter((problem) => problem.kind === 'chain_broken')
    assert.deepEqual(broken.map((problem) => [problem.account_id, problem.tx_id]),
      [[account, ids.eft]])
    assert.equal(typeof broken[0]!.message, 'string')
  } finally {
    await db().updateTable('transactions').set({ amount: 10_000 }).where('id', '=', ids.eft)
      .execute()
  }
  await assertLedgerClean(tb)
  assert.equal((await txById(p, ids.eft)).verified, true)
})

const edits: Array<[string, Record<string, unknown>]> = [
  ['ref', { ref: 'Changed ref' }],
  ['recipient name', { recipient_name: 'Mallory' }],
  ['own_ref', { own_ref: 'OTHER' }],
  ['recipient account', { recipient_account: '9999999999' }],
  ['debit', { debit: 1 }],
  ['fee', { fee: 0 }],
  ['added_by', { added_by: 'system' }],
  ['date', { created_at: new Date('2026-01-01T00:00:00Z') }],
  ['type', { tx_type: 'deposit' }],
]
for (const [label, change] of edits) {
  test(`ledger - editing a transaction's ${label} in the database is found`, async () => {
    const original = await db().selectFrom('transactions').selectAll().where('id', '=', ids.rtc)
      .executeTakeFirstOrThrow()
    const restore = Object.fromEntries(
      Object.keys(change).map((key) => [key, original[key as keyof typeof original]]))
    await db().updateTable('transactions').set(change).where('id', '=', ids.rtc).execute()
    try {
      assert.equal((await txById(p, ids.rtc)).verified, false)
      assert.equal((await verifiedFlags()).get(ids.rtc), false)
      const report = await tb.operator.ledger.verify()
      assert.equal(report.ok, false)
      assert.ok(
        report.problems.some((problem) => problem.kind === 'chain_broken'
          && problem.tx_id === ids.rtc),
        JSON.stringify(report.problems),
      )
    } finally {
      await db().updateTable('transactions').set(restore).where('id', '=', ids.rtc).execute()
    }
    await assertLedgerClean(tb)
  })
}

test("ledger - editing a transaction's tx_sha breaks its own link and its successor's", async () => {
  const rows = await transactionsOf(p, account)
  const index = rows.findIndex((r) => r.tx_id === ids.rtc)
  const successor = rows[index - 1]!
  const original = rows[index]!.tx_sha
  await db().updateTable('transactions').set({ tx_sha: 'f'.repeat(64) }).where('id', '=', ids.rtc)
    .execute()
  try {
    const flags = await verifiedFlags()
    assert.equal(flags.get(ids.rtc), false)
    assert.equal(flags.get(successor.tx_id), false, 'the next link no longer matches')
    assert.equal((await txById(p, successor.tx_id)).verified, false)
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    const broken = report.problems.filter((problem) => problem.kind === 'chain_broken').map(
      (problem) => problem.tx_id)
    assert.ok(broken.includes(ids.rtc) && broken.includes(successor.tx_id),
      JSON.stringify(report.problems))
  } finally {
    await db().updateTable('transactions').set({ tx_sha: original }).where('id', '=', ids.rtc)
      .execute()
  }
  await assertLedgerClean(tb)
})

test("ledger - editing an account's balance is found as balance_mismatch", async () => {
  await db().updateTable('accounts').set({ balance: 1_000_000 }).where('id', '=', account).execute()
  try {
    // The partner sees the edited balance; the ledger does not agree with it.
    assert.equal((await p.client.accounts.getDetails({ account_id: account })).balance, '1000000')
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.ok(kinds(report).includes('balance_mismatch'), JSON.stringify(report.problems))
    const mismatch = report.problems.find((problem) => problem.kind === 'balance_mismatch')!
    assert.equal(mismatch.account_id, account)
  } finally {
    await db().updateTable('accounts').set({ balance: String(100_000 - 10_250 - 20_700) }).where(
      'id', '=', account).execute()
  }
  await assertLedgerClean(tb)
})

test("ledger - editing an account's held amount is found as hold_mismatch", async () => {
  const { held } = await db().selectFrom('accounts').select('held').where('id', '=', account)
    .executeTakeFirstOrThrow()
  assert.equal(String(held), '5250', 'the pending EFT and its fee are held')
  await db().updateTable('accounts').set({ held: 0 }).where('id', '=', account).execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.deepEqual(report.problems.map((problem) => [problem.kind, problem.account_id]),
      [['hold_mismatch', account]])
  } finally {
    await db().updateTable('accounts').set({ held: 5_250 }).where('id', '=', account).execute()
  }
  await assertLedgerClean(tb)
})

test("ledger - marking a pending EFT settled behind the ledger's back is found as hold_mismatch", async () => {
  await db().updateTable('transactions').set({ status: 'Successful' }).where('id', '=', ids.pending)
    .execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.ok(kinds(report).includes('hold_mismatch'), JSON.stringify(report.problems))
  } finally {
    await db().updateTable('transactions').set({ status: 'Pending' }).where('id', '=', ids.pending)
      .execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - editing a running balance is found as running_balance_mismatch', async () => {
  await db().updateTable('transactions').set({ running_balance: 123 }).where('id', '=', ids.eft)
    .execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    const found = report.problems.find((problem) => problem.kind === 'running_balance_mismatch')
    assert.equal(found?.tx_id, ids.eft, JSON.stringify(report.problems))
  } finally {
    await db().updateTable('transactions').set({ running_balance: 90_000 }).where('id', '=',
      ids.eft).execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - deleting a transaction from the middle of a chain is found', async () => {
  const row = await db().selectFrom('transactions').selectAll().where('id', '=', ids.rtc)
    .executeTakeFirstOrThrow()
  await db().deleteFrom('transactions').where('id', '=', ids.rtc).execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.ok(kinds(report).includes('chain_gap'), JSON.stringify(report.problems))
    assert.ok(kinds(report).includes('chain_broken'), JSON.stringify(report.problems))
    const flags = await verifiedFlags()
    assert.equal(flags.has(ids.rtc), false)
    assert.ok([...flags.values()].includes(false), 'the row after the gap no longer links')
  } finally {
    await db().insertInto('transactions').values(row).execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - deleting the newest transaction is found: the account no longer points at its chain head', async () => {
  const rows = await transactionsOf(p, account)
  const newest = await db().selectFrom('transactions').selectAll().where('id', '=', rows[0]!.tx_id)
    .executeTakeFirstOrThrow()
  await db().deleteFrom('transactions').where('id', '=', newest.id).execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.ok(kinds(report).includes('chain_head_mismatch'), JSON.stringify(report.problems))
  } finally {
    await db().insertInto('transactions').values(newest).execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - a posting that does not balance is found as an unbalanced journal and ledger', async () => {
  const journal = randomUUID()
  await db()
    .insertInto('postings')
    .values({ journal_id: journal, tx_id: null, account_id: null, internal_account: 'fee_income',
      amount: 1, created_at: tb.clock.now() })
    .execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.equal(report.postings_total, '1')
    assert.deepEqual(kinds(report), ['journal_unbalanced', 'ledger_unbalanced'])
    assert.equal(
      report.problems.find((problem) => problem.kind === 'journal_unbalanced')!.journal_id, journal)
  } finally {
    await db().deleteFrom('postings').where('journal_id', '=', journal).execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - a balanced journal moving money behind the ledger is found as a balance mismatch', async () => {
  const journal = randomUUID()
  await db()
    .insertInto('postings')
    .values([
      { journal_id: journal, tx_id: null, account_id: account, internal_account: null, amount: 500,
        created_at: tb.clock.now() },
      { journal_id: journal, tx_id: null, account_id: null, internal_account: 'fee_income',
        amount: -500, created_at: tb.clock.now() },
    ])
    .execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false)
    assert.equal(report.postings_total, '0')
    assert.deepEqual(kinds(report), ['balance_mismatch'])
  } finally {
    await db().deleteFrom('postings').where('journal_id', '=', journal).execute()
  }
  await assertLedgerClean(tb)
})

test("ledger - tampering in one partner's account does not mark another partner's rows unverified", async () => {
  const other = await onboardPartner(tb, { approve: true })
  const theirs = await poolAccount(other)
  await fund(tb, theirs, 1_000)
  await db().updateTable('transactions').set({ amount: 2 }).where('id', '=', ids.deposit).execute()
  try {
    const rows = (await other.client.accounts.listTransactions({ account_id: theirs })).transactions
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.verified, true)
    const report = await tb.operator.ledger.verify()
    assert.ok(report.problems.every((problem) => problem.account_id === account),
      JSON.stringify(report.problems))
  } finally {
    await db().updateTable('transactions').set({ amount: 100_000 }).where('id', '=', ids.deposit)
      .execute()
  }
  await assertLedgerClean(tb)
})

test('ledger - ops.ledger.verify and ops.account.deposit need an operator credential', async () => {
  for (const subject of ['ops.ledger.verify', 'ops.account.deposit']) {
    const body = subject === 'ops.account.deposit'
      ? JSON.stringify({ account_id: account, amount: 100 }) : '{}'
    assert.equal((await rawRequest(tb, subject, body, { token: p.token })).code, 403, subject)
    assert.equal((await rawRequest(tb, subject, body)).code, 401, subject)
  }
  assert.equal((await p.client.accounts.getDetails({ account_id: account })).balance,
    String(100_000 - 10_250 - 20_700))
})

test("ledger - marking a settled transfer Failed behind the ledger's back is found", async () => {
  // tx-chain.ts: status is outside the hash and "checked by the ledger verification against
  // the postings instead"; a transfer whose money was posted cannot honestly be Failed.
  await db().updateTable('transactions').set({ status: 'Failed' }).where('id', '=', ids.eft)
    .execute()
  try {
    const report = await tb.operator.ledger.verify()
    assert.equal(report.ok, false, 'a posted transfer shown as Failed should not verify')
    assert.ok(report.problems.some((problem) => problem.tx_id === ids.eft),
      JSON.stringify(report.problems))
  } finally {
    await db().updateTable('transactions').set({ status: 'Successful' }).where('id', '=', ids.eft)
      .execute()
  }
  await assertLedgerClean(tb)
})
