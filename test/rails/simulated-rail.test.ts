import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { ManualClock } from '../../src/clock.ts'
import { magicRecipients } from '../../src/rails/clearing-house/magic-recipients.ts'
import { returns_batch_max, SimulatedRail } from '../../src/rails/simulated-rail.ts'
import { emptyDatabase, migrateTo, type TestDatabase } from '../support/empty-database.ts'

// What is left of the simulated rail of earlier versions: the returns it recorded in
// `simulated_rail_returns` are handed out by collectReturns until the bank acknowledges
// them (a bank upgraded with some waiting books them at its clearing runs). Nothing records
// new ones; these tests write the rows as that version did. They talk to the rail alone, on
// an empty database of the storage under test, migrated by the application's own
// migrations.

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

/** A return as the simulated rail of earlier versions recorded it. */
async function recorded(): Promise<{ tx_id: string }> {
  const txId = randomUUID()
  await store.db.insertInto('simulated_rail_returns').values({ tx_id: txId,
    reason: 'returned by the recipient bank (simulated)', created_at: clock.now() }).execute()
  return { tx_id: txId }
}

/** Hands out and acknowledges whatever is waiting, so each test starts with no returns. */
async function drain(): Promise<void> {
  for (;;) {
    const waiting = await rail.collectReturns()
    if (waiting.length === 0) return
    await rail.acknowledgeReturns(waiting.map((r) => r.tx_id))
  }
}

test('rails - a recorded return is handed out until the bank acknowledges it', async () => {
  await drain()
  const paid = await recorded()
  const expected = [{ tx_id: paid.tx_id, reason: 'returned by the recipient bank (simulated)' }]
  assert.deepEqual(await rail.collectReturns(), expected)
  // Not acknowledged (the bank could not book it yet): handed out again.
  assert.deepEqual(await rail.collectReturns(), expected)
  await rail.acknowledgeReturns([paid.tx_id])
  assert.deepEqual(await rail.collectReturns(), [])
  await rail.acknowledgeReturns([paid.tx_id])
  assert.deepEqual(await rail.collectReturns(), [], 'a second acknowledgement changes nothing')
})

test('rails - acknowledging ids the rail never returned changes nothing', async () => {
  await drain()
  const paid = await recorded()
  await rail.acknowledgeReturns([randomUUID(), randomUUID()])
  await rail.acknowledgeReturns([])
  assert.deepEqual((await rail.collectReturns()).map((r) => r.tx_id), [paid.tx_id])
})

test('rails - returns are handed out oldest first, at most returns_batch_max at a time', async () => {
  await drain()
  const older = await recorded()
  clock.advance(1_000)
  const newer = []
  for (let i = 0; i < returns_batch_max; i++) newer.push(await recorded())
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
