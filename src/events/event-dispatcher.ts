import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import { markDispatched, selectPending, tryLockDispatch, type OutboxEvent } from './event-store.ts'
import { eventMatches, isEventPattern, type EventPattern } from './event-types.ts'

// Hands outbox events to the subscribers in this process. The job runner calls
// dispatchPending() on every instance each tick; one call is one database transaction:
//
//  1. Take the dispatch lock (a transaction-scoped advisory lock). When another instance
//     holds it, answer 0 at once: only one dispatcher works at a time, so events are handed
//     over in one order, and a tick never waits behind another instance's.
//  2. Read the oldest pending events in `seq` order (at most the batch limit).
//  3. Hand each event to every matching subscriber, in the order they subscribed, with the
//     same transaction, so what a subscriber writes (a webhook-delivery job, say) commits
//     together with the event being marked dispatched: exactly once, or not at all.
//  4. Mark the events dispatched and commit. Events nobody subscribed to are marked too.
//
// Order: events are handed over in `seq` order. A transaction that appends an event after
// seeing another transaction's committed change gets a later `seq` than that change's
// events, and a dispatcher that sees its event also sees theirs, so they are handed over
// first. Writers that announce changes to one resource hold that resource's row lock,
// which makes its events follow one another in that same way. Two transactions that run
// side by side on different resources may commit out of `seq` order; the later one is then
// handed over in a later call. Nothing is lost: the dispatcher takes every pending event,
// not those above a high-water mark.
//
// A subscriber that throws rolls the whole call back: no event of the batch is marked and
// no subscriber's writes stay, and the error propagates (the runner logs it and the next
// tick tries again from the same event). That blocks the outbox until the cause is mended,
// and it is the right trade: skipping the event, or only the failed subscriber, would lose
// an announcement or deliver a later event of the same resource before an earlier one
// (`bulk_payment.completed` before its `payment.*`), which a receiver cannot repair, while
// a stuck outbox is visible and loses nothing. Subscribers only write rows in the given
// transaction (work that can fail for outside reasons, such as a webhook POST, belongs to a
// job with its own retries and dead state), so a failure here means the database is away
// or a bug, and retrying the same batch is what heals both.

/**
 * A subscriber. It must do its work through `trx` only: on PGlite the dispatcher's
 * transaction holds the only connection, and on PostgreSQL work done outside `trx` would
 * not commit or roll back with the dispatch. It must not call outside systems.
 */
export type EventHandler = (event: OutboxEvent, trx: Transaction<Database>) => Promise<void>

/**
 * A subscriber that takes every matching event of one dispatch call at once, in `seq`
 * order, under the same rules as an EventHandler: it can write a call's worth of rows in a
 * few statements instead of a few per event.
 */
export type EventBatchHandler = (events: OutboxEvent[], trx: Transaction<Database>) => Promise<void>

export interface EventDispatcherOptions {
  /** Events handed over in one call (one transaction). */
  events_dispatch_batch_max: number
}

export const events_dispatch_batch_max_default = 100
/** A batch is one transaction that holds its events in memory: keep it bounded. */
const events_dispatch_batch_ceiling = 10_000

/** A subscriber failed on an event; `cause` is what it threw. Nothing of the batch was kept. */
export class EventSubscriberError extends Error {
  readonly event_id: string
  readonly event_seq: bigint
  readonly event_type: string

  constructor(event: OutboxEvent, pattern: EventPattern, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(
      `event ${event.seq} (${event.type}, ${event.id}): subscriber of ${pattern} failed: ${reason}`,
      { cause })
    this.name = 'EventSubscriberError'
    this.event_id = event.id
    this.event_seq = event.seq
    this.event_type = event.type
  }
}

export class EventDispatcher {
  private readonly subscribers: Array<{ pattern: EventPattern; handler: EventHandler }> = []
  private readonly batchSubscribers: Array<{
    pattern: EventPattern; handler: EventBatchHandler }> = []
  private readonly options: EventDispatcherOptions

  constructor(
    private readonly db: Kysely<Database>,
    options: Partial<EventDispatcherOptions> = {},
  ) {
    this.options = { events_dispatch_batch_max: options.events_dispatch_batch_max
      ?? events_dispatch_batch_max_default }
    assertBatchLimit(this.options.events_dispatch_batch_max)
  }

  /** Events one dispatchPending() call hands over at most, by default. */
  get batchLimit(): number {
    return this.options.events_dispatch_batch_max
  }

  /** The patterns subscribed to, one each (held against the modules' declarations at start). */
  patterns(): EventPattern[] {
    return [...new Set([...this.subscribers, ...this.batchSubscribers].map((s) => s.pattern))]
  }

  /** Adds a subscriber of one type, a family (`debit_order.*`) or every event (`*`). */
  subscribe(pattern: EventPattern, handler: EventHandler): void {
    assert(isEventPattern(pattern), `unknown event pattern ${JSON.stringify(pattern)}`)
    this.subscribers.push({ pattern, handler })
  }

  /**
   * Adds a subscriber that takes a dispatch call's matching events together (after the one-event
   * subscribers).
   */
  subscribeBatch(pattern: EventPattern, handler: EventBatchHandler): void {
    assert(isEventPattern(pattern), `unknown event pattern ${JSON.stringify(pattern)}`)
    this.batchSubscribers.push({ pattern, handler })
  }

  /**
   * Hands the oldest pending events (at most `limit`) to the subscribers and marks them
   * dispatched, in one transaction. Resolves with how many were handed over: 0 when none
   * was pending or another instance's dispatcher is at work. Rejects, keeping nothing,
   * when a subscriber throws (an EventSubscriberError with the subscriber's error as cause).
   */
  async dispatchPending(limit: number = this.options.events_dispatch_batch_max): Promise<number> {
    assertBatchLimit(limit)
    return this.db.transaction().execute(async (trx) => {
      if (!(await tryLockDispatch(trx))) return 0
      const events = await selectPending(trx, limit)
      for (const event of events) await this.handOver(event, trx)
      await this.handOverBatch(events, trx)
      await markDispatched(trx, events.map((event) => event.seq))
      return events.length
    })
  }

  private async handOverBatch(events: OutboxEvent[], trx: Transaction<Database>): Promise<void> {
    for (const { pattern, handler } of this.batchSubscribers) {
      const matching = events.filter((event) => eventMatches(pattern, event.type))
      if (matching.length === 0) continue
      try {
        await handler(matching, trx)
      } catch (error) {
        throw new EventSubscriberError(matching[0]!, pattern, error)
      }
    }
  }

  private async handOver(event: OutboxEvent, trx: Transaction<Database>): Promise<void> {
    for (const { pattern, handler } of this.subscribers) {
      if (!eventMatches(pattern, event.type)) continue
      try {
        await handler(event, trx)
      } catch (error) {
        throw new EventSubscriberError(event, pattern, error)
      }
    }
  }
}

function assertBatchLimit(limit: number): void {
  assert(
    Number.isSafeInteger(limit) && limit >= 1 && limit <= events_dispatch_batch_ceiling,
    `an event dispatch batch is 1 to ${events_dispatch_batch_ceiling} events, not ${limit}`,
  )
}
