import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database } from '../../src/schema.ts'
import { appendEvent, EventDispatcher, type OutboxEvent } from '../../src/events/index.ts'
import { storage } from '../support/harness.ts'
import { append, newEvent, pendingIds, useEventsBank } from './helpers.ts'

// Several dispatchers at once, as several instances run them. On PostgreSQL half of them
// use a second connection pool of their own, as another process would; PGlite is one
// connection, so there the dispatchers' calls interleave one transaction at a time.

let other: Kysely<Database> | undefined
const { tb, db } = useEventsBank({ beforeStop: async () => await other?.destroy() })

/**
 * The database of the i-th dispatcher: alternately the bank's pool and, on PostgreSQL, a second
 * one.
 */
function dbOf(i: number): Kysely<Database> {
  if (i % 2 === 0 || storage !== 'postgres') return db()
  if (!other) {
    const pool = new pg.Pool({ connectionString: tb().config.databaseUrl, max: 4 })
    // pool.end() resolves before its sockets have closed, and the test database is dropped
    // (terminating its connections) right after; the pool then reports an error nobody
    // needs, which must not reach the process as an unheard 'error' event.
    pool.on('error', () => {})
    other = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  }
  return other
}

interface Handed {
  event: OutboxEvent
  by: number
}

/** Dispatchers that record every hand-over in one shared list, in the order it happened. */
function dispatchers(count: number, handed: Handed[]): EventDispatcher[] {
  return Array.from({ length: count }, (_, i) => {
    const dispatcher = new EventDispatcher(dbOf(i), { events_dispatch_batch_max: 7 })
    dispatcher.subscribe('*', async (event) => void handed.push({ event, by: i }))
    return dispatcher
  })
}

/**
 * Calls dispatchPending until `done()`; a bounded number of calls, so a bug fails instead of
 * hanging.
 */
async function dispatchUntil(dispatcher: EventDispatcher, done: () => boolean): Promise<number> {
  let total = 0
  for (let calls = 0; !done(); calls++) {
    assert.ok(calls < 20_000, 'the dispatchers should have handed every event over long before')
    total += await dispatcher.dispatchPending()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return total
}

test('events - concurrent dispatchers hand each event over once, in seq order', async () => {
  const total = 210
  const ids: string[] = []
  for (let i = 0; i < total; i += 30) {
    ids.push(...(await append(db(),
      Array.from({ length: 30 }, (_, j) => newEvent({ resource_id: `bulk-${(i + j) % 6}` })))))
  }
  const handed: Handed[] = []
  const counts = await Promise.all(
    dispatchers(4, handed).map((d) => dispatchUntil(d, () => handed.length >= total)))

  assert.equal(counts.reduce((a, b) => a + b, 0), total,
    'the dispatchers report as many as were handed over')
  assert.deepEqual(handed.map((h) => h.event.id), ids, 'every event once, in the order appended')
  for (let i = 1; i < handed.length; i++) assert.ok(handed[i]!.event.seq > handed[i - 1]!.event.seq)
  assert.deepEqual(await pendingIds(db()), [])
})

test('events - while one dispatcher is at work another answers 0 and hands nothing over', async () => {
  const ids = await append(db(), [newEvent(), newEvent(), newEvent()])
  let entered!: () => void
  const inside = new Promise<void>((resolve) => (entered = resolve))
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const first = new EventDispatcher(db())
  const firstSaw: string[] = []
  first.subscribe('*', async (event) => {
    firstSaw.push(event.id)
    entered()
    await gate
  })
  const second = new EventDispatcher(dbOf(1))
  const secondSaw: string[] = []
  second.subscribe('*', async (event) => void secondSaw.push(event.id))

  const firstDone = first.dispatchPending()
  await inside
  const secondDone = second.dispatchPending()
  if (storage === 'postgres') {
    // Another connection: the dispatch lock is held, so it answers at once, before the first ends.
    assert.equal(await secondDone, 0)
    release()
  } else {
    // PGlite's one connection is the first dispatcher's until it commits; the second then finds
    // nothing.
    release()
    assert.equal(await secondDone, 0)
  }
  assert.equal(await firstDone, 3)
  assert.deepEqual(firstSaw, ids)
  assert.deepEqual(secondSaw, [])
  assert.deepEqual(await pendingIds(db()), [])
})

test('events - events appended while dispatchers run are all handed over once, each resource in order', async () => {
  const resources = 4
  const perResource = 30
  const handed: Handed[] = []
  let appended = 0
  // Each producer announces changes to its own resource one transaction after another, as
  // a capability does under the resource's row lock.
  const producers = Array.from({ length: resources }, async (_, r) => {
    for (let n = 0; n < perResource; n++) {
      await dbOf(r).transaction().execute(
        (trx) => appendEvent(trx, newEvent({ resource_id: `debit-${r}`, data: { n } })))
      appended++
    }
  })
  const total = resources * perResource
  const running = dispatchers(3, handed).map((d) => dispatchUntil(d, () => appended === total
    && handed.length >= total))
  await Promise.all(producers)
  await Promise.all(running)

  assert.equal(handed.length, total)
  assert.equal(new Set(handed.map((h) => h.event.id)).size, total, 'no event handed over twice')
  for (let r = 0; r < resources; r++) {
    const order = handed.filter((h) => h.event.resource_id === `debit-${r}`).map(
      (h) => h.event.data.n)
    assert.deepEqual(order, Array.from({ length: perResource }, (_, n) => n),
      `resource debit-${r} in order`)
  }
  assert.deepEqual(await pendingIds(db()), [])
})
