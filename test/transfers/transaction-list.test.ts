import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { randomUUID } from 'node:crypto'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, iso } from '../support/assertions.ts'
import { feeOf, fund, newAccount, transactionsOf, transferBody, txById, type TransactionView } from './helpers.ts'

// The transaction list: newest first; optional `limit` (default 100, max 1000) and
// `cursor`, with `next_cursor` in the response, absent on the last page; without either,
// the newest 1000 and the cursor only in the `Bank-Next-Cursor` header. Never unbounded.

const tb = useTestBank()
let p: TestPartner
/** An account with more rows than the largest page. */
let big: string
const big_transfers = 550
/** deposit + a transfer and its fee each (the fee's row is written when the EFT settles). */
const big_rows = 1 + 2 * big_transfers

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  big = await newAccount(p)
  await fund(tb, big, big_transfers * (100 + 250))
  // Sent together, so that the service takes them in a few grouped ledger batches.
  const sent = await Promise.all(
    Array.from({ length: big_transfers }, () => p.client.accounts.transfer(
      transferBody(big, { amount: 100 }))),
  )
  assert.equal(new Set(sent.map((s) => s.tx_id)).size, big_transfers)
  // Settled, each EFT gets its fee row.
  const report = await tb.operator.clearing.run()
  assert.equal(report.settled, big_transfers)
})

async function page(accountId: string, limit?: number, cursor?: string) {
  return p.client.accounts.listTransactions({
    account_id: accountId,
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  })
}

async function allPages(accountId: string, limit: number): Promise<{
    rows: TransactionView[]; pages: number }> {
  const rows: TransactionView[] = []
  let cursor: string | undefined
  let pages = 0
  for (;;) {
    const next = await page(accountId, limit, cursor)
    pages++
    assert.equal(next.account_id, accountId)
    assert.ok(next.transactions.length <= limit)
    rows.push(...next.transactions)
    if (next.next_cursor === undefined) break
    assert.equal(next.transactions.length, limit, 'only the last page is short')
    assert.equal(typeof next.next_cursor, 'string')
    cursor = next.next_cursor
    assert.ok(pages <= big_rows, 'paging ends')
  }
  return { rows, pages }
}

const listRaw = (body: Record<string, unknown>) =>
  rawRequest(tb, `svc.account.${p.partnerId}.list`, JSON.stringify(body), { token: p.token })

test('transactions - without limit or cursor: the newest 1000, no next_cursor key, the cursor in a header', async () => {
  // As the incumbent's reference client asks: it reads the body into a record without next_cursor.
  const reply = await listRaw({ account_id: big, filter_user_ids: {} })
  assert.equal(reply.code, 200)
  assert.deepEqual(Object.keys(reply.body).sort(), ['account_id', 'transactions'])
  assert.equal(reply.body.transactions.length, 1000)
  const cursor = reply.headers['Bank-Next-Cursor']
  assert.ok(cursor, 'more rows follow, so the header names them')
  // The header's cursor reads on, and the last rows' reply has no header.
  const rest = await listRaw({ account_id: big, cursor, limit: 1000 })
  assert.equal(rest.body.transactions.length, big_rows - 1000)
  assert.equal(rest.headers['Bank-Next-Cursor'], undefined)
  // Our SDK carries the header's cursor as next_cursor.
  const viaSdk = await page(big)
  assert.equal(viaSdk.transactions.length, 1000)
  assert.equal(viaSdk.next_cursor, cursor)
})

test('transactions - with a cursor alone the page is 100 rows, and next_cursor is in the body and the header', async () => {
  const first = await listRaw({ account_id: big, limit: 5 })
  assert.equal(first.body.next_cursor, first.headers['Bank-Next-Cursor'])
  const second = await listRaw({ account_id: big, cursor: first.body.next_cursor })
  assert.equal(second.body.transactions.length, 100)
  assert.equal(typeof second.body.next_cursor, 'string')
  assert.equal(second.body.next_cursor, second.headers['Bank-Next-Cursor'])
})

test('transactions - filter_user_ids keeps only rows of those acting users; [] and {} filter nothing', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  const all = (await listRaw({ account_id: account })).body.transactions
  // The deposit and the Pending EFT (its fee row comes when it settles).
  assert.equal(all.length, 2)
  for (const none of [[], {}, null]) {
    assert.deepEqual(
      (await listRaw({ account_id: account, filter_user_ids: none })).body.transactions, all)
  }
  // No operation names an acting user yet, so a named user has no rows.
  const filtered = await listRaw({ account_id: account, filter_user_ids: [randomUUID()] })
  assert.equal(filtered.code, 200)
  assert.deepEqual(filtered.body.transactions, [])
  for (const bad of [['not-a-uuid'], 'x', [null], Array.from({ length: 101 }, () => randomUUID()),
      { id: randomUUID() }]) {
    const error = await expectApiError(p.client.accounts.listTransactions(
      { account_id: account, filter_user_ids: bad } as never), 400)
    const fields = (error.details as Array<{ field: string }>).map((d) => d.field)
    assert.ok(fields.length > 0 && fields.every((f) => f.startsWith('filter_user_ids')),
      JSON.stringify(error.details))
  }
})

test('transactions - limit 1000 returns 1000 rows and the rest on the next page without a next_cursor', async () => {
  const first = await page(big, 1000)
  assert.equal(first.transactions.length, 1000)
  assert.ok(first.next_cursor)
  const second = await page(big, 1000, first.next_cursor)
  assert.equal(second.transactions.length, big_rows - 1000)
  assert.equal(second.next_cursor, undefined)
  assert.ok(!('next_cursor' in second), 'next_cursor is absent, not null')
  const ids = [...first.transactions, ...second.transactions].map((r) => r.tx_id)
  assert.equal(new Set(ids).size, big_rows)
  assert.equal(second.transactions.at(-1)!.tx_type, 'deposit', 'the oldest row comes last')
})

test('transactions - paging 7 at a time walks every row once, in the same order as large pages', async () => {
  const large = await allPages(big, 1000)
  const small = await allPages(big, 7)
  assert.equal(large.rows.length, big_rows)
  assert.equal(small.pages, Math.ceil(big_rows / 7))
  assert.deepEqual(small.rows.map((r) => r.tx_id), large.rows.map((r) => r.tx_id))
  assert.equal(new Set(small.rows.map((r) => r.tx_id)).size, big_rows)
  // The EFTs were settled together after all were taken: their fee rows, written then, are
  // the newest, each transfer's once; then the transfers; the deposit last.
  const fees = small.rows.slice(0, big_transfers)
  const transfers = small.rows.slice(big_transfers, -1)
  assert.ok(fees.every((r) => r.tx_type === 'fee' && r.status === 'Successful'))
  assert.ok(transfers.every((r) => r.tx_type === 'transfer' && r.status === 'Successful'))
  assert.deepEqual(fees.map((r) => r.parent_tx_id).sort(), transfers.map((r) => r.tx_id).sort())
  assert.equal(small.rows.at(-1)!.tx_type, 'deposit')
  assert.ok(small.rows.every((r) => r.verified), 'every link verifies when read page by page')
})

for (const [label, limit] of [['1001', 1001], ['0', 0], ['-1', -1], ['1.5', 1.5],
    ['a string', '10']] as Array<[string, unknown]>) {
  test(`transactions - limit ${label} is 400 naming limit`, async () => {
    await expectApiError(p.client.accounts.listTransactions({ account_id: big, limit } as never),
      400, 'limit')
  })
}

test('transactions - limit null is read as absent, as every null field of a request is', async () => {
  const page = await p.client.accounts.listTransactions({ account_id: big, limit: null } as never)
  assert.equal(page.account_id, big)
  assert.ok(page.transactions.length > 0)
})

const cursorOf = (text: string) => Buffer.from(text).toString('base64url')
const badCursors: Array<[string, unknown]> = [
  ['with characters a cursor never has', 'not a cursor!'],
  ['of plain letters', 'abc'],
  ['an empty string', ''],
  ['longer than any cursor', 'A'.repeat(41)],
  ['that decodes to something else', cursorOf('x123')],
  ['with a negative position', cursorOf('s-5')],
  ['past the largest 64-bit position', cursorOf('s9999999999999999999')],
  ['of 20 digits', cursorOf('s12345678901234567890')],
  ['as a number', 12],
]
for (const [label, cursor] of badCursors) {
  test(`transactions - a cursor ${label} is 400 naming cursor`, async () => {
    await expectApiError(p.client.accounts.listTransactions({ account_id: big, cursor } as never),
      400, 'cursor')
  })
}

test('transactions - the list is newest first across deposits, transfers, fees and clock changes', async () => {
  const account = await newAccount(p)
  const d1 = await fund(tb, account, 100_000, 'first')
  tb.clock.advance(60_000)
  const t1 = await p.client.accounts.transfer(transferBody(account, { amount: 1_000 }))
  tb.clock.advance(60_000)
  const d2 = await fund(tb, account, 5_000, 'second')
  tb.clock.advance(60_000)
  const t2 = await p.client.accounts.transfer(
    transferBody(account, { amount: 2_000, pay_and_clear: true }))
  const rows = await transactionsOf(p, account)
  // The RTC settled at once, so its fee row follows it; the EFT's comes when it settles.
  assert.equal(feeOf(rows, t1.tx_id), undefined)
  const f2 = feeOf(rows, t2.tx_id)!
  assert.deepEqual(rows.map((r) => r.tx_id), [f2.tx_id, t2.tx_id, d2, t1.tx_id, d1])
  const dates = rows.map((r) => Date.parse(r.date))
  assert.deepEqual([...dates].sort((a, b) => b - a), dates, 'dates never increase down the list')
  assert.ok(dates[0]! > dates.at(-1)!)

  // Settling the older EFT later changes its status, not its place, and appends its fee row,
  // newest.
  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  const settled = await transactionsOf(p, account)
  const f1 = feeOf(settled, t1.tx_id)
  assert.ok(f1)
  assert.equal(f1.status, 'Successful')
  assert.equal(f1.date, iso(tb.clock.now()))
  assert.deepEqual(settled.map((r) => r.tx_id), [f1.tx_id, ...rows.map((r) => r.tx_id)])
  assert.equal(settled.find((r) => r.tx_id === t1.tx_id)!.status, 'Successful')
  const settledDates = settled.map((r) => Date.parse(r.date))
  assert.deepEqual([...settledDates].sort((a, b) => b - a), settledDates,
    'dates never increase down the list')
})

test('transactions - a page that ends exactly at the oldest row carries no next_cursor', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  for (let i = 0; i < 4; i++) await p.client.accounts.transfer(transferBody(account))
  await fund(tb, account, 1)
  // 6 rows: deposit, four Pending EFTs (their fee rows come when they settle), deposit.
  const whole = await page(account, 6)
  assert.equal(whole.transactions.length, 6)
  assert.equal(whole.next_cursor, undefined)
  const first = await page(account, 3)
  assert.ok(first.next_cursor)
  const second = await page(account, 3, first.next_cursor)
  assert.equal(second.transactions.length, 3)
  assert.equal(second.next_cursor, undefined)
  assert.deepEqual([...first.transactions, ...second.transactions], whole.transactions)
  const five = await page(account, 5)
  const rest = await page(account, 5, five.next_cursor)
  assert.deepEqual(rest.transactions, whole.transactions.slice(5))
  assert.equal(rest.next_cursor, undefined)
})

test('transactions - a page limit larger than the account returns every row and no next_cursor', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 500)
  const all = await page(account, 1000)
  assert.equal(all.transactions.length, 1)
  assert.ok(!('next_cursor' in all))
  assert.deepEqual((await page(account)).transactions, all.transactions)
})

test('transactions - an account without transactions lists an empty page', async () => {
  const account = await newAccount(p)
  const empty = await page(account)
  assert.deepEqual(empty, { account_id: account, transactions: [] })
})

test('transactions - a cursor stays valid while newer rows arrive: no row is skipped or repeated', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  for (let i = 0; i < 4; i++) await p.client.accounts.transfer(
    transferBody(account, { amount: 100 }))
  const before = await transactionsOf(p, account)
  const first = await page(account, 4)
  // New rows are newer than every row already listed, so they never enter later pages.
  await p.client.accounts.transfer(transferBody(account, { amount: 100 }))
  await fund(tb, account, 10)
  const rest = await allPagesFrom(account, 4, first.next_cursor)
  assert.deepEqual([...first.transactions, ...rest].map((r) => r.tx_id), before.map((r) => r.tx_id))
})

async function allPagesFrom(accountId: string, limit: number,
    cursor: string | undefined): Promise<TransactionView[]> {
  const rows: TransactionView[] = []
  while (cursor !== undefined) {
    const next = await page(accountId, limit, cursor)
    rows.push(...next.transactions)
    cursor = next.next_cursor
  }
  return rows
}

test('transactions - get_transaction returns exactly the row the list shows, for every kind of row', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  await p.client.accounts.transfer(transferBody(account))
  await p.client.accounts.transfer(transferBody(account, { pay_and_clear: true }))
  await p.client.accounts.transfer(
    transferBody(account, { pay_and_clear: true, account_number: '4000000028' }))
  await tb.operator.clearing.run()
  const rows = await transactionsOf(p, account)
  assert.deepEqual(new Set(rows.map((r) => r.tx_type)),
    new Set(['deposit', 'transfer', 'fee', 'reversal']))
  for (const row of rows) assert.deepEqual(await txById(p, row.tx_id), row)
})

test('transactions - get_transaction of an unknown id is 404 and of a non-uuid is 400', async () => {
  const missing = await expectApiError(p.client.accounts.getTransaction(
    { tx_id: '00000000-0000-4000-8000-000000000000' }), 404)
  assert.equal(missing.type, 'not_found')
  await expectApiError(p.client.accounts.getTransaction({ tx_id: 'tx-1' }), 400, 'tx_id')
  await expectApiError(p.client.accounts.getTransaction({} as never), 400, 'tx_id')
  await expectApiError(p.client.accounts.getTransaction(
    { tx_id: '00000000-0000-4000-8000-000000000000', account_id: big } as never), 400, 'account_id')
})

test('transactions - list without account_id or with an unknown field is 400', async () => {
  await expectApiError(p.client.accounts.listTransactions({} as never), 400, 'account_id')
  await expectApiError(p.client.accounts.listTransactions({ account_id: 'abc' } as never), 400,
    'account_id')
  await expectApiError(p.client.accounts.listTransactions({ account_id: big, offset: 5 } as never),
    400, 'offset')
})

test('transactions - the ledger verifies clean after the list tests', async () => {
  await assertLedgerClean(tb)
})
