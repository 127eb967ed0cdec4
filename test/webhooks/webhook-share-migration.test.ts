import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { emptyDatabase, migrateTo } from '../support/empty-database.ts'

// Delivery jobs share the job runner's slots out by partner (test/webhooks/fair-delivery).
// Those queued or running when that came in (migration 0022 gave every job the bank's own
// share, '') get their delivery's partner from migration 0023, so a backlog carried over an
// upgrade is shared out like any other; finished jobs and other kinds keep ''.

test("webhooks - the upgrade gives delivery jobs still to run their delivery's partner as their share, and leaves the rest", async () => {
  const old = await emptyDatabase()
  try {
    await migrateTo(old.db, '0022_job_shares')
    const partner = randomUUID()
    const events = { queued: randomUUID(), running: randomUUID(), done: randomUUID(),
      orphan: randomUUID() }
    for (const eventId of [events.queued, events.running, events.done]) {
      await sql`
        insert into webhook_deliveries (event_id, seq, partner_id, resource_id, event_type, body, state, created_at, updated_at)
        values (${eventId}, 1, ${partner}, 'bulk-1', 'payment.success', '{}', 'pending', now(), now())`.execute(old.db)
    }
    const job = async (kind: string, key: string, state: string, payload: Record<string,
      unknown>) =>
      sql`
        insert into jobs (id, kind, key, payload, state, due_at, attempts_max, lease_ms, created_at, updated_at)
        values (${randomUUID()}, ${kind}, ${key}, ${JSON.stringify(payload)}::jsonb, ${state}, now(), 20, 60000, now(), now())`.execute(old.db)
    await job('webhook.deliver', 'queued', 'queued', { event_id: events.queued, generation: 1 })
    await job('webhook.deliver', 'running', 'running', { event_id: events.running, generation: 1 })
    await job('webhook.deliver', 'done', 'done', { event_id: events.done, generation: 1 })
    // A job whose delivery is gone does nothing when it runs; it stays in the bank's share.
    await job('webhook.deliver', 'orphan', 'queued', { event_id: events.orphan, generation: 1 })
    await job('clearing.cycle', 'cycle', 'queued', { cycle: '2026-11-23T10:00' })

    await migrateTo(old.db)
    const shares = Object.fromEntries(
      (await old.db.selectFrom('jobs').select(['key', 'share']).execute()).map(
        (row) => [row.key, row.share]),
    )
    assert.deepEqual(shares, { queued: partner, running: partner, done: '', orphan: '', cycle: '' })
  } finally {
    await old.close()
  }
})
