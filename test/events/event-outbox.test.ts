import assert from 'node:assert/strict'
import { test } from 'node:test'
import { appendEvent, EventDispatcher, EventSubscriberError, eventTypes, type EventPattern, type OutboxEvent } from '../../src/events/index.ts'
import { uuidPattern } from '../support/assertions.ts'
import { append, newEvent, pendingEvents, pendingIds, recorder, useEventsBank } from './helpers.ts'

const { db } = useEventsBank()

test('events - an event appended in a transaction that rolls back never exists and is never handed over', async () => {
  const [kept] = await append(db(), [newEvent()])
  let rolledBack: string | undefined
  await assert.rejects(
    db().transaction().execute(async (trx) => {
      rolledBack = await appendEvent(trx, newEvent({ type: 'bulk_payment.completed' }))
      throw new Error('the change failed after its event was appended')
    }),
    /the change failed/,
  )
  assert.match(rolledBack!, uuidPattern)
  const stored = await db().selectFrom('events').select('id').where('id', 'in',
    [kept!, rolledBack!]).execute()
  assert.deepEqual(stored.map((row) => row.id), [kept])

  const dispatcher = new EventDispatcher(db())
  const { seen, handler } = recorder()
  dispatcher.subscribe('*', handler)
  assert.equal(await dispatcher.dispatchPending(), 1)
  assert.deepEqual(seen.map((event) => event.id), [kept])
})

test('events - an event is refused outside a transaction and when its fields are wrong', async () => {
  await assert.rejects(appendEvent(db(), newEvent()), /must be appended in the transaction/)
  await db().transaction().execute(async (trx) => {
    await assert.rejects(appendEvent(trx, newEvent({ type: 'payment.refunded' as never })), /unknown event type/)
    await assert.rejects(appendEvent(trx, newEvent({ resource_id: '' })), /needs a resource_id/)
    await assert.rejects(appendEvent(trx, newEvent({ occurred_at: new Date(Number.NaN) })), /valid occurred_at/)
    await assert.rejects(appendEvent(trx, newEvent({ data: [1, 2] as never })), /data must be an object/)
    await assert.rejects(appendEvent(trx, newEvent({ data: null as never })), /data must be an object/)
  })
  assert.deepEqual(await pendingIds(db()), [])
})

test('events - an event keeps the endpoint it was appended with (a batch callback_url)', async () => {
  const [id] = await append(db(), [
    { ...newEvent({ type: 'bulk_payment.completed', resource_id: 'bulk-cb' }), endpoint_url: 'https://partner.example/hooks/bulk-cb' },
  ])
  const dispatcher = new EventDispatcher(db())
  const { seen, handler } = recorder()
  dispatcher.subscribe('bulk_payment.completed', handler)
  await dispatcher.dispatchPending()
  assert.equal(seen.find((event) => event.id === id)?.endpoint_url, 'https://partner.example/hooks/bulk-cb')
})

test('events - subscribers get each event once, as appended, in seq order', async () => {
  const first = [
    newEvent({ type: 'payment.success', resource_id: 'bulk-1/item-1' }),
    newEvent({ type: 'payment.failed', resource_id: 'bulk-1/item-2' }),
    newEvent({ type: 'bulk_payment.completed', resource_id: 'bulk-1' }),
  ]
  const second = [newEvent({ type: 'clearing.cycle_completed', partner_id: null,
    resource_id: '2026-11-23T10:00', data: {} })]
  const ids = [...(await append(db(), first)), ...(await append(db(), second))]
  assert.equal(new Set(ids).size, 4)

  const dispatcher = new EventDispatcher(db())
  const { seen, handler } = recorder()
  dispatcher.subscribe('*', handler)
  assert.equal(await dispatcher.dispatchPending(), 4)
  assert.equal(await dispatcher.dispatchPending(), 0, 'a second dispatch finds nothing left')
  assert.deepEqual(seen.map((event) => event.id), ids)
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.seq > seen[i - 1]!.seq,
    'seq grows in hand-over order')

  const strip = (event: OutboxEvent) => ({ ...event, id: undefined, seq: undefined })
  const expected = [...first, ...second].map(
    (event) => ({ ...event, id: undefined, seq: undefined, endpoint_url: null }))
  assert.deepEqual(seen.map(strip), expected)
  assert.equal(typeof seen[0]!.seq, 'bigint')

  const rows = await db().selectFrom('events').select('id').where('id', 'in', ids).execute()
  assert.equal(rows.length, 4, 'the events stay')
  assert.deepEqual(await pendingIds(db()), [], 'none of them is pending any more')
})

test('events - a dispatch hands over at most its batch limit, oldest first', async () => {
  const ids = await append(db(), Array.from({ length: 7 }, () => newEvent()))
  const dispatcher = new EventDispatcher(db(), { events_dispatch_batch_max: 3 })
  const { seen, handler } = recorder()
  dispatcher.subscribe('payment.success', handler)
  assert.equal(await dispatcher.dispatchPending(), 3)
  assert.deepEqual(seen.map((event) => event.id), ids.slice(0, 3))
  assert.equal(await dispatcher.dispatchPending(1), 1)
  assert.equal(await dispatcher.dispatchPending(), 3)
  assert.equal(await dispatcher.dispatchPending(), 0)
  assert.deepEqual(seen.map((event) => event.id), ids)

  for (const limit of [0, -1, 1.5, 10_001, Number.NaN]) {
    await assert.rejects(dispatcher.dispatchPending(limit), /dispatch batch is 1 to 10000 events/, `limit ${limit}`)
    assert.throws(() => new EventDispatcher(db(), { events_dispatch_batch_max: limit }), /dispatch batch/)
  }
  const [last] = await append(db(), [newEvent()])
  assert.equal(await dispatcher.dispatchPending(10_000), 1, 'the largest batch is allowed')
  assert.equal(seen.at(-1)!.id, last)
})

test('events - a subscriber that throws keeps the whole batch pending and its writes undone; a later dispatch hands it over', async () => {
  const ids = await append(db(), [newEvent(), newEvent(), newEvent()])
  const dispatcher = new EventDispatcher(db())
  const log: string[] = []
  // A subscriber that writes in the dispatch transaction, as a webhook subscriber enqueues a job.
  dispatcher.subscribe('payment.*', async (event, trx) => {
    log.push(`follow ${event.id}`)
    await appendEvent(trx,
      newEvent({ type: 'bulk_payment.completed', resource_id: `after-${event.id}` }))
  })
  let failures = 1
  const boom = new Error('subscriber failed on the second event')
  dispatcher.subscribe('payment.success', async (event) => {
    log.push(`check ${event.id}`)
    if (event.id === ids[1] && failures-- > 0) throw boom
  })

  const error = await dispatcher.dispatchPending().then(
    () => assert.fail('the dispatch should have failed'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof EventSubscriberError)
  assert.equal(error.event_id, ids[1])
  assert.equal(error.event_type, 'payment.success')
  assert.equal(error.cause, boom)
  assert.deepEqual(log, [`follow ${ids[0]}`, `check ${ids[0]}`, `follow ${ids[1]}`,
    `check ${ids[1]}`], 'subscribers run in the order they subscribed')
  assert.deepEqual(await pendingIds(db()), ids, 'nothing of the failed batch is marked')
  const followUps = await db().selectFrom('events').select('id').where('type', '=',
    'bulk_payment.completed').where('resource_id', 'like', 'after-%').execute()
  assert.deepEqual(followUps, [], 'the subscriber writes rolled back with the failed dispatch')

  log.length = 0
  assert.equal(await dispatcher.dispatchPending(), 3)
  assert.deepEqual(log, ids.flatMap((id) => [`follow ${id}`, `check ${id}`]))
  const pending = await pendingEvents(db()).select(['events.id', 'events.resource_id']).execute()
  assert.deepEqual(pending.map((row) => row.resource_id), ids.map((id) => `after-${id}`),
    'the writes of the successful dispatch committed')
  assert.equal(await dispatcher.dispatchPending(), 3, 'the follow-up events are handed over next')
  assert.deepEqual(await pendingIds(db()), [])
})

test('events - a family subscription takes its family only, an exact one its type, * everything', async () => {
  const ids =
    await append(db(), eventTypes.map((type) => newEvent({ type, resource_id: `one-${type}` })))
  const dispatcher = new EventDispatcher(db())
  const patterns: EventPattern[] = ['payment.*', 'bulk_payment.*', 'debit_order.*',
    'mandate.active', '*']
  const seen = new Map<EventPattern, string[]>(patterns.map((pattern) => [pattern, []]))
  for (const pattern of patterns) dispatcher.subscribe(pattern, async (event) => void seen.get(
    pattern)!.push(event.type))
  assert.equal(await dispatcher.dispatchPending(), eventTypes.length)

  assert.deepEqual(seen.get('payment.*'), ['payment.success', 'payment.failed',
    'payment.received'])
  assert.deepEqual(seen.get('bulk_payment.*'), ['bulk_payment.verified', 'bulk_payment.completed',
    'bulk_payment.failed', 'bulk_payment.cancelled'])
  assert.deepEqual(seen.get('debit_order.*'), ['debit_order.processing', 'debit_order.successful',
    'debit_order.failed', 'debit_order.disputed', 'debit_order.cancelled'])
  assert.deepEqual(seen.get('mandate.active'), ['mandate.active'])
  assert.deepEqual(seen.get('*'), [...eventTypes])
  assert.equal(ids.length, eventTypes.length)

  for (const pattern of ['payment', 'pay*', 'payment.', 'nope.*', '**', 'mandate.pending', '']) {
    assert.throws(() => dispatcher.subscribe(pattern as EventPattern, async () => {}), /unknown event pattern/, pattern)
  }
})

test('events - a batch subscriber gets a dispatch call\'s matching events at once, in seq order, after the one-event subscribers; its throw keeps the batch pending', async () => {
  const ids = await append(db(), [newEvent(), newEvent({ type: 'bulk_payment.completed' }),
    newEvent({ type: 'payment.failed' })])
  const dispatcher = new EventDispatcher(db())
  const log: string[] = []
  let failures = 1
  const boom = new Error('batch subscriber failed')
  dispatcher.subscribeBatch('payment.*', async (events) => {
    log.push(`batch ${events.map((event) => event.id).join(',')}`)
    if (failures-- > 0) throw boom
  })
  dispatcher.subscribe('*', async (event) => {
    log.push(`one ${event.id}`)
  })
  const error = await dispatcher.dispatchPending().then(
    () => assert.fail('the dispatch should have failed'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof EventSubscriberError)
  assert.equal(error.event_id, ids[0], 'named by the first event of the batch')
  assert.equal(error.cause, boom)
  assert.deepEqual(await pendingIds(db()), ids, 'nothing of the failed batch is marked')

  log.length = 0
  assert.equal(await dispatcher.dispatchPending(), 3)
  assert.deepEqual(log, [...ids.map((id) => `one ${id}`), `batch ${ids[0]},${ids[2]}`])
  assert.deepEqual(await pendingIds(db()), [])
})
