import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { ManualClock } from '../../src/clock.ts'
import type { RailPayment } from '../../src/rails/rail.ts'
import { magicRecipients, returns_batch_max, SimulatedRail } from '../../src/rails/simulated-rail.ts'
import { emptyDatabase, migrateTo, type TestDatabase } from '../support/empty-database.ts'

// The simulated rail keeps its own state: a payment it accepts for the "returned"
// recipient is recorded in `simulated_rail_returns` and handed out by collectReturns until
// the bank acknowledges it. It never reads the bank's transactions. These tests talk to
// the rail alone, on an empty database of the storage under test, migrated by the
// application's own migrations.

const clock = new ManualClock('2026-11-23T08:00:00Z')
let store: TestDatabase
let rail: SimulatedRail

before(async () => {
  store = await emptyDatabase()
  await migrateTo(store.db)
  rail = new SimulatedRail(store.db, clock)
})

after(async () => {
  await store.close()
})

function payment(overrides: Partial<RailPayment> = {}): RailPayment {
  return {
    tx_id: randomUUID(),
    payment_type: 'EFT',
    amount: 10_000n,
    account_number: '62000000017',
    branch_code: '250655',
    name: 'Recipient',
    ref: 'ref',
    ...overrides,
  }
}

const returned = { account_number: magicRecipients.returned_account_number }

/** Hands out and acknowledges whatever is waiting, so each test starts with no returns. */
async function drain(): Promise<void> {
  for (;;) {
    const waiting = await rail.collectReturns()
    if (waiting.length === 0) return
    await rail.acknowledgeReturns(waiting.map((r) => r.tx_id))
  }
}

test('rails - an RTC to the returned recipient is accepted, then returned until the bank acknowledges it', async () => {
  await drain()
  const paid = payment({ ...returned, payment_type: 'RTC' })
  const outcome = await rail.payRealTime(paid)
  assert.equal(outcome.status, 'accepted')
  const expected = [{ tx_id: paid.tx_id, reason: 'returned by the recipient bank (simulated)' }]
  assert.deepEqual(await rail.collectReturns(), expected)
  // Not acknowledged (the bank could not book it yet): handed out again.
  assert.deepEqual(await rail.collectReturns(), expected)
  await rail.acknowledgeReturns([paid.tx_id])
  assert.deepEqual(await rail.collectReturns(), [])
  await rail.acknowledgeReturns([paid.tx_id])
  assert.deepEqual(await rail.collectReturns(), [], 'a second acknowledgement changes nothing')
})

test('rails - in an EFT batch only the accepted payments to the returned recipient are returned', async () => {
  await drain()
  const toReturn = payment(returned)
  const batch = [
    toReturn,
    payment(),
    payment({ account_number: magicRecipients.failed_account_number }),
    payment({ account_number: magicRecipients.invalid_account_number }),
    // The returned account behind an unknown branch is refused, so nothing is paid to return.
    payment({ ...returned, branch_code: magicRecipients.invalid_branch_code }),
  ]
  const outcomes = await rail.submitEftBatch(batch)
  assert.deepEqual(
    batch.map((p) => outcomes.get(p.tx_id)?.status),
    ['accepted', 'accepted', 'failed', 'invalid', 'invalid'],
  )
  assert.deepEqual((await rail.collectReturns()).map((r) => r.tx_id), [toReturn.tx_id])
})

test('rails - a payment paid again (an RTC recovered by clearing) is returned once', async () => {
  await drain()
  const paid = payment({ ...returned, payment_type: 'RTC' })
  await rail.payRealTime(paid)
  clock.advance(60_000)
  await rail.payRealTime(paid)
  assert.deepEqual((await rail.collectReturns()).map((r) => r.tx_id), [paid.tx_id])
  await rail.acknowledgeReturns([paid.tx_id])
  // Paid once more after the bank acknowledged the return: still not returned twice.
  await rail.payRealTime(paid)
  assert.deepEqual(await rail.collectReturns(), [])
})

test('rails - acknowledging ids the rail never returned changes nothing', async () => {
  await drain()
  const paid = payment(returned)
  await rail.submitEftBatch([paid])
  await rail.acknowledgeReturns([randomUUID(), randomUUID()])
  await rail.acknowledgeReturns([])
  assert.deepEqual((await rail.collectReturns()).map((r) => r.tx_id), [paid.tx_id])
})

test('rails - returns are handed out oldest first, at most returns_batch_max at a time', async () => {
  await drain()
  const older = payment(returned)
  await rail.submitEftBatch([older])
  clock.advance(1_000)
  const newer = Array.from({ length: returns_batch_max }, () => payment(returned))
  await rail.submitEftBatch(newer)
  const first = await rail.collectReturns()
  assert.equal(first.length, returns_batch_max)
  assert.equal(first[0]!.tx_id, older.tx_id)
  await rail.acknowledgeReturns(first.map((r) => r.tx_id))
  const rest = await rail.collectReturns()
  assert.equal(rest.length, 1)
  const handedOut = new Set([...first, ...rest].map((r) => r.tx_id))
  assert.equal(handedOut.size, returns_batch_max + 1, 'every return is handed out, none twice')
  assert.ok(newer.every((p) => handedOut.has(p.tx_id)))
})

test('rails - the migration to the rail\'s own table carries over paid returns not yet reversed', async () => {
  const old = await emptyDatabase()
  try {
    await migrateTo(old.db, '0003_jobs_events')
    const rows = [
      { recipient: magicRecipients.returned_account_number, status: 'Successful' },
      { recipient: magicRecipients.returned_account_number, status: 'Reversed' },
      { recipient: magicRecipients.returned_account_number, status: 'Pending' },
      { recipient: '62000000017', status: 'Successful' },
    ].map((r, i) => ({ ...r, id: randomUUID(), seq: i + 1 }))
    const accountId = randomUUID()
    for (const r of rows) {
      await sql`
        insert into transactions (id, partner_id, account_id, seq, created_at, tx_type, tx_payment_type, status,
          amount, credit, debit, running_balance, recipient_account, added_by, prev_sha, tx_sha)
        values (${r.id}, ${randomUUID()}, ${accountId}, ${r.seq}, ${clock.now()}, 'transfer', 'EFT', ${r.status},
          1000, 0, 1000, 0, ${r.recipient}, 'system', '', 'sha')`.execute(old.db)
    }
    await migrateTo(old.db)
    const carried = new SimulatedRail(old.db, clock)
    assert.deepEqual(await carried.collectReturns(),
      [{ tx_id: rows[0]!.id, reason: 'returned by the recipient bank (simulated)' }])
  } finally {
    await old.close()
  }
})
