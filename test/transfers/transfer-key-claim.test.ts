import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, outcome, type Outcome } from '../support/assertions.ts'
import { accountNumberOf, balances, fund, internalBody, newAccount, snapshot, transactionsOf, transferBody } from './helpers.ts'

// How a grouped batch of payments claims its clientTxId keys (ledger/ledger-writer.ts,
// paymentBatch). A batch is first written 'claim-in-write': its keys are claimed inside the
// batch's one write statement, on the condition that every key of a request that takes money
// is new (or older than the duplicate window, and taken over) and no key of a request refused
// for funds is live. When the condition fails the batch is rolled back and written again
// 'claim-first', claiming its keys before computing holds. Each test checks the answers, the
// ledger afterwards, and which of the two writes the batch went through (seen by the ledger
// writer's probe), so that both paths are known to have run.

const eft_fee = 250
// A short duplicate window (the configured minimum is a minute), so the window test moves
// the clock minutes rather than a day.
const keyWindowMs = 10 * 60_000
// An EFT within the limit that none of these accounts can pay: refused for funds, it moves
// nothing, claims no key and answers only when its batch is let go (see behindPlugs).
const plugAmount = 400_000_000

// Two batches in flight, the second whatever its size: some tests race the same key through
// two batches of one instance. One batch per account at a time: the plugs hold an account's
// batch, and the requests behind them must wait for the next one (with two, the next
// batch of the plugged account would start beside the held one).
const tb = useTestBank({
  env: {
    BANK_TRANSFER_KEY_WINDOW_MS: String(keyWindowMs),
    BANK_LEDGER_BATCHES_IN_FLIGHT_MAX: '2',
    BANK_LEDGER_OVERLAP_JOBS_MIN: '1',
    BANK_LEDGER_ACCOUNT_BATCHES_MAX: '1',
  },
})
let p: TestPartner

/**
 * One write of a reserve batch: its mode, its keys and accounts, and whether its transaction
 * committed.
 */
interface Write {
  mode: string
  clientTxIds: string[]
  accounts: string[]
  result: 'committed' | 'rolled back'
}

const writes: Write[] = []
/** While set, a batch holding one of these keys waits for `open` before it is written. */
let gate: { keys: Set<string>; open: Promise<void>; arrived: number } | undefined
/** Where `writes` stood when the last behindPlugs began. */
let plugStart = 0

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  tb.bank.services.ledgerWriter.probe({
    written: (write) => {
      if (write.desk !== 'reserve') return
      const result = write.committed ? 'committed' : 'rolled back'
      writes.push({ mode: write.mode, clientTxIds: write.keys.map((k) => k.client_tx_id),
        accounts: write.accounts, result })
    },
    beforeBatch: async (desk, keys) => {
      const held = gate
      if (desk === 'reserve' && held && keys.some((k) => held.keys.has(k.client_tx_id))) {
        held.arrived++
        await held.open
      }
    },
  })
})

/** Payments waiting or being written at the ledger writer's reserve desk. */
const reserving = () => tb.bank.services.ledgerWriter.pending('reserve')

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/**
 * Sends `requests` so that those for one account share one batch: first a plug on each of
 * `accounts` (at most two, the batches in flight at once), each held in its own batch before
 * it is written; then the requests, which queue behind the plugs because their accounts are
 * being written; and once all are queued, the plugs are let go. Each account's requests then
 * go together in the batch after its plug. The plugs are refused for funds and move nothing.
 */
async function behindPlugs<T>(accounts: string[],
    requests: Array<() => Promise<T>>): Promise<Outcome<T>[]> {
  assert.ok(accounts.length >= 1 && accounts.length <= 2)
  assert.equal(reserving(), 0, 'no payment is being reserved before the plugs')
  plugStart = writes.length
  const plugs =
    accounts.map((account) => transferBody(account, { amount: plugAmount, ref: 'plug' }))
  let open!: () => void
  const held = { keys: new Set(plugs.map((b) => b.clientTxId)),
    open: new Promise<void>((resolve) => (open = resolve)), arrived: 0 }
  gate = held
  try {
    const plugged = plugs.map((body) => expectApiError(p.client.accounts.transfer(body), 400,
      'amount'))
    await until(() => held.arrived === plugs.length, 'the plugs to reach their batches')
    const sent = requests.map((request) => outcome(request()))
    await until(() => reserving() === plugs.length + requests.length,
      'the requests to queue behind the plugs')
    open()
    await Promise.all(plugged)
    return await Promise.all(sent)
  } finally {
    gate = undefined
    open()
  }
}

/** The writes of the batches that held this key, as `mode: result`, in order. */
function pathOf(clientTxId: string, accountId?: string): string[] {
  return writes
    .filter((w) => w.clientTxIds.includes(clientTxId)
      && (accountId === undefined || w.accounts.includes(accountId)))
    .map((w) => `${w.mode}: ${w.result}`)
}

/**
 * Asserts that the last behindPlugs sent these keys in one batch (written once, or twice), alone.
 */
function assertOneBatch(clientTxIds: string[]): void {
  const batches = writes.slice(plugStart).filter(
    (w) => w.clientTxIds.some((id) => clientTxIds.includes(id)))
  assert.ok(batches.length > 0)
  for (const w of batches) {
    assert.deepEqual([...w.clientTxIds].sort(), [...clientTxIds].sort(),
      'the requests shared one batch')
  }
}

const inWrite = 'claim-in-write: committed'
const rolledBackThenClaimFirst = ['claim-in-write: rolled back', 'claim-first: committed']

async function keyRow(clientTxId: string) {
  return tb.bank.database.db
    .selectFrom('transfer_keys')
    .select(['tx_id', 'created_at'])
    .where('partner_id', '=', p.partnerId)
    .where('client_tx_id', '=', clientTxId)
    .executeTakeFirst()
}

/**
 * A 409 naming the original: `duplicate` for the same request, or with `differing` (another
 * request under the key) `idempotency_key_reused` naming exactly those fields.
 */
async function assertDuplicate(call: Promise<unknown>, originalTxId: string,
    differing?: string[]): Promise<void> {
  const error = await expectApiError(call, 409, differing?.[0] ?? 'clientTxId')
  assert.equal(error.type, differing ? 'idempotency_key_reused' : 'duplicate', error.message)
  assert.deepEqual(error.details.map((d) => d.field), differing ?? ['clientTxId'])
  for (const detail of error.details) assert.equal(detail.tx_id, originalTxId)
}

function assertDuplicateOutcome(o: Outcome<unknown> | undefined,
    originalTxId: string, differing?: string[]): Promise<void> {
  assert.ok(o, 'an outcome')
  return assertDuplicate(o.ok ? Promise.resolve(o.value) : Promise.reject(o.error), originalTxId,
    differing)
}

async function assertInsufficientFunds(call: Promise<unknown>): Promise<void> {
  const error = await expectApiError(call, 400, 'amount')
  assert.equal(error.type, 'insufficient_funds')
  assert.match(error.message, /insufficient funds/)
}

function assertInsufficientFundsOutcome(o: Outcome<unknown> | undefined): Promise<void> {
  assert.ok(o, 'an outcome')
  return assertInsufficientFunds(o.ok ? Promise.resolve(o.value) : Promise.reject(o.error))
}

function taken<T>(o: Outcome<T> | undefined): T {
  assert.ok(o, 'an outcome')
  if (!o.ok) assert.fail(
    `expected the request to be taken, got ${o.error.code} ${o.error.type}: ${o.error.message}`)
  return o.value
}

/**
 * The account's transaction rows counted by type (deposit, transfer, fee). An EFT's fee row
 * is written when it settles, and none of these EFTs is cleared: their fees show in their
 * holds and on their own rows (assertFeesHeld), not as rows of their own.
 */
async function rowCounts(accountId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const row of await transactionsOf(p, accountId)) counts[row.tx_type] =
    (counts[row.tx_type] ?? 0) + 1
  return counts
}

/**
 * Asserts that each EFT of the account is Pending, carrying its fee on its own row, and that no fee
 * row is written yet.
 */
async function assertFeesHeld(accountId: string): Promise<void> {
  const rows = await transactionsOf(p, accountId)
  assert.deepEqual(rows.filter((r) => r.tx_type === 'fee').map((r) => r.parent_tx_id), [],
    'no fee row before clearing')
  const efts = rows.filter((r) => r.tx_type === 'transfer' && r.tx_payment_type === 'EFT')
  assert.ok(efts.length > 0)
  for (const eft of efts) {
    assert.equal(eft.status, 'Pending', `EFT ${eft.tx_id}`)
    assert.equal(eft.fee, String(eft_fee), `EFT ${eft.tx_id} carries its fee`)
  }
}

/** The transfer rows' ids of an account, sorted. */
async function transferIds(accountId: string): Promise<string[]> {
  return (await transactionsOf(p, accountId)).filter((r) => r.tx_type === 'transfer').map(
    (r) => r.tx_id).sort()
}

test('key claim - a repeat of a committed request in a later batch is 409 naming the original, and moves nothing', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 10_000 })
  const first = await p.client.accounts.transfer(body)
  assert.equal(first.status, 'Pending')
  assert.deepEqual(pathOf(body.clientTxId), [inWrite], 'a new key is claimed in the write')
  const before = await snapshot(p, account)

  // The same request, and the same key with another amount: both 409 with the original tx_id
  // (a duplicate, and a key reused naming the amount).
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  await assertDuplicate(p.client.accounts.transfer({ ...body, amount: 20_000 }), first.tx_id,
    ['amount'])
  // Each repeat's batch found the key taken in its write, was rolled back, and claimed first.
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, ...rolledBackThenClaimFirst,
    ...rolledBackThenClaimFirst])

  assert.deepEqual(await snapshot(p, account), before)
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 10_000 - eft_fee) })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 1 })
  await assertFeesHeld(account)
  assert.equal((await keyRow(body.clientTxId))?.tx_id, first.tx_id)
  await assertLedgerClean(tb)
})

test('key claim - one batch of new keys and a repeat: the new ones are taken, the repeat is 409 and holds nothing', async () => {
  const account = await newAccount(p)
  const payee = await newAccount(p)
  const payeeNumber = await accountNumberOf(p, payee)
  await fund(tb, account, 100_000)
  const earlier = transferBody(account, { amount: 10_000 })
  const original = await p.client.accounts.transfer(earlier)

  // Three new payments (two EFTs, one internal: both kinds share the keys) and a repeat.
  const first = transferBody(account, { amount: 1_000 })
  const second = transferBody(account, { amount: 2_000 })
  const repeat = { ...earlier, amount: 3_000 }
  const internalPayment = internalBody(account, payeeNumber, { amount: 4_000 })
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer(first),
    () => p.client.accounts.transfer(second),
    () => p.client.accounts.transfer(repeat),
    () => p.client.accounts.transferInternal(internalPayment),
  ])
  const bodies = [first, second, repeat, internalPayment]
  assertOneBatch(bodies.map((b) => b.clientTxId))
  const eft1 = taken(outcomes[0])
  const eft2 = taken(outcomes[1])
  await assertDuplicateOutcome(outcomes[2], original.tx_id, ['amount'])
  const internal = taken(outcomes[3])
  assert.equal(eft1.status, 'Pending')
  assert.equal(eft2.status, 'Pending')
  assert.equal(internal.status, 'Successful')
  // The repeat made the write's condition fail: the whole batch was written again, claiming first.
  for (const body of [first, second, internalPayment]) assert.deepEqual(pathOf(body.clientTxId),
    rolledBackThenClaimFirst)
  assert.deepEqual(pathOf(earlier.clientTxId), [inWrite, ...rolledBackThenClaimFirst])

  // Held: the earlier EFT and the two new ones with their fees, nothing for the repeat; the
  // internal payment (no fee by default) left the balance.
  const held = 10_000 + eft_fee + 1_000 + eft_fee + 2_000 + eft_fee
  assert.deepEqual(await balances(p, account), { balance: String(100_000 - 4_000),
    available: String(100_000 - 4_000 - held) })
  assert.deepEqual(await balances(p, payee), { balance: '4000', available: '4000' })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 4 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [original.tx_id, eft1.tx_id, eft2.tx_id,
    internal.tx_id].sort())
  assert.deepEqual(await rowCounts(payee), { transfer: 1 })
  // Each new key names its own payment; the repeated one still names the original.
  assert.equal((await keyRow(first.clientTxId))?.tx_id, eft1.tx_id)
  assert.equal((await keyRow(second.clientTxId))?.tx_id, eft2.tx_id)
  assert.equal((await keyRow(earlier.clientTxId))?.tx_id, original.tx_id)
  assert.equal((await keyRow(internalPayment.clientTxId))?.tx_id, internal.tx_id)
  await assertLedgerClean(tb)
})

test('key claim - a repeat that is also short of funds is 409 duplicate, not insufficient funds', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000 + eft_fee)
  const body = transferBody(account, { amount: 10_000 })
  const first = await p.client.accounts.transfer(body)
  assert.deepEqual(await balances(p, account), { balance: String(10_000 + eft_fee),
    available: '0' })

  // Alone in its batch: refused for funds in memory, but its key is live, so the write's
  // condition fails and the batch claiming first finds the duplicate.
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, ...rolledBackThenClaimFirst])

  // In one batch with a new request that is short of funds too: the repeat is 409, the new
  // one 400, and the new one's key (claimed first, then released) stays free.
  const fresh = transferBody(account, { amount: 1_000 })
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer({ ...body, amount: 5_000 }),
    () => p.client.accounts.transfer(fresh),
  ])
  assertOneBatch([body.clientTxId, fresh.clientTxId])
  await assertDuplicateOutcome(outcomes[0], first.tx_id, ['amount'])
  await assertInsufficientFundsOutcome(outcomes[1])
  assert.deepEqual(pathOf(fresh.clientTxId), rolledBackThenClaimFirst)
  assert.equal(await keyRow(fresh.clientTxId), undefined, 'a key refused for funds is released')
  assert.equal((await keyRow(body.clientTxId))?.tx_id, first.tx_id)

  assert.deepEqual(await balances(p, account), { balance: String(10_000 + eft_fee),
    available: '0' })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 1 })
  await assertFeesHeld(account)
  await assertLedgerClean(tb)

  // Funded, the released key is taken.
  await fund(tb, account, 1_000 + eft_fee)
  const later = await p.client.accounts.transfer(fresh)
  assert.equal((await keyRow(fresh.clientTxId))?.tx_id, later.tx_id)
  assert.deepEqual(await balances(p, account), { balance: String(11_000 + 2 * eft_fee),
    available: '0' })
})

test('key claim - a request refused for funds leaves its key free: funded, the same clientTxId succeeds', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 500)
  const body = transferBody(account, { amount: 1_000 })
  const before = await snapshot(p, account)
  await assertInsufficientFunds(p.client.accounts.transfer(body))
  // Refused, with no live key: the write's condition held, nothing was claimed.
  assert.deepEqual(pathOf(body.clientTxId), [inWrite])
  assert.equal(await keyRow(body.clientTxId), undefined)
  assert.deepEqual(await snapshot(p, account), before)
  assert.deepEqual(await rowCounts(account), { deposit: 1 })

  await fund(tb, account, 1_000 + eft_fee - 500)
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, inWrite])
  assert.equal((await keyRow(body.clientTxId))?.tx_id, sent.tx_id)
  assert.deepEqual(await balances(p, account), { balance: String(1_000 + eft_fee), available: '0' })
  assert.deepEqual(await rowCounts(account), { deposit: 2, transfer: 1 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [sent.tx_id])
  // And now it is a key that moved money: a repeat is a duplicate.
  await fund(tb, account, 10_000)
  await assertDuplicate(p.client.accounts.transfer(body), sent.tx_id)
  await assertLedgerClean(tb)
})

test('key claim - in one batch a request refused for funds and a new one: 400 and taken, and the refused key is reusable', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 10_000)
  const refused = transferBody(account, { amount: 50_000 })
  const fresh = transferBody(account, { amount: 2_000 })
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer(refused),
    () => p.client.accounts.transfer(fresh),
  ])
  assertOneBatch([refused.clientTxId, fresh.clientTxId])
  await assertInsufficientFundsOutcome(outcomes[0])
  const sent = taken(outcomes[1])
  assert.equal(sent.status, 'Pending')
  // Nothing in the batch was a repeat: written once, claiming in the write.
  assert.deepEqual(pathOf(refused.clientTxId), [inWrite])
  assert.deepEqual(pathOf(fresh.clientTxId), [inWrite])
  assert.equal(await keyRow(refused.clientTxId), undefined)
  assert.equal((await keyRow(fresh.clientTxId))?.tx_id, sent.tx_id)
  assert.deepEqual(await balances(p, account),
    { balance: '10000', available: String(10_000 - 2_000 - eft_fee) })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 1 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [sent.tx_id])
  await assertLedgerClean(tb)

  await fund(tb, account, 50_000)
  const later = await p.client.accounts.transfer(refused)
  assert.equal(later.status, 'Pending')
  assert.equal((await keyRow(refused.clientTxId))?.tx_id, later.tx_id)
  assert.deepEqual(await balances(p, account), {
    balance: '60000',
    available: String(60_000 - 2_000 - eft_fee - 50_000 - eft_fee),
  })
  assert.deepEqual(await rowCounts(account), { deposit: 2, transfer: 2 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [sent.tx_id, later.tx_id].sort())
  await assertLedgerClean(tb)
})

test('key claim - a key older than the duplicate window is taken over (the write finds it there, the batch claims first) and names the new payment', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 1_000 })
  const first = await p.client.accounts.transfer(body)
  const usedAt = (await keyRow(body.clientTxId))?.created_at
  assert.ok(usedAt)

  // At exactly the window's length the key still counts.
  tb.clock.advance(keyWindowMs)
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, ...rolledBackThenClaimFirst])
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 1_000 - eft_fee) })

  // A millisecond later it is taken over, in a batch with a new key. The write's plain insert
  // finds the old row, so the batch is written again claiming its keys first, which takes the
  // expired key over (a rare case: a partner reusing a clientTxId after the window).
  tb.clock.advance(1)
  const fresh = transferBody(account, { amount: 2_000 })
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer(body),
    () => p.client.accounts.transfer(fresh),
  ])
  assertOneBatch([body.clientTxId, fresh.clientTxId])
  const again = taken(outcomes[0])
  const other = taken(outcomes[1])
  assert.notEqual(again.tx_id, first.tx_id)
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, ...rolledBackThenClaimFirst,
    ...rolledBackThenClaimFirst])
  const row = await keyRow(body.clientTxId)
  assert.equal(row?.tx_id, again.tx_id)
  assert.equal(new Date(row!.created_at).getTime(), new Date(usedAt).getTime() + keyWindowMs + 1,
    'the new use starts a new window')
  assert.equal((await keyRow(fresh.clientTxId))?.tx_id, other.tx_id)

  assert.deepEqual(await balances(p, account), {
    balance: '100000',
    available: String(100_000 - (1_000 + eft_fee) * 2 - (2_000 + eft_fee)),
  })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 3 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [first.tx_id, again.tx_id, other.tx_id].sort())
  // A repeat now names the new payment.
  await assertDuplicate(p.client.accounts.transfer(body), again.tx_id)
  await assertLedgerClean(tb)
})

test('key claim - an expired key of a request refused for funds is 400, not a duplicate, and stays usable', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 1_000 + eft_fee)
  const body = transferBody(account, { amount: 1_000 })
  const first = await p.client.accounts.transfer(body)
  tb.clock.advance(keyWindowMs + 1)
  // Nothing left to pay with: refused for funds, and the expired key does not stop the write.
  await assertInsufficientFunds(p.client.accounts.transfer(body))
  assert.deepEqual(pathOf(body.clientTxId), [inWrite, inWrite])
  assert.deepEqual(await balances(p, account), { balance: String(1_000 + eft_fee), available: '0' })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 1 })
  await assertFeesHeld(account)

  await fund(tb, account, 1_000 + eft_fee)
  const again = await p.client.accounts.transfer(body)
  assert.notEqual(again.tx_id, first.tx_id)
  assert.equal((await keyRow(body.clientTxId))?.tx_id, again.tx_id)
  assert.deepEqual(await balances(p, account), { balance: String(2 * (1_000 + eft_fee)),
    available: '0' })
  assert.deepEqual(await transferIds(account), [first.tx_id, again.tx_id].sort())
  await assertLedgerClean(tb)
})

test('key claim - the same new clientTxId twice in one batch: one is taken, the other is 409 naming it', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const clientTxId = randomUUID()
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer(transferBody(account, { clientTxId, amount: 1_000 })),
    () => p.client.accounts.transfer(transferBody(account, { clientTxId, amount: 1_000 })),
  ])
  assertOneBatch([clientTxId, clientTxId])
  const accepted = outcomes.filter((o) => o.ok)
  assert.equal(accepted.length, 1, JSON.stringify(outcomes))
  const winner = taken(accepted[0])
  await assertDuplicateOutcome(outcomes.find((o) => !o.ok), winner.tx_id)
  // The repeat within the batch waits for the first's result: no second write.
  assert.deepEqual(pathOf(clientTxId), [inWrite])
  assert.equal((await keyRow(clientTxId))?.tx_id, winner.tx_id)
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 1_000 - eft_fee) })
  assert.deepEqual(await rowCounts(account), { deposit: 1, transfer: 1 })
  await assertFeesHeld(account)
  assert.deepEqual(await transferIds(account), [winner.tx_id])
  await assertLedgerClean(tb)
})

test('key claim - the same new clientTxId in two batches at once (two accounts): money moves once', async () => {
  const a = await newAccount(p)
  const b = await newAccount(p)
  await fund(tb, a, 100_000)
  await fund(tb, b, 100_000)
  const won = { a: 0, b: 0 }
  const rounds = 4
  for (let round = 0; round < rounds; round++) {
    const clientTxId = randomUUID()
    const outcomes = await behindPlugs([a, b], [
      () => p.client.accounts.transfer(transferBody(a, { clientTxId, amount: 1_000 })),
      () => p.client.accounts.transfer(transferBody(b, { clientTxId, amount: 1_000 })),
    ])
    const answers = outcomes.map((o) => (o.ok ? o.value.tx_id : o.error.message))
    const describe = `round ${round}: ${JSON.stringify(answers)}`
    assert.equal(outcomes.filter((o) => o.ok).length, 1, describe)
    const winnerIndex = outcomes.findIndex((o) => o.ok)
    const winner = taken(outcomes[winnerIndex])
    const [winnerAccount, loserAccount] = winnerIndex === 0 ? [a, b] : [b, a]
    won[winnerIndex === 0 ? 'a' : 'b']++
    // The loser named the other account: the same key for another request.
    await assertDuplicateOutcome(outcomes[1 - winnerIndex], winner.tx_id, ['account_id'])
    // Separate batches: the winner's claimed in its write; the loser's found the key taken
    // (committed, or waited for), was rolled back, and claimed first.
    assert.deepEqual(pathOf(clientTxId, winnerAccount), [inWrite], describe)
    assert.deepEqual(pathOf(clientTxId, loserAccount), rolledBackThenClaimFirst, describe)
    assert.equal(writes.filter((w) => w.clientTxIds.includes(clientTxId)).every(
      (w) => w.clientTxIds.length === 1), true, describe)
    assert.equal((await keyRow(clientTxId))?.tx_id, winner.tx_id)
    assert.ok((await transferIds(winnerAccount)).includes(winner.tx_id))
  }
  // Money moved once per round, on whichever account won it.
  for (const [account, n] of [[a, won.a], [b, won.b]] as const) {
    assert.deepEqual(await balances(p, account),
      { balance: '100000', available: String(100_000 - n * (1_000 + eft_fee)) })
    const counts = await rowCounts(account)
    assert.deepEqual(counts, n > 0 ? { deposit: 1, transfer: n } : { deposit: 1 })
    if (n > 0) await assertFeesHeld(account)
  }
  assert.equal(won.a + won.b, rounds)
  await assertLedgerClean(tb)
})

/**
 * An account whose key `body` was used for its whole balance more than the window ago, and
 * which has nothing left to pay with; `live` is a key used within the window.
 */
async function expiredAndBroke() {
  const account = await newAccount(p)
  await fund(tb, account, 1_000 + eft_fee)
  const body = transferBody(account, { amount: 1_000 })
  const expired = await p.client.accounts.transfer(body)
  tb.clock.advance(keyWindowMs + 1)
  await fund(tb, account, 100 + eft_fee)
  const live = transferBody(account, { amount: 100 })
  const liveTx = await p.client.accounts.transfer(live)
  assert.deepEqual(await balances(p, account), { balance: String(1_100 + 2 * eft_fee),
    available: '0' })
  return { account, body, expired, live, liveTx }
}

test('key claim - an expired key sent twice in a batch that claims first, refused for funds: both 400', async () => {
  const { account, body, live, liveTx } = await expiredAndBroke()
  // The live repeat makes the batch claim first: the expired key is taken over by the first
  // request, released when it is refused for funds, and the second is answered as the first.
  const outcomes = await behindPlugs([account], [
    () => p.client.accounts.transfer(body),
    () => p.client.accounts.transfer(body),
    () => p.client.accounts.transfer(live),
  ])
  assertOneBatch([body.clientTxId, body.clientTxId, live.clientTxId])
  assert.deepEqual(pathOf(live.clientTxId).slice(1), rolledBackThenClaimFirst)
  await assertInsufficientFundsOutcome(outcomes[0])
  await assertInsufficientFundsOutcome(outcomes[1])
  await assertDuplicateOutcome(outcomes[2], liveTx.tx_id)
  assert.equal(await keyRow(body.clientTxId), undefined)
  assert.deepEqual(await rowCounts(account), { deposit: 2, transfer: 2 })
  await assertFeesHeld(account)
  await assertLedgerClean(tb)
})

test(
  'key claim - an expired key sent twice in a batch that claims in its write, refused for funds: ' +
    'both 400',
  async () => {
    const { account, body } = await expiredAndBroke()
    const outcomes = await behindPlugs([account], [() => p.client.accounts.transfer(body),
      () => p.client.accounts.transfer(body)])
    assertOneBatch([body.clientTxId, body.clientTxId])
    assert.deepEqual(pathOf(body.clientTxId).slice(1), [inWrite])
    await assertInsufficientFundsOutcome(outcomes[0])
    await assertInsufficientFundsOutcome(outcomes[1])
    assert.deepEqual(await rowCounts(account), { deposit: 2, transfer: 2 })
    await assertFeesHeld(account)
    await assertLedgerClean(tb)
  },
)
