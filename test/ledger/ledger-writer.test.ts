import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { Duplicate, InsufficientFunds, NotFound } from '../../src/errors.ts'
import { cents } from '../../src/ledger/cents.ts'
import type { AccountState, Journal } from '../../src/ledger/journal.ts'
import type { JournalKind, UnderLock } from '../../src/ledger/journal-kind.ts'
import type { LedgerExecutor } from '../../src/ledger/ledger-tables.ts'
import type { PaymentKind, SettlementKind, WriteReport } from '../../src/ledger/ledger-writer.ts'
import { reservePayout, settlePayout, type PayoutJob, type PendingPayout } from '../../src/ledger/payment-journals.ts'
import { newRowId } from '../../src/ledger/row-id.ts'
import { onboardPartner, storage, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { newAccount } from '../transfers/helpers.ts'

// The ledger writer's own contract (src/ledger/ledger-writer.ts), through its public doors:
// `write` (a kind of journal inside the caller's transaction), the payment and settlement
// desks, and its probe. The kinds are this file's own, small, recorded on the Journal the
// writer hands them with the named journals of payment-journals.ts; the bank underneath is
// real (its database, its writer and the memory its payment batches share).

const tb = useTestBank()
let p: TestPartner

const writer = () => tb.bank.services.ledgerWriter
const db = () => tb.bank.database.db

/** Every write the writer's probe reported, in order. */
const reports: WriteReport[] = []
let payDesk: { submit(job: PayoutJob): Promise<PendingPayout> }
let settleDesk: { submit(payout: PendingPayout): Promise<Settled> }

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  payDesk = writer().payments(pay)
  settleDesk = writer().settlements(settle)
  writer().probe({ written: (report) => void reports.push(report) })
})

// ---- The kinds of this file.

/** Credits each account from settlement:EFT, as a deposit does; NotFound at one not held. */
const credit: JournalKind<{ accounts: string[]; amount: bigint }, string[]> = {
  name: 'test.credit',
  accountsOf: (input) => input.accounts,
  record: (journal, input) =>
    input.accounts.map((account) => {
      if (!journal.has(account)) throw new NotFound('account')
      return creditOne(journal, account, input.amount)
    }),
}

function creditOne(journal: Journal, account: string, amount: bigint): string {
  const txId = newRowId()
  journal.post([
    { internal: 'settlement:EFT', amount: -amount, tx_id: txId },
    { account, amount, tx_id: txId },
  ])
  journal.append({
    id: txId, account_id: account, tx_type: 'deposit', tx_payment_type: 'EFT',
    status: 'Successful', amount, credit: amount, debit: 0n, added_by: 'test', posted: true,
  })
  return txId
}

/** What `record` was given, copied as it saw it. */
interface Seen {
  has: Record<string, boolean>
  accounts: AccountState[]
  transactions: Record<string, { status: string; hold_amount: bigint }>
  /** What each held account's partner owes; undefined when the kind was given no debts. */
  debts: Record<string, bigint> | undefined
}

interface Look {
  accounts: string[]
  transactions?: string[]
}

/** Records nothing: answers what the writer gave `record` (with the partners' debts or not). */
function lookKind(debts: boolean): JournalKind<Look, Seen> {
  return {
    name: debts ? 'test.look-debts' : 'test.look',
    accountsOf: (input) => input.accounts,
    transactionsOf: (input) => input.transactions ?? [],
    ...(debts ? { debts: true } : {}),
    record: (journal, input, under) => seen(journal, input, under),
  }
}
const look = lookKind(false)
const lookWithDebts = lookKind(true)

function seen(journal: Journal, input: Look, under: UnderLock): Seen {
  const held = [...new Set(input.accounts)].filter((id) => journal.has(id))
  const partners = [...new Set(held.map((id) => journal.account(id).partner_id))]
  const debts = under.debts
  const statuses = [...under.transactions].map(([id, t]) => {
    return [id, { status: t.status, hold_amount: t.hold_amount }] as const
  })
  return {
    has: Object.fromEntries(input.accounts.map((id) => [id, journal.has(id)])),
    accounts: byId(held.map((id) => ({ ...journal.account(id) }))),
    transactions: Object.fromEntries(statuses),
    debts: debts && Object.fromEntries(partners.map((id) => [id, debts.owedBy(id)])),
  }
}

/** Settles a pending payout as accepted, once: one no longer Pending answers its status. */
const settleOnce: JournalKind<PendingPayout, string> = {
  name: 'test.settle-once',
  accountsOf: (payout) => [payout.account_id],
  transactionsOf: (payout) => [payout.tx_id],
  record(journal, payout, { transactions }) {
    const status = transactions.get(payout.tx_id)?.status
    if (status !== 'Pending') return status ?? 'missing'
    return settlePayout(journal, payout, { status: 'accepted' })
  },
}

/** Takes an amount back (a dispute): what the account cannot cover its partner owes. */
const takeBack: JournalKind<{ account: string; amount: bigint }, bigint> = {
  name: 'test.take-back',
  accountsOf: (input) => [input.account],
  debts: true,
  record(journal, { account, amount }, { debts }) {
    assert.ok(debts)
    const txId = newRowId()
    const partner_id = journal.account(account).partner_id
    const counter = [{ internal: 'settlement:DEBIT_ORDER' as const, amount }]
    const take = { account_id: account, partner_id, amount, tx_id: txId, counter }
    const took = debts.takeBack(journal, take)
    journal.append({
      id: txId, account_id: account, tx_type: 'reversal', tx_payment_type: 'DEBIT_ORDER',
      status: 'Successful', amount, credit: 0n, debit: took.taken, added_by: 'test', posted: true,
    })
    return took.shortfall
  },
}

/** A payout held at once with its Pending row (reservePayout), keyed by its clientTxId. */
const pay: PaymentKind<PayoutJob, PendingPayout> = {
  name: 'test.pay',
  accountsOf: (job) => [job.accountId],
  keyOf: (job) => ({ partner_id: job.partnerId, client_tx_id: job.clientTxId, tx_id: job.txId }),
  refusal: (journal, job) => (journal.has(job.accountId) ? undefined : new NotFound('account')),
  take: (journal, job) => reservePayout(journal, job),
}

type Settled = { by: 'settle' | 'settled'; status: string }

/** A payout accepted by its rail; `by` tells which of the kind's two answers was given. */
const settle: SettlementKind<PendingPayout, Settled> = {
  name: 'test.settle',
  accountOf: (payout) => payout.account_id,
  txOf: (payout) => payout.tx_id,
  settle: (journal, payout) => {
    return { by: 'settle', status: settlePayout(journal, payout, { status: 'accepted' }) }
  },
  settled: (status) => ({ by: 'settled', status }),
}

interface CreditReading {
  accounts: string[]
  amount: bigint
  transactions: string[]
}

/** Credits as `credit` does, once the transactions it names are read under the locks. */
const creditReading: JournalKind<CreditReading, string[]> = {
  ...credit,
  name: 'test.credit-reading',
  transactionsOf: (input) => input.transactions,
}

/** A cent of deposit awaiting its rail: a Pending row that holds nothing; its tx_id. */
const pendingCent: JournalKind<string, string> = {
  name: 'test.pending-cent',
  accountsOf: (account) => [account],
  record: (journal, account) => journal.append({
    account_id: account, tx_type: 'deposit', tx_payment_type: 'EFT', status: 'Pending',
    amount: 1n, credit: 1n, debit: 0n, added_by: 'test', posted: false,
  }),
}

interface PendingCent {
  account: string
  tx_id: string
}

type Confirmed = { by: 'settle'; journal: string } | { by: 'settled'; status: string }

/**
 * A pending cent confirmed by its rail: its journal posts the cent from settlement:EFT (no hold
 * to release) and its row turns Successful. Every batch ends by waiting for `held` (a test
 * keeps the desk's batches in flight busy with it).
 */
function confirmCent(held: Promise<void>): SettlementKind<PendingCent, Confirmed> {
  return {
    name: 'test.confirm-cent',
    accountOf: (cent) => cent.account,
    txOf: (cent) => cent.tx_id,
    settle(journal, { account, tx_id }) {
      const id = journal.post([
        { internal: 'settlement:EFT', amount: -1n, tx_id },
        { account, amount: 1n, tx_id },
      ])
      journal.setStatus(tx_id, account, { status: 'Successful', posted: true })
      return { by: 'settle', journal: id }
    },
    settled: (status) => ({ by: 'settled', status }),
    alongside: () => () => held,
  }
}

// ---- Helpers.

/** A payout job of partner p; a new clientTxId unless one is given. */
function payout(accountId: string, amount: number, fee = 0, clientTxId?: string): PayoutJob {
  return {
    kind: 'payout', paymentType: 'EFT', partnerId: p.partnerId, addedBy: 'test', accountId,
    clientTxId: clientTxId ?? randomUUID(), txId: newRowId(), amount: BigInt(amount),
    fee: BigInt(fee), ref: 'test', own_ref: 'test', name: 'Recipient',
    account_number: '62000000001', branch_code: '250655',
  }
}

/** A composed write in a transaction of its own. */
function compose<I, R>(kind: JournalKind<I, R>, input: I): Promise<R> {
  return db().transaction().execute((trx) => writer().write(trx, kind, input))
}

async function fundedAccount(amount: number): Promise<string> {
  const account = await newAccount(p)
  await compose(credit, { accounts: [account], amount: BigInt(amount) })
  return account
}

/** A new account with a pending cent (pendingCent). */
async function centPending(): Promise<PendingCent> {
  const account = await newAccount(p)
  return { account, tx_id: await compose(pendingCent, account) }
}

/** The journals that posted for a transaction, on any account. */
async function journalsOf(txId: string): Promise<string[]> {
  const rows = await db().selectFrom('postings').select('journal_id').distinct()
    .where('tx_id', '=', txId).execute()
  return rows.map((row) => row.journal_id)
}

/** An account's balance, holds, rows (in chain order) and postings, as committed. */
async function ledgerOf(account: string) {
  const a = await db().selectFrom('accounts').select(['balance', 'held'])
    .where('id', '=', account).executeTakeFirstOrThrow()
  const rows = await db().selectFrom('transactions').select(['id', 'status'])
    .where('account_id', '=', account).orderBy('seq').execute()
  const postings = await db().selectFrom('postings').select('id')
    .where('account_id', '=', account).execute()
  const chain = rows.map((row) => ({ id: row.id, status: row.status }))
  return { balance: cents(a.balance), held: cents(a.held), rows: chain, postings: postings.length }
}

/** An account's balance and holds, as committed. */
async function money(account: string): Promise<{ balance: bigint; held: bigint }> {
  const { balance, held } = await ledgerOf(account)
  return { balance, held }
}

/** The accounts as stored, by id. */
async function accountStates(ids: string[]): Promise<AccountState[]> {
  const rows = await db().selectFrom('accounts')
    .select(['id', 'partner_id', 'status', 'balance', 'held', 'last_seq', 'last_sha',
      'last_posted'])
    .where('id', 'in', ids).execute()
  return byId(rows.map((r) => ({
    id: r.id, partner_id: r.partner_id, status: r.status, balance: cents(r.balance),
    held: cents(r.held),
    last_seq: cents(r.last_seq), last_sha: r.last_sha, last_posted: cents(r.last_posted),
  })))
}

function byId<A extends { id: string }>(rows: A[]): A[] {
  return [...rows].sort((a, b) => (a.id < b.id ? -1 : 1))
}

/** The caller's own business row, beside the ledger's: here a transfer key. */
async function insertCallerRow(trx: LedgerExecutor, key: string, txId: string): Promise<void> {
  await trx.insertInto('transfer_keys')
    .values({ partner_id: p.partnerId, client_tx_id: key, tx_id: txId, created_at: tb.clock.now() })
    .execute()
}

async function callerRow(key: string): Promise<string | undefined> {
  const row = await db().selectFrom('transfer_keys').select('tx_id')
    .where('client_tx_id', '=', key).executeTakeFirst()
  return row?.tx_id
}

/** Which of the accounts the current transaction has locked (its xid is their xmax). */
async function lockedHere(trx: LedgerExecutor, ids: string[]): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id from accounts where id in (${sql.join(ids)}) and xmax::text = (txid_current() % 4294967296)::text order by id`.execute(trx)
  return rows.map((row) => row.id)
}

/** Pays through the test desk: the answer, and whether its committed write locked first. */
async function payReported(account: string, amount: number) {
  const job = payout(account, amount)
  const paid = await payDesk.submit(job)
  return { paid, locked: writeOf(job.clientTxId).locked }
}

/** The last committed write of the test desk with this clientTxId, as the probe saw it. */
function writeOf(clientTxId: string): WriteReport {
  const writes = reports.filter((r) => r.keys.some((k) => k.client_tx_id === clientTxId))
  const committed = writes.filter((r) => r.committed).at(-1)
  assert.ok(committed, `a committed write of ${clientTxId}`)
  return committed
}

async function outcomeOf<R>(promise: Promise<R>) {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  )
}

// ---- PostgreSQL: another connection's view while a transaction is open.

/**
 * Runs `during` while a transaction of its own, which did `work` first, stays open; then lets
 * that transaction commit, whatever `during` did.
 */
async function whileOpen<R>(
  work: (trx: LedgerExecutor) => Promise<unknown>,
  during: () => Promise<R>,
): Promise<R> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let opened!: () => void
  const open = new Promise<void>((resolve) => (opened = resolve))
  const done = db().transaction().execute(async (trx) => {
    await work(trx)
    opened()
    await released
  })
  await Promise.race([open, done])
  try {
    return await during()
  } finally {
    release()
    await done
  }
}

/** Waits (a bounded number of looks, no timer) until a backend of this database waits on a lock. */
async function untilWaitingOnLock(): Promise<void> {
  for (let look = 0; look < 5_000; look++) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db())
    if (rows[0]!.n > 0) return
  }
  assert.fail('no transaction came to wait on a lock')
}

/** Whether another transaction can lock the account at once (FOR UPDATE NOWAIT). */
async function lockableNow(account: string): Promise<boolean> {
  try {
    await db().transaction().execute((trx) => sql`select id from accounts where id = ${account} for update nowait`.execute(trx))
    return true
  } catch (error) {
    if ((error as { code?: unknown }).code === '55P03') return false
    throw error
  }
}

// ---- The tests.

test('ledger writer - a composed write commits inside the caller\'s transaction with the caller\'s own row, and not at all when the caller throws after it', async () => {
  const account = await newAccount(p)
  const empty = await ledgerOf(account)
  const key = randomUUID()
  const [txId] = await db().transaction().execute(async (trx) => {
    const written = await writer().write(trx, credit, { accounts: [account], amount: 5_000n })
    await insertCallerRow(trx, key, written[0]!)
    // Another connection still sees the account as it was (PGlite has one connection).
    if (storage === 'postgres') assert.deepEqual(await ledgerOf(account), empty)
    return written
  })
  const committed = await ledgerOf(account)
  assert.deepEqual(committed, {
    balance: 5_000n, held: 0n, rows: [{ id: txId, status: 'Successful' }], postings: 1,
  })
  assert.equal(await callerRow(key), txId)
  const failure = new Error('the caller fails after the write')
  const abandoned = randomUUID()
  const failing = db().transaction().execute(async (trx) => {
    const written = await writer().write(trx, credit, { accounts: [account], amount: 3_000n })
    await insertCallerRow(trx, abandoned, written[0]!)
    throw failure
  })
  await assert.rejects(failing, failure)
  assert.deepEqual(await ledgerOf(account), committed, 'balance and transactions unchanged')
  assert.equal(await callerRow(abandoned), undefined)
})

test('ledger writer - record throwing a typed error (NotFound) writes nothing, even for a caller that goes on to commit its own row', async () => {
  const account = await fundedAccount(1_000)
  const before = await ledgerOf(account)
  // The journal credits `account` before it finds the second account missing.
  const refused = { accounts: [account, randomUUID()], amount: 700n }
  await assert.rejects(compose(credit, refused), NotFound)
  assert.deepEqual(await ledgerOf(account), before)
  const key = randomUUID()
  await db().transaction().execute(async (trx) => {
    await assert.rejects(writer().write(trx, credit, refused), NotFound)
    await insertCallerRow(trx, key, newRowId())
  })
  assert.ok(await callerRow(key), 'the caller\'s row committed')
  assert.deepEqual(await ledgerOf(account), before, 'the refused journal wrote nothing')
})

test('ledger writer - record sees the accounts a kind names as stored, locked for the caller\'s transaction; an account that does not exist is not has()', async () => {
  const funded = await fundedAccount(1_000)
  const plain = await newAccount(p)
  const other = await newAccount(p)
  const missing = randomUUID()
  const { saw, locked } = await db().transaction().execute(async (trx) => {
    const saw = await writer().write(trx, look, { accounts: [plain, missing, funded, plain] })
    return { saw, locked: await lockedHere(trx, [funded, plain, other]) }
  })
  assert.deepEqual(saw.has, { [funded]: true, [plain]: true, [missing]: false })
  assert.deepEqual(saw.accounts, await accountStates([funded, plain]))
  assert.equal(saw.accounts.find((a) => a.id === funded)?.balance, 1_000n)
  assert.deepEqual(locked, [funded, plain].sort(), 'the named accounts only')
  const report = reports.filter((r) => r.desk === 'test.look').at(-1)
  assert.deepEqual(report && { locked: report.locked, committed: report.committed }, {
    locked: true, committed: true,
  })
})

// PostgreSQL only: PGlite runs one transaction at a time, so no write can wait on another.
if (storage === 'postgres') {
  test('ledger writer - accounts are locked in id order: waiting for the higher id, the write already holds the lower one (PostgreSQL)', async () => {
    const ids = [await newAccount(p), await newAccount(p)].sort()
    const [low, high] = [ids[0]!, ids[1]!]
    const lockHigh = (trx: LedgerExecutor) => sql`select id from accounts where id = ${high} for update`.execute(trx)
    const { writing, lowFree } = await whileOpen(lockHigh, async () => {
      const writing = compose(look, { accounts: [high, low] })
      await untilWaitingOnLock()
      return { writing, lowFree: await lockableNow(low) }
    })
    const saw = await writing
    assert.equal(lowFree, false, 'the write holds the lower id while it waits for the higher')
    assert.deepEqual(saw.has, { [low]: true, [high]: true })
  })
}

test('ledger writer - transactionsOf: record is given each named transaction\'s status and hold as read under the accounts\' locks, and none for a missing one', async () => {
  const account = await fundedAccount(10_000)
  const pending = await payDesk.submit(payout(account, 1_000, 100))
  const [credited] = await compose(credit, { accounts: [account], amount: 500n })
  const named = [pending.tx_id, credited!, newRowId()]
  const first = await compose(look, { accounts: [account], transactions: named })
  assert.deepEqual(first.transactions, {
    [pending.tx_id]: { status: 'Pending', hold_amount: 1_100n },
    [credited!]: { status: 'Successful', hold_amount: 0n },
  })
  // A settlement holds the account's lock, not yet committed, when the next write asks for
  // the payout: the status it is given is the one it reads once it has the lock.
  const settling = (trx: LedgerExecutor) => writer().write(trx, settleOnce, pending)
  const { second } = await whileOpen(settling, async () => {
    const second = compose(look, { accounts: [account], transactions: [pending.tx_id] })
    // PGlite runs one transaction at a time: the write simply waits for the settlement's.
    if (storage === 'postgres') await untilWaitingOnLock()
    return { second }
  })
  assert.deepEqual((await second).transactions, {
    [pending.tx_id]: { status: 'Successful', hold_amount: 0n },
  })
  assert.equal(await compose(settleOnce, pending), 'Successful', 'settled once')
  assert.deepEqual(await money(account), { balance: 10_500n - 1_100n, held: 0n })
})

test('ledger writer - a composed write forgets what payment batches remembered of its accounts, so the next payment batch locks and reads them', async () => {
  // A new instance's memory: no suspension left by earlier guesses.
  writer().known.clear()
  const account = await fundedAccount(10_000)
  assert.equal((await payReported(account, 1_000)).locked, true, 'unknown: locked and read')
  assert.equal((await payReported(account, 1_000)).locked, false, 'remembered from the last')
  assert.ok(writer().known.take([account]), 'remembered')
  await compose(credit, { accounts: [account], amount: 500n })
  assert.equal(writer().known.take([account]), undefined, 'forgotten by the composed write')
  assert.equal((await payReported(account, 1_000)).locked, true, 'locked and read again')
  assert.equal((await payReported(account, 1_000)).locked, false)
  // A composed write that fails forgets them as well.
  await assert.rejects(compose(credit, { accounts: [account, randomUUID()], amount: 1n }))
  assert.equal(writer().known.take([account]), undefined, 'forgotten by the failed write')
  assert.equal((await payReported(account, 1_000)).locked, true)
  assert.deepEqual(await money(account), { balance: 10_500n, held: 5_000n })
})

test('ledger writer - payments desk: concurrent payments on one account are answered each on its own, one available does not cover is refused alone in its batch and its key is free again, a repeated key is a duplicate naming the original tx_id', async () => {
  const account = await fundedAccount(50_000)
  const small = Array.from({ length: 59 }, () => payout(account, 800))
  const big = payout(account, 5_000)
  const answers = await Promise.all([...small, big].map((job) => outcomeOf(payDesk.submit(job))))
  const paid = answers.slice(0, -1).map((a) => (a.ok ? a.value.tx_id : a.error))
  assert.deepEqual(paid, small.map((job) => job.txId), 'each answered with its own tx_id')
  const refused = answers.at(-1)!
  assert.ok(!refused.ok && refused.error instanceof InsufficientFunds,
    'refused as insufficient_funds')
  assert.match(refused.error.message, /insufficient funds/)
  assert.deepEqual(refused.error.details.map((d) => (d as { field: string }).field), ['amount'])
  const batch = writeOf(big.clientTxId)
  assert.ok(batch.keys.length > 1, 'refused in a batch with others, which committed')
  assert.deepEqual(await money(account), { balance: 50_000n, held: 47_200n })
  let ledger = await ledgerOf(account)
  assert.equal(ledger.rows.length, 1 + 59)
  assert.ok(!ledger.rows.some((row) => row.id === big.txId), 'no row for the refused payment')
  // Its key is free again: the same clientTxId for less is taken.
  const again = payout(account, 2_000, 0, big.clientTxId)
  assert.equal((await payDesk.submit(again)).tx_id, again.txId)
  // A repeat of a taken key is a duplicate naming the original, and moves nothing (this kind
  // has no `differences`: the writer cannot tell a reuse from a repeat).
  ledger = await ledgerOf(account)
  const repeat = payDesk.submit(payout(account, 100, 0, small[3]!.clientTxId))
  const conflict = await repeat.then(() => assert.fail('a repeat is refused'), (e: unknown) => e)
  assert.ok(conflict instanceof Duplicate)
  assert.deepEqual(conflict.details.map((d) => (d as { tx_id?: string }).tx_id), [small[3]!.txId])
  assert.deepEqual(await ledgerOf(account), ledger)
  assert.equal(ledger.held, 49_200n)
})

test('ledger writer - settlements desk: of two concurrent settlements of one payout one settles, the other is answered by settled() and nothing is written twice', async () => {
  const account = await fundedAccount(10_000)
  const pending = await payDesk.submit(payout(account, 1_000, 100))
  const both = await Promise.all([settleDesk.submit(pending), settleDesk.submit(pending)])
  assert.deepEqual(both.map((s) => s.by).sort(), ['settle', 'settled'])
  assert.deepEqual(both.map((s) => s.status), ['Successful', 'Successful'])
  assert.deepEqual(await money(account), { balance: 8_900n, held: 0n })
  // The credit, the payout and its fee: a row and a posting on the account each, once.
  const settled = await ledgerOf(account)
  const statuses = settled.rows.map((row) => row.status)
  assert.deepEqual(statuses, ['Successful', 'Successful', 'Successful'])
  assert.equal(settled.rows[1]!.id, pending.tx_id)
  assert.equal(settled.postings, 3)
  // Later still: answered as it stands.
  assert.deepEqual(await settleDesk.submit(pending), { by: 'settled', status: 'Successful' })
  assert.deepEqual(await ledgerOf(account), settled)
})

test('ledger writer - settlements desk: two settlements of one Pending transaction in one batch settle it once, the second answered with the first\'s value; a kind without a hold writes its journal once', async () => {
  // The desk's batches in flight settle cents of other accounts and are held open: the twins,
  // submitted meanwhile, wait in its queue and go out together in the next batch.
  const slots = tb.config.ledgerBatchesInFlightMax
  const others: PendingCent[] = []
  for (let i = 0; i < slots; i++) others.push(await centPending())
  const cent = await centPending()
  const before = await ledgerOf(cent.account)
  let release!: () => void
  const desk = writer().settlements(confirmCent(new Promise<void>((go) => (release = go))))
  const busy = others.map((other) => desk.submit(other))
  const twins = [desk.submit(cent), desk.submit(cent)]
  assert.equal(writer().pending('test.confirm-cent'), slots + 2, 'the twins wait together')
  release()
  const [first, second] = await Promise.all(twins)
  const ofCent = reports.filter((r) => r.desk === 'test.confirm-cent')
    .filter((r) => r.accounts.includes(cent.account))
  assert.deepEqual(ofCent.map((r) => r.committed), [true], 'the twins in one batch')
  assert.ok(first?.by === 'settle', 'the first settles')
  assert.equal(second, first, 'the second is answered with the first\'s value')
  assert.deepEqual(await journalsOf(cent.tx_id), [first.journal], 'one journal')
  assert.deepEqual(await ledgerOf(cent.account), {
    ...before, balance: before.balance + 1n, postings: before.postings + 1,
    rows: [{ id: cent.tx_id, status: 'Successful' }],
  })
  assert.deepEqual((await Promise.all(busy)).map((c) => c.by), others.map(() => 'settle'))
  // Later: answered as it stands, nothing written.
  assert.deepEqual(await desk.submit(cent), { by: 'settled', status: 'Successful' })
  assert.equal((await ledgerOf(cent.account)).postings, before.postings + 1)
})

test('ledger writer - transactionsOf naming a transaction of an account the kind did not name: the write fails an assertion before it records, and writes nothing, even for a caller that commits its own row', async () => {
  const account = await fundedAccount(1_000)
  const other = await fundedAccount(5_000)
  const pending = await payDesk.submit(payout(other, 1_000))
  const before = [await ledgerOf(account), await ledgerOf(other)]
  const input = { accounts: [account], amount: 700n, transactions: [pending.tx_id] }
  const notLocked = new RegExp(`assertion failed: transaction ${pending.tx_id} is of an account`)
  const key = randomUUID()
  await db().transaction().execute(async (trx) => {
    await assert.rejects(writer().write(trx, creditReading, input), notLocked)
    await insertCallerRow(trx, key, newRowId())
  })
  assert.ok(await callerRow(key), 'the caller\'s row committed')
  assert.deepEqual([await ledgerOf(account), await ledgerOf(other)], before, 'nothing written')
  const report = reports.filter((r) => r.desk === 'test.credit-reading').at(-1)
  assert.deepEqual(report && { accounts: report.accounts, committed: report.committed }, {
    accounts: [account], committed: false,
  })
  // Named with its account, the same transaction is read under the lock.
  const named = { accounts: [account, other], transactions: [pending.tx_id] }
  assert.deepEqual((await compose(look, named)).transactions, {
    [pending.tx_id]: { status: 'Pending', hold_amount: 1_000n },
  })
})

test('ledger writer - a composed kind with debts: true is given its partners\' debts under the locks (written back with its journals); without it, undefined', async () => {
  // A partner of its own: the debt made here stays its.
  const q = await onboardPartner(tb, { approve: true })
  const account = await newAccount(q)
  await compose(credit, { accounts: [account], amount: 1_000n })
  const at = { accounts: [account] }
  assert.equal((await compose(look, at)).debts, undefined)
  assert.deepEqual((await compose(lookWithDebts, at)).debts, { [q.partnerId]: 0n })
  // 1,500 taken back from 1,000 available: 500 owed, written with the take-back's journal.
  assert.equal(await compose(takeBack, { account, amount: 1_500n }), 500n)
  assert.deepEqual((await compose(lookWithDebts, at)).debts, { [q.partnerId]: 500n })
  assert.equal((await compose(look, at)).debts, undefined)
  assert.deepEqual(await money(account), { balance: 0n, held: 0n })
})

test('ledger writer - the ledger verifies clean after every kind this file wrote', async () => {
  await assertLedgerClean(tb)
})
