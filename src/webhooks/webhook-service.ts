import type { Kysely } from 'kysely'
import { Webhook } from 'standardwebhooks'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../db/schema.ts'
import { assert, Invalid, NotFound } from '../errors.ts'
import { isPartnerEventType, type EventDispatcher, type OutboxEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import { deliveries_page_limit_default, type DeliveryView } from './webhook-contract.ts'
import type { WebhookSecrets } from './webhook-secrets.ts'
import type { WebhookOutcome, WebhookSender } from './webhook-sender.ts'
import {
  endpointOf,
  findDelivery,
  insertDelivery,
  laneHead,
  lockLane,
  pageDeliveries,
  saveEndpoint,
  updateDelivery,
  type DeliveryRow,
} from './webhook-store.ts'
import { checkEndpointUrl } from './url-policy.ts'
import { decodeSeqCursor, encodeSeqCursor, invalid_cursor_message } from '../contract/cursor.ts'

// Webhooks: every partner event becomes a signed POST to the partner (Standard Webhooks).
//
// When the dispatcher hands an event over, this records a delivery row in the same
// transaction (so none is lost and none announces what rolled back) and, when the
// delivery heads its lane, schedules a `webhook.deliver` job. A lane is one partner's
// deliveries about one resource (a batch and its payments): they go out one at a time in
// outbox order, and a later event never overtakes an earlier one that is still being
// retried, so a receiver sees `payment.*` before `bulk_payment.completed`. A job attempts
// its delivery once: any 2xx is delivered; anything else schedules the next attempt with
// growing backoff, on the bank's clock, until `retry_window_ms` has passed since the
// first attempt, and then the delivery is failed. Either ending schedules the lane's next
// delivery. Each scheduling bumps the delivery's `generation`, and a job of an older
// generation does nothing, so one delivery has one live job. Delivery is at least once: a
// run cut short after its POST is run again.
//
// An event with no endpoint (no callback_url, and the partner set none) is recorded as
// failed at once with the reason, and never attempted: a partner that has not set up
// webhooks does not pile up a day of retries per event. Setting an endpoint and asking
// for a redelivery sends it.

export const webhook_deliver_job_kind = 'webhook.deliver'

export interface WebhookLimits {
  /** One attempt, from connecting to the receiver's status line. */
  attempt_timeout_ms: number
  /** How long after the first attempt a delivery is still retried. */
  retry_window_ms: number
  retry_backoff_base_ms: number
  retry_backoff_max_ms: number
}

export const webhook_limits_default: WebhookLimits = {
  attempt_timeout_ms: 10_000,
  retry_window_ms: 24 * 3_600_000,
  retry_backoff_base_ms: 30_000,
  retry_backoff_max_ms: 2 * 3_600_000,
}

export const no_endpoint_error = 'no webhook endpoint is set'

export interface WebhookServiceOptions {
  sandbox: boolean
  limits: WebhookLimits
  /** The wall clock that stamps `webhook-timestamp` (the bank's clock may be moved in the sandbox). */
  wallClock?: () => Date
}

export class WebhookService {
  private readonly wallClock: () => Date

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    events: EventDispatcher,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly options: WebhookServiceOptions,
  ) {
    this.wallClock = options.wallClock ?? (() => new Date())
    jobs.register({
      kind: webhook_deliver_job_kind,
      // A job fails only when the database does (a receiver's failure is an outcome, not an
      // error): these retries cover that, not the receiver.
      attempts_max: 20,
      lease_ms: Math.max(60_000, options.limits.attempt_timeout_ms * 3),
      backoff_base_ms: 5_000,
      backoff_max_ms: 300_000,
      run: (job) => this.attempt(String(job.payload.event_id), Number(job.payload.generation)),
    })
    events.subscribe('*', (event, trx) => this.record(event, trx))
  }

  async setEndpoint(partnerId: string, url: string): Promise<{ url: string | null }> {
    if (url === '') {
      await saveEndpoint(this.db, partnerId, null, this.clock.now())
      return { url: null }
    }
    const refusal = await checkEndpointUrl(url, this.options.sandbox)
    if (refusal) throw Invalid.field('url', refusal)
    await saveEndpoint(this.db, partnerId, url, this.clock.now())
    return { url }
  }

  async getEndpoint(partnerId: string): Promise<{ url: string | null }> {
    return { url: await endpointOf(this.db, partnerId) }
  }

  async rotateSecret(partnerId: string): Promise<{ webhook_secret: string; previous_secret_retires_at: string | null }> {
    const { secret, previous_retires_at } = await this.secrets.rotate(partnerId)
    return { webhook_secret: secret, previous_secret_retires_at: previous_retires_at ? formatTimestamp(previous_retires_at) : null }
  }

  async listDeliveries(
    partnerId: string,
    request: { event_type?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ deliveries: DeliveryView[]; next_cursor?: string }> {
    const limit = request.limit ?? deliveries_page_limit_default
    const beforeSeq = request.cursor === undefined ? undefined : decodeCursor(request.cursor)
    const rows = await pageDeliveries(this.db, partnerId, { eventType: request.event_type, beforeSeq, limit: limit + 1 })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return { deliveries: page.map(deliveryView), ...(rows.length > limit && last ? { next_cursor: encodeCursor(BigInt(last.seq)) } : {}) }
  }

  /** Sends a delivered or failed event again; another partner's event is not found. */
  async redeliver(partnerId: string, eventId: string): Promise<{ delivery: DeliveryView }> {
    const seen = await findDelivery(this.db, eventId)
    if (!seen || seen.partner_id !== partnerId) throw new NotFound('event')
    const row = await this.db.transaction().execute(async (trx) => {
      await lockLane(trx, seen.partner_id, seen.resource_id)
      const delivery = await findDelivery(trx, eventId, { forUpdate: true })
      assert(delivery, `delivery of event ${eventId} vanished`)
      if (delivery.state === 'pending') return delivery
      const now = this.clock.now()
      // A fresh start: attempts and the retry window count from this redelivery.
      await updateDelivery(trx, eventId, { state: 'pending', attempts: 0, first_attempt_at: null, next_attempt_at: null, delivered_at: null }, now)
      await this.scheduleHead(trx, delivery.partner_id, delivery.resource_id, now)
      return findDelivery(trx, eventId)
    })
    assert(row, `delivery of event ${eventId} vanished`)
    return { delivery: deliveryView(row) }
  }

  /** The subscriber: a delivery row (and, heading its lane, a job) in the dispatch transaction. */
  private async record(event: OutboxEvent, trx: Kysely<Database>): Promise<void> {
    if (!isPartnerEventType(event.type) || event.partner_id === null) return
    await lockLane(trx, event.partner_id, event.resource_id)
    const now = this.clock.now()
    const routed = event.endpoint_url !== null || (await endpointOf(trx, event.partner_id)) !== null
    const inserted = await insertDelivery(trx, {
      event_id: event.id,
      seq: event.seq,
      partner_id: event.partner_id,
      resource_id: event.resource_id,
      event_type: event.type,
      endpoint_url: event.endpoint_url,
      body: JSON.stringify({ type: event.type, timestamp: formatTimestamp(event.occurred_at), data: event.data }),
      state: routed ? 'pending' : 'failed',
      last_error: routed ? null : no_endpoint_error,
      now,
    })
    if (!inserted || !routed) return
    const head = await laneHead(trx, event.partner_id, event.resource_id)
    // Behind an earlier delivery, this one is scheduled when that one ends.
    if (head?.event_id === event.id) await this.scheduleHead(trx, event.partner_id, event.resource_id, now)
  }

  /** Gives the lane's head a job of a new generation, due at its next attempt (or now). */
  private async scheduleHead(trx: Kysely<Database>, partnerId: string, resourceId: string, now: Date): Promise<void> {
    const head = await laneHead(trx, partnerId, resourceId)
    if (!head) return
    const generation = head.generation + 1
    await updateDelivery(trx, head.event_id, { generation }, now)
    const due = head.next_attempt_at && head.next_attempt_at > now ? head.next_attempt_at : now
    await this.jobs.enqueue(trx, {
      kind: webhook_deliver_job_kind,
      key: `${head.event_id}:${generation}`,
      due_at: due,
      payload: { event_id: head.event_id, generation },
    })
  }

  /** The job: one attempt of one delivery, unless it was superseded or waits behind an earlier one. */
  private async attempt(eventId: string, generation: number): Promise<Record<string, unknown>> {
    const delivery = await findDelivery(this.db, eventId)
    if (!delivery || delivery.state !== 'pending' || delivery.generation !== generation) return { skipped: 'superseded' }
    const head = await laneHead(this.db, delivery.partner_id, delivery.resource_id)
    if (head?.event_id !== eventId) return { skipped: 'waiting for an earlier event of the resource' }
    const url = delivery.endpoint_url ?? (await endpointOf(this.db, delivery.partner_id))
    const outcome = url ? await this.send(delivery, url) : { delivered: false, status_code: null, error: no_endpoint_error }
    const state = await this.settle(delivery, generation, outcome, url === null)
    return { state, status_code: outcome.status_code }
  }

  private async send(delivery: DeliveryRow, url: string): Promise<WebhookOutcome> {
    const sentAt = this.wallClock()
    const secrets = await this.secrets.signing(delivery.partner_id)
    const signature = secrets.map((secret) => new Webhook(secret).sign(delivery.event_id, sentAt, delivery.body)).join(' ')
    return this.sender.send({
      url,
      body: delivery.body,
      sandbox: this.options.sandbox,
      headers: {
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signature,
      },
    })
  }

  /** Records an attempt's outcome; an ending (delivered or failed) schedules the lane's next delivery. */
  private async settle(seen: DeliveryRow, generation: number, outcome: WebhookOutcome, final: boolean): Promise<string> {
    return this.db.transaction().execute(async (trx) => {
      await lockLane(trx, seen.partner_id, seen.resource_id)
      const delivery = await findDelivery(trx, seen.event_id, { forUpdate: true })
      // Redelivered or rescheduled meanwhile: the newer job makes its own attempt.
      if (!delivery || delivery.state !== 'pending' || delivery.generation !== generation) return 'superseded'
      const now = this.clock.now()
      const attempts = delivery.attempts + 1
      const firstAttemptAt = delivery.first_attempt_at ?? now
      const attempt = { attempts, first_attempt_at: firstAttemptAt, last_attempt_at: now, last_status_code: outcome.status_code, last_error: outcome.error }
      if (outcome.delivered) {
        await updateDelivery(trx, delivery.event_id, { ...attempt, state: 'delivered', delivered_at: now, next_attempt_at: null }, now)
      } else if (final || now.getTime() - firstAttemptAt.getTime() >= this.options.limits.retry_window_ms) {
        await updateDelivery(trx, delivery.event_id, { ...attempt, state: 'failed', next_attempt_at: null }, now)
      } else {
        const next = new Date(now.getTime() + retryDelayMs(this.options.limits, attempts))
        await updateDelivery(trx, delivery.event_id, { ...attempt, next_attempt_at: next }, now)
        await this.scheduleHead(trx, delivery.partner_id, delivery.resource_id, now)
        return 'pending'
      }
      await this.scheduleHead(trx, delivery.partner_id, delivery.resource_id, now)
      return outcome.delivered ? 'delivered' : 'failed'
    })
  }
}

/** The wait after the `attempts`-th failed attempt: base, 2 × base, 4 × base, … up to the maximum. */
export function retryDelayMs(limits: Pick<WebhookLimits, 'retry_backoff_base_ms' | 'retry_backoff_max_ms'>, attempts: number): number {
  return Math.min(limits.retry_backoff_max_ms, limits.retry_backoff_base_ms * 2 ** Math.min(30, Math.max(0, attempts - 1)))
}

function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    event_id: row.event_id,
    event_type: row.event_type,
    resource_id: row.resource_id,
    state: row.state,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: formatTimestamp(row.created_at),
    last_attempt_at: row.last_attempt_at ? formatTimestamp(row.last_attempt_at) : null,
    next_attempt_at: row.next_attempt_at ? formatTimestamp(row.next_attempt_at) : null,
    delivered_at: row.delivered_at ? formatTimestamp(row.delivered_at) : null,
  }
}

function encodeCursor(seq: bigint): string {
  return encodeSeqCursor('w', seq)
}

function decodeCursor(cursor: string): bigint {
  const seq = decodeSeqCursor('w', cursor)
  if (seq === undefined) throw Invalid.field('cursor', invalid_cursor_message)
  return seq
}
