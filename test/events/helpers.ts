import { after, before, beforeEach } from 'node:test'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/schema.ts'
import { appendEvents, EventDispatcher, type NewEvent, type OutboxEvent } from '../../src/events/index.ts'
import { startTestBank, type TestBank } from '../support/harness.ts'

// The outbox tests use a real test bank's database. The bank's own job runner would hand
// the tests' events to the bank's subscribers on its ticks, so it is stopped: the
// dispatchers a test builds are then the only ones at work. Each test starts with no
// pending event.

export function useEventsBank(options: { beforeStop?: () => Promise<void> } = {}): {
    tb: () => TestBank; db: () => Kysely<Database> } {
  let current: TestBank | undefined
  before(async () => {
    // In memory: nothing here restarts the bank.
    current = await startTestBank({ persistent: false })
    await current.bank.services.jobRunner.stop()
  })
  after(async () => {
    // Whatever else the file opened on the bank's database closes before the database goes.
    await options.beforeStop?.()
    await current?.stop()
  })
  beforeEach(async () => {
    await drain(current!.bank.database.db, current!)
  })
  return { tb: () => current!, db: () => current!.bank.database.db }
}

/** Marks every pending event dispatched (a dispatcher without subscribers). */
export async function drain(db: Kysely<Database>, tb: TestBank): Promise<void> {
  const dispatcher = new EventDispatcher(db)
  while ((await dispatcher.dispatchPending(10_000)) > 0) {
    // Each call takes up to 10 000 events; loop until none is left.
  }
}

let made = 0

/** An event with defaults; `n` in its data counts events made in this file. */
export function newEvent(overrides: Partial<NewEvent> = {}): NewEvent {
  made++
  return {
    type: 'payment.success',
    partner_id: '7d0c6a8e-2f4b-4c1e-9a55-0b6f1d2e3c4a',
    resource_id: `resource-${made}`,
    data: { n: made, amount: '125.50', nested: { status: 'Successful', list: [1, 'two', null] } },
    occurred_at: new Date('2026-11-23T08:00:00.123Z'),
    ...overrides,
  }
}

/** Appends the events in one committed transaction; resolves with their ids. */
export function append(db: Kysely<Database>, events: NewEvent[]): Promise<string[]> {
  return db.transaction().execute((trx) => appendEvents(trx, events))
}

/** Ids of the events that are not yet dispatched, in seq order. */
export async function pendingIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await pendingEvents(db).select('events.id').execute()
  return rows.map((row) => row.id)
}

/**
 * The events that are not yet dispatched (they have a pending row), in seq order, to select from.
 */
export function pendingEvents(db: Kysely<Database>) {
  return db.selectFrom('events').innerJoin('events_pending', 'events_pending.seq', 'events.seq')
    .orderBy('events.seq')
}

/** A subscriber that records what it is handed. */
export function recorder(): { seen: OutboxEvent[]; handler: (
    event: OutboxEvent) => Promise<void> } {
  const seen: OutboxEvent[] = []
  return { seen, handler: async (event) => void seen.push(event) }
}
