import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestBank, type TestPartner } from '../support/harness.ts'
import { chainHash } from '../../src/ledger/tx-chain.ts'
import { cents } from '../../src/ledger/cents.ts'
import { fund, newAccount, transferBody } from '../transfers/helpers.ts'

// `ledger verify --incremental` (src/ledger/ledger-verification.ts): a clean verify leaves
// checkpoints, and an incremental one checks each account's chain from its checkpoint's row
// on, balances from the checkpoint's sums plus the postings since, and the audit chains
// from theirs. Each test counts what was read, so that "incremental" is measured, not
// assumed; the tampering tests put back what they change.

const tb = useTestBank()
let p: TestPartner
let account: string

type Report = Awaited<ReturnType<TestBank['operator']['ledger']['verify']>>

const db = () => tb.bank.database.db
const incremental = () => tb.operator.ledger.verify({ incremental: true })

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  account = await newAccount(p)
  await fund(tb, account, 1_000_000)
})

/** An RTC paid and cleared at once: two rows (the payment and its fee), two journals. */
async function rtc(amount = 1_000): Promise<string> {
  const body = transferBody(account, { amount, pay_and_clear: true })
  return (await p.client.accounts.transfer(body)).tx_id
}

/** Accounts whose chain has a row: an incremental verify reads each one's checkpoint row. */
async function anchoredAccounts(): Promise<number> {
  const rows = await db().selectFrom('accounts').select('id').where('last_seq', '>', '0').execute()
  return rows.length
}

function assertClean(report: Report): void {
  assert.deepEqual(report.problems, [])
  assert.equal(report.ok, true)
  assert.equal(report.postings_total, '0')
}

function kinds(report: Report): string[] {
  return [...new Set(report.problems.map((problem) => problem.kind))].sort()
}

test('ledger verify incremental - without checkpoints it verifies everything and leaves them', async () => {
  await rtc()
  const report = await incremental()
  assertClean(report)
  assert.equal(report.incremental, false)
  assert.equal(report.since, null)
  assert.equal(report.checkpoint_written, true)
  // The deposit, then the RTC and its fee.
  assert.equal(report.transactions_checked, 3)
})

test('ledger verify incremental - after a full verify it reads only the checkpoint rows and what came after', async () => {
  const full = await tb.operator.ledger.verify()
  assertClean(full)
  assert.equal(full.incremental, false)
  const anchors = await anchoredAccounts()

  const nothingNew = await incremental()
  assertClean(nothingNew)
  assert.equal(nothingNew.incremental, true)
  assert.ok(nothingNew.since !== null && Date.parse(nothingNew.since) > 0)
  assert.equal(nothingNew.transactions_checked, anchors, 'each account its checkpoint row only')
  assert.equal(nothingNew.journals_checked, 0)
  assert.ok(nothingNew.audit_rows_checked < full.audit_rows_checked || full.audit_rows_checked <= 8)

  for (let i = 0; i < 3; i++) await rtc()
  const three = await incremental()
  assertClean(three)
  assert.equal(three.transactions_checked, anchors + 6, 'the checkpoint rows and the 6 new rows')
  assert.equal(three.journals_checked, 6)
  assert.deepEqual(three.internal_balances, (await tb.operator.ledger.verify()).internal_balances)
})

test('ledger verify incremental - the audit trail is walked from its chains checkpoints', async () => {
  await tb.operator.ledger.verify()
  const first = await incremental()
  await fund(tb, account, 1_000)
  const second = await incremental()
  assertClean(second)
  // The deposit is one audited action: its row, plus the checkpoint rows walked each time.
  assert.equal(second.audit_rows_checked, first.audit_rows_checked + 1)
  assert.equal(second.transactions_checked, first.transactions_checked + 1)
})

test('ledger verify incremental - a row Pending at the checkpoint that settles after it is checked', async () => {
  const pending = (await p.client.accounts.transfer(transferBody(account, { amount: 2_000 }))).tx_id
  await rtc()
  assertClean(await incremental())
  const anchors = await anchoredAccounts()
  const cleared = await tb.operator.clearing.run()
  assert.ok(cleared.settled >= 1)
  const report = await incremental()
  assertClean(report)
  // From the Pending EFT: it, the RTC and its fee (the checkpoint row), the EFT's fee row.
  assert.equal(report.transactions_checked, anchors - 1 + 4)
  const row = await db()
    .selectFrom('transactions')
    .select('status')
    .where('id', '=', pending)
    .executeTakeFirstOrThrow()
  assert.equal(row.status, 'Successful')
})

test('ledger verify incremental - an edited row after the checkpoint is found, and the checkpoint stays', async () => {
  assertClean(await incremental())
  const txId = await rtc(3_000)
  await db().updateTable('transactions').set({ amount: 3_001 }).where('id', '=', txId).execute()
  try {
    const report = await incremental()
    assert.equal(report.ok, false)
    assert.equal(report.checkpoint_written, false)
    assert.deepEqual(
      report.problems.filter((x) => x.kind === 'chain_broken').map((x) => x.tx_id),
      [txId],
    )
  } finally {
    await db().updateTable('transactions').set({ amount: 3_000 }).where('id', '=', txId).execute()
  }
  assertClean(await incremental())
})

/** The account's newest row: where a clean verify leaves its checkpoint. */
async function newestRow() {
  return db()
    .selectFrom('transactions')
    .selectAll()
    .where('account_id', '=', account)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow()
}

test('ledger verify incremental - an edit of the checkpoint row is found', async () => {
  assertClean(await incremental())
  const row = await newestRow()
  await db().updateTable('transactions').set({ ref: 'Changed' }).where('id', '=', row.id).execute()
  try {
    const report = await incremental()
    assert.equal(report.ok, false)
    assert.ok(
      report.problems.some((x) => x.kind === 'chain_broken' && x.tx_id === row.id),
      JSON.stringify(report.problems),
    )
  } finally {
    await db().updateTable('transactions').set({ ref: row.ref }).where('id', '=', row.id).execute()
  }
  assertClean(await incremental())
})

test('ledger verify incremental - the checkpoint row rewritten with a fresh hash and head is found by its checkpoint', async () => {
  assertClean(await incremental())
  const row = await newestRow()
  const forged = { ...row, ref: 'Forged', seq: cents(row.seq) }
  const sha = chainHash(row.prev_sha, {
    ...forged,
    amount: cents(row.amount),
    fee: cents(row.fee),
    credit: cents(row.credit),
    debit: cents(row.debit),
  })
  const rewrite = async (ref: string, txSha: string) => {
    await db()
      .updateTable('transactions')
      .set({ ref, tx_sha: txSha })
      .where('id', '=', row.id)
      .execute()
    await db().updateTable('accounts').set({ last_sha: txSha }).where('id', '=', account).execute()
  }
  await rewrite('Forged', sha)
  try {
    const report = await incremental()
    assert.equal(report.ok, false)
    assert.deepEqual(kinds(report), ['checkpoint_mismatch'])
    assert.equal(report.problems[0]!.tx_id, row.id)
  } finally {
    await rewrite(row.ref, row.tx_sha)
  }
  assertClean(await incremental())
})

test('ledger verify incremental - a row before the checkpoint edited is beyond it; a full verify finds it', async () => {
  assertClean(await incremental())
  const oldest = await db()
    .selectFrom('transactions')
    .selectAll()
    .where('account_id', '=', account)
    .where('seq', '=', '1')
    .executeTakeFirstOrThrow()
  await db()
    .updateTable('transactions')
    .set({ ref: 'Old edit' })
    .where('id', '=', oldest.id)
    .execute()
  try {
    assertClean(await incremental())
    const full = await tb.operator.ledger.verify()
    assert.equal(full.ok, false)
    assert.equal(full.incremental, false)
    assert.ok(full.problems.some((x) => x.kind === 'chain_broken' && x.tx_id === oldest.id))
  } finally {
    await db()
      .updateTable('transactions')
      .set({ ref: oldest.ref })
      .where('id', '=', oldest.id)
      .execute()
  }
  assertClean(await tb.operator.ledger.verify())
})

test('ledger verify incremental - a posting added after the checkpoint is found in the balances', async () => {
  assertClean(await incremental())
  const journal = '01900000-0000-7000-8000-000000000001'
  await db()
    .insertInto('postings')
    .values([
      {
        journal_id: journal,
        tx_id: null,
        account_id: account,
        internal_account: null,
        amount: 5,
        created_at: new Date(),
      },
      {
        journal_id: journal,
        tx_id: null,
        account_id: null,
        internal_account: 'settlement:EFT',
        amount: -5,
        created_at: new Date(),
      },
    ])
    .execute()
  try {
    const report = await incremental()
    assert.deepEqual(kinds(report), ['balance_mismatch'])
    assert.equal(report.journals_checked, 1)
  } finally {
    await db().deleteFrom('postings').where('journal_id', '=', journal).execute()
  }
  assertClean(await tb.operator.ledger.verify())
})
