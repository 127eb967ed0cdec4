import assert from 'node:assert/strict'
import { before, beforeEach, test } from 'node:test'
import { KnownAccounts } from '../../src/ledger/known-accounts.ts'
import { known_accounts_default } from '../../src/ledger/ledger-limits.ts'
import { LedgerService } from '../../src/ledger/ledger-service.ts'
import { LedgerWriter } from '../../src/ledger/ledger-writer.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { accountNumberOf, balances, fund, internalBody, newAccount, transactionsOf, transferBody } from './helpers.ts'

// Reserve batches that start from what the instance remembers of their accounts
// (known-accounts.ts, LedgerBatch.fromKnown) instead of locking and reading them first.
// The memory is a guess the write checks: these tests make it wrong in each way it can be
// (another instance's deposit, a remembered balance that is simply false) and check that
// the batch is refused whole, written again under lock, and answers as the database says.

const eft_fee = 250
const tb = useTestBank()
let p: TestPartner

/**
 * Each payment write: its mode, its keys, whether it committed, as the ledger writer's probe
 * reports it.
 */
const writes: Array<{ mode: string; keys: string[]; result: 'committed' | 'rolled back' }> = []
/** Accounts read under lock (not from memory) by payment writes, in order. */
let locked: string[] = []

const writer = () => tb.bank.services.ledgerWriter

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  writer().probe({
    written: (write) => {
      if (write.desk !== 'reserve') return
      writes.push({ mode: write.mode, keys: write.keys.map((k) => k.client_tx_id),
        result: write.committed ? 'committed' : 'rolled back' })
      if (write.locked) locked.push(...write.accounts)
    },
  })
})

// Each test starts with an empty memory shared by the bank's payments and deposits, as a new
// instance has: the stale guesses some tests make on purpose would otherwise add up to the
// suspension of all guessing (5 among 100) and reach the tests after them.
beforeEach(() => writer().known.clear())

function pathOf(clientTxId: string): string[] {
  return writes.filter((w) => w.keys.includes(clientTxId)).map((w) => `${w.mode}: ${w.result}`)
}

/** Sends one transfer and tells whether its batch locked and read the account first. */
async function pay(account: string, amount: number) {
  locked = []
  const body = transferBody(account, { amount })
  const sent = await p.client.accounts.transfer(body)
  return { body, sent, readUnderLock: locked.includes(account) }
}

/** A new account funded with 10,000 that has paid 1,000: its state is remembered. */
async function rememberedAccount(): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  await pay(account, 1_000)
  return account
}

/** A deposit made by another instance of the bank (same database, its own memory). */
async function depositByAnotherInstance(account: string, amount: number): Promise<void> {
  const db = tb.bank.database.db
  const known = new KnownAccounts(known_accounts_default)
  const settings = { batch_jobs_max: 1, batches_in_flight_max: 1, queue_jobs_max: 1,
    key_window_ms: 1, known }
  const writer = new LedgerWriter(db, tb.clock, settings)
  await new LedgerService(db, writer).deposit(account, BigInt(amount), 'another instance', 'test')
}

test('known accounts - a payment from an account the last batch wrote skips the lock-and-read and still pays exactly', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const first = await pay(account, 1_000)
  assert.equal(first.readUnderLock, true, 'a deposit made the account unknown: read under lock')
  const second = await pay(account, 2_000)
  assert.equal(second.readUnderLock, false, 'the account as the last batch left it was remembered')
  assert.deepEqual(pathOf(second.body.clientTxId), ['claim-in-write: committed'])
  assert.equal(second.sent.status, 'Pending')
  const third = await pay(account, 3_000)
  assert.equal(third.readUnderLock, false)
  assert.deepEqual(await balances(p, account),
    { balance: '10000', available: String(10_000 - 6_000 - 3 * eft_fee) })
  // Each row continues the hash chain of the one before: verify walks every account's chain.
  // The deposit and the three Pending EFTs, each carrying its fee (held with it above); an
  // EFT's fee row is written when it settles, so there is none yet.
  const rows = await transactionsOf(p, account)
  assert.deepEqual(rows.map((r) => r.tx_type), ['transfer', 'transfer', 'transfer', 'deposit'])
  assert.deepEqual(rows.map((r) => r.tx_id).slice(0, 3), [third.sent.tx_id, second.sent.tx_id,
    first.sent.tx_id])
  for (const transfer of rows.slice(0, 3)) {
    assert.equal(transfer.status, 'Pending')
    assert.equal(transfer.fee, String(eft_fee))
  }
  await assertLedgerClean(tb)
})

test('known accounts - another instance deposits behind the memory: the guessed batch is refused whole and written again under lock', async () => {
  const account = await rememberedAccount()
  await depositByAnotherInstance(account, 5_000)
  // By the stale memory only 8,750 is available; by the database 13,750.
  locked = []
  const body = transferBody(account, { amount: 12_000 })
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(pathOf(body.clientTxId), ['claim-in-write: rolled back',
    'claim-in-write: committed'])
  assert.ok(locked.includes(account), 'the second write read the account under lock')
  assert.deepEqual(await balances(p, account),
    { balance: '15000', available: String(15_000 - 1_000 - 12_000 - 2 * eft_fee) })
  await assertLedgerClean(tb)
})

test('known accounts - a remembered balance larger than the real one never pays: refused for funds, nothing moves', async () => {
  const account = await rememberedAccount()
  const known = writer().known
  const remembered = known.take([account])!.get(account)!
  // The memory claims a million more than the account holds.
  known.remember([{ ...remembered, balance: remembered.balance + 1_000_000n }])
  const before = await balances(p, account)
  const rows = (await transactionsOf(p, account)).length
  const body = transferBody(account, { amount: 50_000 })
  await expectApiError(p.client.accounts.transfer(body), 400, 'amount')
  assert.deepEqual(pathOf(body.clientTxId), ['claim-in-write: rolled back',
    'claim-in-write: committed'])
  assert.deepEqual(await balances(p, account), before)
  assert.equal((await transactionsOf(p, account)).length, rows)
  // And the key was not claimed: funded, the same request pays.
  await fund(tb, account, 50_000)
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending')
  await assertLedgerClean(tb)
})

test('known accounts - a remembered chain head that is not the real one is refused: no row is written on a wrong prev_sha', async () => {
  const account = await rememberedAccount()
  const known = writer().known
  const remembered = known.take([account])!.get(account)!
  known.remember([{ ...remembered, last_sha: '0'.repeat(64) }])
  const body = transferBody(account, { amount: 1_000 })
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(pathOf(body.clientTxId), ['claim-in-write: rolled back',
    'claim-in-write: committed'])
  await assertLedgerClean(tb)
})

test('known accounts - an account found stale is read under lock for a while, not guessed again at once', async () => {
  const account = await rememberedAccount()
  await depositByAnotherInstance(account, 1_000)
  const stale = await pay(account, 1_000)
  assert.deepEqual(pathOf(stale.body.clientTxId), ['claim-in-write: rolled back',
    'claim-in-write: committed'])
  // The next batches read it under lock (no second refused write), though the last one was
  // remembered.
  const next = await pay(account, 1_000)
  assert.equal(next.readUnderLock, true)
  assert.deepEqual(pathOf(next.body.clientTxId), ['claim-in-write: committed'])
  assert.deepEqual(await balances(p, account),
    { balance: '11000', available: String(11_000 - 3_000 - 3 * eft_fee) })
  await assertLedgerClean(tb)
})

test('known accounts - a stale guess whose batch also repeats a key: written under lock, then claiming first, answered 409', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const used = (await pay(account, 1_000)).body.clientTxId
  await depositByAnotherInstance(account, 1_000)
  const repeat = transferBody(account, { amount: 1_000, clientTxId: used })
  const before = await balances(p, account)
  await expectApiError(p.client.accounts.transfer(repeat), 409, 'clientTxId')
  assert.deepEqual(pathOf(used).slice(1), ['claim-in-write: rolled back',
    'claim-in-write: rolled back', 'claim-first: committed'])
  assert.deepEqual(await balances(p, account), before)
  await assertLedgerClean(tb)
})

test('known accounts - a batch with an internal payment locks its accounts first (partner debts are locked after accounts on every path)', async () => {
  const account = await rememberedAccount()
  const payee = await rememberedAccount()
  locked = []
  const sent = await p.client.accounts.transferInternal(
    internalBody(account, await accountNumberOf(p, payee), { amount: 500 }))
  assert.equal(sent.status, 'Successful')
  assert.ok(locked.includes(account) && locked.includes(payee),
    'read under lock, though both accounts were remembered')
  // And the batch after it, an EFT from the same account, starts from what that batch left.
  const next = await pay(account, 1_000)
  assert.equal(next.readUnderLock, false)
  assert.deepEqual(await balances(p, payee),
    { balance: '10500', available: String(10_500 - 1_000 - eft_fee) })
  await assertLedgerClean(tb)
})
