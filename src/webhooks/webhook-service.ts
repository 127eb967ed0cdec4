import type { Kysely } from 'kysely'
import { Webhook } from 'standardwebhooks'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import { assert, Invalid, NotFound } from '../errors.ts'
import { isPartnerEventType, type EventDispatcher, type OutboxEvent } from '../events/index.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import {
  deliveries_page_limit_default,
  endpoints_page_limit_default,
  type DeliveryView,
  type EndpointHealthView,
  type OperatorDeliveryView,
} from './webhook-contract.ts'
import { noteCommitTargets } from '../db/commit-hooks.ts'
import type { WebhookSecrets } from './webhook-secrets.ts'
import type { WebhookOutcome, WebhookSender } from './webhook-sender.ts'
import {
  endpointOf,
  endpointsOf,
  findDelivery,
  insertDeliveries,
  laneHead,
  laneHeads,
  laneQueue,
  lockLane,
  lockLanes,
  markDelivered,
  pageAllDeliveries,
  pageDeliveries,
  pendingLanes,
  saveEndpoint,
  sortLanes,
  updateDelivery,
  type DeliveryRow,
  type Lane,
} from './webhook-store.ts'
import { checkEndpointUrl } from './url-policy.ts'
import {
  clearEndpointHealth,
  endpointGate,
  endpointState,
  pageEndpointHealth,
  recordEndpointOutcome,
  type EndpointHealthRow,
  type EndpointState,
} from './webhook-breaker.ts'
import { webhook_deliver_job_limits, type WebhookLimits } from './webhook-limits.ts'
import { decodeSeqCursor, encodeSeqCursor, invalid_cursor_message } from '../contract/cursor.ts'

// Webhooks: every partner event becomes a signed POST to the partner (Standard Webhooks).
//
// When the dispatcher hands an event over, this records a delivery row in the same
// transaction (so none is lost and none announces what rolled back) and, when the
// delivery heads its lane, schedules a `webhook.deliver` job. A lane is one partner's
// deliveries about one resource (a batch and its payments): they go out one at a time in
// outbox order, and a later event never overtakes an earlier one that is still being
// retried, so a receiver sees `payment.*` before `bulk_payment.completed`. A job attempts
// the lane's head and then, while each is delivered, the deliveries queued behind it (a
// run, over kept-alive connections, recorded in one transaction at its end): any 2xx is
// delivered; anything else ends the run and schedules that delivery's next attempt with
// growing backoff, on the bank's clock, until `retry_window_ms` has passed since its
// first attempt, and then the delivery is failed. Either ending schedules the lane's next
// delivery. Each scheduling bumps the delivery's `generation`, and a job of an older
// generation does nothing, so one delivery has one live job. Delivery is at least once: a
// run cut short after its POST is run again.
//
// Delivery capacity is shared out by partner: each job names its partner as its share of
// the job runner's slots, and no partner has more than `partner_slots_max` deliveries
// running at once, on all instances together (nor all of one instance's delivery slots),
// while a free slot goes to the partner with the fewest running. A receiver that accepts
// connections and never answers holds its own partner's slots for 10 s per attempt; the
// other partners' webhooks go out beside it (issue 28).
//
// An event with no endpoint (no callback_url, and the partner set none) is recorded as
// failed at once with the reason, and never attempted: a partner that has not set up
// webhooks does not pile up a day of retries per event. Setting an endpoint and asking
// for a redelivery sends it.

export const webhook_deliver_job_kind = 'webhook.deliver'

export const no_endpoint_error = 'no webhook endpoint is set'

export interface WebhookServiceOptions {
  sandbox: boolean
  limits: WebhookLimits
  /**
   * The wall clock that stamps `webhook-timestamp` (the bank's clock may be moved in the sandbox).
   */
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
      ...webhook_deliver_job_limits,
      lease_ms: webhookLeaseMs(options.limits),
      // An attempt waits on a partner's receiver, for seconds at worst: deliveries run in a
      // pool of their own (hundreds), never in the slots of bulk payments, clearing and debit
      // runs, and the pool is shared out by partner, so a receiver that never answers holds
      // at most its partner's part of it and delays no one else's events.
      pool_slots: options.limits.instance_slots,
      share_running_max: options.limits.partner_slots_max,
      run: (job) => this.attempt(String(job.payload.event_id), Number(job.payload.generation)),
    })
    events.subscribeBatch('*', (events, trx) => this.record(events, trx))
  }

  async setEndpoint(partnerId: string, url: string): Promise<{ url: string | null }> {
    if (url === '') {
      await saveEndpoint(this.db, partnerId, null, this.clock.now())
      return { url: null }
    }
    const refusal = await checkEndpointUrl(url, this.options.sandbox)
    if (refusal) throw Invalid.field('url', refusal)
    await saveEndpoint(this.db, partnerId, url, this.clock.now())
    // Setting the endpoint (again) is the partner's word that it answers: its endpoints resume.
    await this.resume(partnerId)
    return { url }
  }

  /** The operators' view of endpoints whose latest attempts failed, longest failing first. */
  async listEndpoints(request: { partner_id?: string | undefined;
      state?: EndpointState | undefined; limit?: number | undefined }): Promise<{
      endpoints: EndpointHealthView[] }> {
    const rows = await pageEndpointHealth(this.db, { partnerId: request.partner_id,
      state: request.state, limit: request.limit ?? endpoints_page_limit_default },
    this.options.limits.breaker)
    return { endpoints: rows.map((row) => this.endpointView(row)) }
  }

  /**
   * An operator resumes a partner's backed-off or paused endpoints (one URL's, when given):
   * its waiting deliveries are sent at once, in order, with a fresh retry window.
   */
  async resumeEndpoint(request: { partner_id: string; url?: string | undefined }): Promise<{
      resumed: string[]; lanes: number }> {
    return this.resume(request.partner_id, request.url)
  }

  /**
   * Forgets the failures of the partner's endpoints (of `url` only, when given) and gives
   * each lane bound to one of them a job due now, its head a fresh retry window. The lanes
   * are locked first (in the dispatcher's order), the breaker's rows after, as a run's
   * settling does, so the two never wait on each other.
   */
  private async resume(partnerId: string, url?: string): Promise<{ resumed: string[];
      lanes: number }> {
    return this.db.transaction().execute(async (trx) => {
      const lanes = await pendingLanes(trx, partnerId)
      await lockLanes(trx, lanes)
      const resumed = await clearEndpointHealth(trx, partnerId, url)
      if (resumed.length === 0) return { resumed, lanes: 0 }
      const partnerUrl = await endpointOf(trx, partnerId)
      const now = this.clock.now()
      let count = 0
      for (const head of await laneHeads(trx, lanes)) {
        if (url !== undefined && (head.endpoint_url ?? partnerUrl) !== url) continue
        const fresh = { first_attempt_at: null, next_attempt_at: null }
        await updateDelivery(trx, head.event_id, fresh, now)
        await this.scheduleHead(trx, { ...head, ...fresh }, now)
        count++
      }
      return { resumed, lanes: count }
    })
  }

  private endpointView(row: EndpointHealthRow): EndpointHealthView {
    const at = (date: Date | null) => (date ? formatTimestamp(date) : null)
    return { partner_id: row.partner_id, url: row.url,
      state: endpointState(row, this.options.limits.breaker), failures: row.failures,
      failing_since: formatTimestamp(row.failing_since), backoff_until: at(row.backoff_until),
      paused_at: at(row.paused_at), last_error: row.last_error }
  }

  async getEndpoint(partnerId: string): Promise<{ url: string | null }> {
    return { url: await endpointOf(this.db, partnerId) }
  }

  async rotateSecret(partnerId: string): Promise<{
      webhook_secret: string; previous_secret_retires_at: string | null }> {
    const { secret, previous_retires_at } = await this.secrets.rotate(partnerId)
    return { webhook_secret: secret, previous_secret_retires_at: previous_retires_at
      ? formatTimestamp(previous_retires_at) : null }
  }

  async listDeliveries(
    partnerId: string,
    request: {
      event_type?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ deliveries: DeliveryView[]; next_cursor?: string }> {
    const limit = request.limit ?? deliveries_page_limit_default
    const beforeSeq = request.cursor === undefined ? undefined : decodeCursor(request.cursor)
    const rows = await pageDeliveries(this.db, partnerId, { eventType: request.event_type,
      beforeSeq, limit: limit + 1 })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return { deliveries: page.map(deliveryView), ...(rows.length > limit && last
      ? { next_cursor: encodeCursor(BigInt(last.seq)) } : {}) }
  }

  /** The operators' view: deliveries across partners, or of one, by state and event type. */
  async listAllDeliveries(request: {
    partner_id?: string | undefined
    state?: string | undefined
    event_type?: string | undefined
    limit?: number | undefined
    cursor?: string | undefined
  }): Promise<{ deliveries: OperatorDeliveryView[]; next_cursor?: string }> {
    const limit = request.limit ?? deliveries_page_limit_default
    const beforeSeq = request.cursor === undefined ? undefined : decodeCursor(request.cursor)
    const rows = await pageAllDeliveries(this.db, {
      partnerId: request.partner_id,
      state: request.state,
      eventType: request.event_type,
      beforeSeq,
      limit: limit + 1,
    })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    const deliveries = page.map((row) => ({ ...deliveryView(row), partner_id: row.partner_id }))
    const more = rows.length > limit && last
    return { deliveries, ...(more ? { next_cursor: encodeCursor(BigInt(last.seq)) } : {}) }
  }

  /**
   * An operator's redelivery on the partner's behalf: the partner's own redelivery, for
   * whichever partner the event is of. The endpoint wrapper audits it as the operator's action;
   * the partner joins the audit row's targets beside the event.
   */
  async redeliverForPartner(eventId: string): Promise<{ delivery: OperatorDeliveryView }> {
    const seen = await findDelivery(this.db, eventId)
    if (!seen) throw new NotFound('event')
    noteCommitTargets(seen.partner_id)
    const { delivery } = await this.redeliver(seen.partner_id, eventId)
    return { delivery: { ...delivery, partner_id: seen.partner_id } }
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
      await updateDelivery(trx, eventId, { state: 'pending', attempts: 0, first_attempt_at: null,
        next_attempt_at: null, delivered_at: null }, now)
      await this.scheduleHead(trx, await laneHead(trx, delivery.partner_id, delivery.resource_id),
        now)
      return findDelivery(trx, eventId)
    })
    assert(row, `delivery of event ${eventId} vanished`)
    // Asking for a redelivery is a word that the endpoint answers again: a backed-off or paused
    // one resumes (its other waiting deliveries go out too).
    const url = seen.endpoint_url ?? await endpointOf(this.db, partnerId)
    if (url && !(await endpointGate(this.db, partnerId, url, this.clock.now())).open) {
      await this.resume(partnerId, url)
      return { delivery: deliveryView((await findDelivery(this.db, eventId))!) }
    }
    return { delivery: deliveryView(row) }
  }

  /**
   * The subscriber: delivery rows (and, for a lane whose head is new, a job) in the
   * dispatch transaction, for a dispatch call's events together, in a few statements
   * whatever their number: the lanes' locks, the partners' endpoints, the deliveries, and
   * the heads of the lanes that got a pending one.
   */
  private async record(events: OutboxEvent[], trx: Kysely<Database>): Promise<void> {
    const partnerEvents = events.filter((event): event is OutboxEvent & { partner_id: string } =>
      isPartnerEventType(event.type) && event.partner_id !== null)
    if (partnerEvents.length === 0) return
    const lanes = new Map<string, Lane>()
    for (const { partner_id, resource_id } of partnerEvents) lanes.set(
      laneKey(partner_id, resource_id), { partner_id, resource_id })
    await lockLanes(trx, sortLanes([...lanes.values()]))
    const endpoints = await endpointsOf(trx, partnerEvents.map((event) => event.partner_id))
    const now = this.clock.now()
    const deliveries = partnerEvents.map((event) => {
      const routed = event.endpoint_url !== null || endpoints.has(event.partner_id)
      return {
        event_id: event.id,
        seq: event.seq,
        partner_id: event.partner_id,
        resource_id: event.resource_id,
        event_type: event.type,
        endpoint_url: event.endpoint_url,
        body: JSON.stringify({ type: event.type, timestamp: formatTimestamp(event.occurred_at),
          data: event.data }),
        state: routed ? ('pending' as const) : ('failed' as const),
        last_error: routed ? null : no_endpoint_error,
        now,
      }
    })
    const inserted = await insertDeliveries(trx, deliveries)
    const waking = new Set(deliveries.filter((d) => d.state === 'pending'
      && inserted.has(d.event_id)).map((d) => laneKey(d.partner_id, d.resource_id)))
    // A lane whose head is one of these is new or was idle: its head gets a job. Behind an
    // earlier delivery, they are scheduled when that one ends.
    for (const head of await laneHeads(trx, [...lanes].filter(([key]) => waking.has(key)).map(
        ([, lane]) => lane))) {
      if (inserted.has(head.event_id)) await this.scheduleHead(trx, head, now)
    }
  }

  /**
   * Gives the lane's head (if it has one) a job of a new generation, due at its next attempt (or
   * now).
   */
  private async scheduleHead(trx: Kysely<Database>, head: DeliveryRow | undefined,
      now: Date): Promise<void> {
    if (!head) return
    const generation = head.generation + 1
    await updateDelivery(trx, head.event_id, { generation }, now)
    const due = head.next_attempt_at && head.next_attempt_at > now ? head.next_attempt_at : now
    await this.jobs.enqueue(trx, {
      kind: webhook_deliver_job_kind,
      key: `${head.event_id}:${generation}`,
      due_at: due,
      payload: { event_id: head.event_id, generation },
      share: head.partner_id,
    })
  }

  /**
   * The job: an attempt of the lane's head, then of the deliveries queued behind it, one
   * at a time in order over shared connections, while each is delivered (a run). The first
   * that is not delivered ends the run; so do the run limits. Nothing is recorded until the
   * run ends, in one transaction, so a run cut short is sent again (at least once), and a
   * job of an older generation, or one whose delivery no longer heads its lane, does nothing.
   */
  private async attempt(eventId: string, generation: number): Promise<Record<string, unknown>> {
    const delivery = await findDelivery(this.db, eventId)
    if (!delivery || delivery.state !== 'pending' || delivery.generation !== generation) return {
      skipped: 'superseded' }
    const head = await laneHead(this.db, delivery.partner_id, delivery.resource_id)
    if (head?.event_id !== eventId) return {
      skipped: 'waiting for an earlier event of the resource' }
    const partnerUrl = await endpointOf(this.db, delivery.partner_id)
    const url = delivery.endpoint_url ?? partnerUrl
    // The endpoint's circuit breaker: a backed-off or paused endpoint is not attempted.
    const gate = url === null ? { open: true as const }
      : await endpointGate(this.db, delivery.partner_id, url, this.clock.now())
    if (!gate.open) return { state: await this.putOff(delivery, generation,
      gate.paused ? null : gate.until) }
    const queued = await laneQueue(this.db, delivery.partner_id, delivery.resource_id,
      String(delivery.seq), this.options.limits.run_deliveries_max - 1)
    const attempts = await this.send([delivery, ...queued], partnerUrl)
    const state = await this.settle(delivery, generation, attempts)
    const last = attempts.at(-1)!
    return { state, sent: attempts.length, delivered: attempts.filter((a) => a.outcome.delivered)
      .length, status_code: last.outcome.status_code }
  }

  /**
   * A run's attempts: the deliveries in order over one session's connections, while each is
   * delivered, to one endpoint (a delivery bound elsewhere heads the lane's next run, which
   * asks that endpoint's breaker), and inside the run's time budget.
   */
  private async send(deliveries: DeliveryRow[], partnerUrl: string | null): Promise<Attempt[]> {
    const first = deliveries[0]!
    const url = first.endpoint_url ?? partnerUrl
    const signers = (await this.secrets.signing(first.partner_id)).map(
      (secret) => new Webhook(secret))
    const session = this.sender.session()
    const started = Date.now()
    const attempts: Attempt[] = []
    try {
      for (const next of deliveries) {
        // Room for one more attempt inside the job's lease, with a margin.
        if (attempts.length > 0 && Date.now() - started
          + this.options.limits.attempt_timeout_ms > this.runBudgetMs()) break
        if ((next.endpoint_url ?? partnerUrl) !== url) break
        const outcome = url ? await session.send(this.signed(next, url, signers))
          : { delivered: false, status_code: null, error: no_endpoint_error }
        attempts.push({ delivery: next, url, outcome, final: url === null })
        if (!outcome.delivered) break
      }
    } finally {
      session.close()
    }
    return attempts
  }

  /**
   * The lane's head waits for its endpoint: until `until` (backed off; a job of a new
   * generation is due then), or, paused (`until` null), with no job until it is resumed.
   * Nothing is attempted and no attempt counted.
   */
  private async putOff(seen: DeliveryRow, generation: number, until: Date | null): Promise<string> {
    return this.db.transaction().execute(async (trx) => {
      await lockLane(trx, seen.partner_id, seen.resource_id)
      const head = await findDelivery(trx, seen.event_id, { forUpdate: true })
      if (!head || head.state !== 'pending' || head.generation !== generation) return 'superseded'
      const now = this.clock.now()
      await updateDelivery(trx, head.event_id, { next_attempt_at: until }, now)
      if (until === null) return 'endpoint paused'
      await this.scheduleHead(trx, { ...head, next_attempt_at: until }, now)
      return 'endpoint backed off'
    })
  }

  /** A run ends well inside the job's lease, so no other instance takes the job over meanwhile. */
  private runBudgetMs(): number {
    return Math.max(this.options.limits.attempt_timeout_ms, webhookLeaseMs(this.options.limits) / 3)
  }

  private signed(delivery: DeliveryRow, url: string, signers: Webhook[]) {
    const sentAt = this.wallClock()
    return {
      url,
      body: delivery.body,
      sandbox: this.options.sandbox,
      headers: {
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signers.map((signer) => signer.sign(delivery.event_id, sentAt,
          delivery.body)).join(' '),
      },
    }
  }

  /**
   * Records a run's attempts in one transaction: the delivered ones, then the outcome of
   * the one that ended it (a retry at a later time, or failed), and schedules the lane's
   * next delivery. A run whose head was redelivered or rescheduled meanwhile records
   * nothing: the newer job makes its own attempts.
   */
  private async settle(seen: DeliveryRow, generation: number,
      attempts: Attempt[]): Promise<string> {
    return this.db.transaction().execute(async (trx) => {
      await lockLane(trx, seen.partner_id, seen.resource_id)
      const head = await findDelivery(trx, seen.event_id, { forUpdate: true })
      if (!head || head.state !== 'pending' || head.generation !== generation) return 'superseded'
      const now = this.clock.now()
      const delivered = attempts.filter((a) => a.outcome.delivered)
      for (const status of new Set(delivered.map((a) => a.outcome.status_code!))) {
        const ids = delivered.filter((a) => a.outcome.status_code === status).map(
          (a) => a.delivery.event_id)
        await markDelivered(trx, ids, status, now)
      }
      const ending = attempts.find((a) => !a.outcome.delivered)
      let state = 'delivered'
      if (ending) {
        const delivery = await findDelivery(trx, ending.delivery.event_id, { forUpdate: true })
        state = delivery && delivery.state === 'pending' ? await this.recordFailure(trx, delivery,
          ending, now) : 'superseded'
      }
      const url = attempts[0]?.url
      if (url) await recordEndpointOutcome(trx, seen.partner_id, url, { delivered:
        delivered.length > 0, error: ending ? ending.outcome.error ?? 'failed' : null }, now,
        this.options.limits.breaker)
      await this.scheduleHead(trx, await laneHead(trx, seen.partner_id, seen.resource_id), now)
      return state
    })
  }

  /**
   * An attempt that was not delivered: the next attempt after the backoff, or failed when it was
   * final or the retry window has passed.
   */
  private async recordFailure(trx: Kysely<Database>, delivery: DeliveryRow, ending: Attempt,
      now: Date): Promise<string> {
    const { outcome } = ending
    const attempts = delivery.attempts + 1
    const firstAttemptAt = delivery.first_attempt_at ?? now
    const attempt = { attempts, first_attempt_at: firstAttemptAt, last_attempt_at: now,
      last_status_code: outcome.status_code, last_error: outcome.error }
    if (ending.final
        || now.getTime() - firstAttemptAt.getTime() >= this.options.limits.retry_window_ms) {
      await updateDelivery(trx, delivery.event_id, { ...attempt, state: 'failed',
        next_attempt_at: null }, now)
      return 'failed'
    }
    const next = new Date(now.getTime() + retryDelayMs(this.options.limits, attempts))
    await updateDelivery(trx, delivery.event_id, { ...attempt, next_attempt_at: next }, now)
    return 'pending'
  }
}

interface Attempt {
  delivery: DeliveryRow
  /** Where it was sent (null: nowhere, there is no endpoint). */
  url: string | null
  outcome: WebhookOutcome
  /** Not worth a retry: there is no endpoint to send it to. */
  final: boolean
}

/** A job's lease: a run of attempts ends well inside it. */
function webhookLeaseMs(limits: WebhookLimits): number {
  return Math.max(60_000, limits.attempt_timeout_ms * 3)
}

/**
 * The wait after the `attempts`-th failed attempt: base, 2 × base, 4 × base, … up to the maximum.
 */
export function retryDelayMs(limits: Pick<WebhookLimits,
    'retry_backoff_base_ms' | 'retry_backoff_max_ms'>, attempts: number): number {
  return Math.min(limits.retry_backoff_max_ms, limits.retry_backoff_base_ms * 2 ** Math.min(30,
    Math.max(0, attempts - 1)))
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

/** A lane's key in a map: its partner and resource. */
function laneKey(partnerId: string, resourceId: string): string {
  return JSON.stringify([partnerId, resourceId])
}
