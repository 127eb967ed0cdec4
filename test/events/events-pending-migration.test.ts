import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { EventDispatcher } from '../../src/events/index.ts'
import { emptyDatabase, migrateTo } from '../support/empty-database.ts'

// The migration that gave pending events rows of their own (events_pending) carries over
// the events still waiting for a dispatch, and only those: after it, the dispatcher hands
// over exactly the events that were undispatched before it, in seq order.

test('events - the migration to pending rows carries over the undispatched events, in order, and no dispatched one', async () => {
  const old = await emptyDatabase()
  try {
    await migrateTo(old.db, '0016_refuse')
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    for (const [i, id] of ids.entries()) {
      await sql`
        insert into events (id, type, partner_id, resource_id, data, occurred_at, dispatched_at)
        values (${id}, 'bulk_payment.completed', ${randomUUID()}, ${`batch-${i}`}, '{}'::jsonb, now(),
                ${i % 2 === 0 ? new Date('2026-11-23T08:00:00Z') : null})`.execute(old.db)
    }
    await migrateTo(old.db)
    const pending = await old.db.selectFrom('events_pending').select('seq').orderBy('seq').execute()
    assert.equal(pending.length, 2)
    const dispatcher = new EventDispatcher(old.db)
    const seen: string[] = []
    dispatcher.subscribe('*', async (event) => void seen.push(event.id))
    assert.equal(await dispatcher.dispatchPending(), 2)
    assert.deepEqual(seen, [ids[1], ids[3]])
    assert.equal(await dispatcher.dispatchPending(), 0)
    assert.equal((await old.db.selectFrom('events').select('id').execute()).length, 4,
      'every event stays')
  } finally {
    await old.close()
  }
})
