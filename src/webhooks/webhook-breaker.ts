import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import type { EndpointState } from './webhook-contract.ts'
import type { WebhookBreakerLimits } from './webhook-limits.ts'
import type { WebhookEndpointHealthTable } from './webhook-tables.ts'

// The per-endpoint circuit breaker (Svix's model). An endpoint is a partner and a URL (its
// own endpoint, or a batch's callback_url). Each run of attempts that ends records its
// endpoint's outcome: a delivery forgets the endpoint's failures; a failure (an answer that
// is not 2xx, no connection, or no answer within the attempt's time limit) counts one more
// in a row. After `open_after_failures` in a row the endpoint is backed off: until its
// backoff ends (30 s, doubling with each further failure up to an hour) no delivery of it
// is attempted; a delivery job that finds it so puts its lane's head off to that time and
// ends at once, so waiting deliveries hold no slot. The first attempt after the backoff is
// the probe: delivered, the endpoint is healthy again; failed, it is backed off longer.
// An endpoint whose attempts have all failed for `pause_after_ms` (and at least
// `pause_failures_min` times) is paused: its deliveries stay pending and unattempted (no
// job, so no retry window runs out) until an operator resumes it (`ops.webhook.resume_endpoint`)
// or the partner sets its endpoint again; resuming sends them, in order, with a fresh retry
// window. The rows live in `webhook_endpoint_health`, one per failing endpoint, read and
// written by every instance.

export type EndpointHealthRow = Selectable<WebhookEndpointHealthTable>

export type { EndpointState } from './webhook-contract.ts'

/** An endpoint's state: failing (below the threshold), backed off, or paused. */
export function endpointState(row: EndpointHealthRow, limits: WebhookBreakerLimits): EndpointState {
  if (row.paused_at) return 'paused'
  return row.failures >= limits.open_after_failures ? 'backed_off' : 'failing'
}

/** Whether a delivery of the endpoint may be attempted now. */
export type EndpointGate =
  | { open: true }
  | { open: false; paused: true }
  | { open: false; paused: false; until: Date }

export async function endpointGate(db: Kysely<Database>, partnerId: string, url: string,
    now: Date): Promise<EndpointGate> {
  const row = await db.selectFrom('webhook_endpoint_health').select(['backoff_until', 'paused_at'])
    .where('partner_id', '=', partnerId).where('url', '=', url).executeTakeFirst()
  if (row?.paused_at) return { open: false, paused: true }
  if (row?.backoff_until && row.backoff_until > now) return { open: false, paused: false,
    until: row.backoff_until }
  return { open: true }
}

/** What a run of attempts at one endpoint came to. */
export interface EndpointOutcome {
  /** Some attempt was delivered. */
  delivered: boolean
  /** The failure that ended the run, if one did. */
  error: string | null
}

/** Records a run's outcome at its endpoint (in the run's settling transaction). */
export async function recordEndpointOutcome(trx: Kysely<Database>, partnerId: string,
    url: string, outcome: EndpointOutcome, now: Date, limits: WebhookBreakerLimits): Promise<void> {
  const key = (q: any) => q.where('partner_id', '=', partnerId).where('url', '=', url)
  if (outcome.error === null) {
    if (outcome.delivered) await key(trx.deleteFrom('webhook_endpoint_health')).execute()
    return
  }
  await trx.insertInto('webhook_endpoint_health').values({ partner_id: partnerId, url,
    failures: 0, failing_since: now, updated_at: now }).onConflict((oc) => oc.columns(
    ['partner_id', 'url']).doNothing()).execute()
  const row: EndpointHealthRow = await key(trx.selectFrom('webhook_endpoint_health').selectAll())
    .forUpdate().executeTakeFirstOrThrow()
  // A delivery earlier in the run ended the previous run of failures.
  const failures = (outcome.delivered ? 0 : row.failures) + 1
  const since = outcome.delivered || row.failures === 0 ? now : row.failing_since
  const backoff = failures >= limits.open_after_failures
    ? new Date(now.getTime() + breakerBackoffMs(limits, failures)) : null
  const pause = failures >= limits.pause_failures_min
    && now.getTime() - since.getTime() >= limits.pause_after_ms
  await key(trx.updateTable('webhook_endpoint_health').set({ failures, failing_since: since,
    backoff_until: backoff, paused_at: row.paused_at ?? (pause ? now : null),
    last_error: outcome.error.slice(0, 500), updated_at: now })).execute()
}

/** The backoff after the `failures`-th failure in a row: base, 2 × base, … up to the maximum. */
export function breakerBackoffMs(limits: WebhookBreakerLimits, failures: number): number {
  const doublings = Math.min(30, Math.max(0, failures - limits.open_after_failures))
  return Math.min(limits.backoff_max_ms, limits.backoff_base_ms * 2 ** doublings)
}

/** Forgets the failures of the partner's endpoints (of one URL, when given); answers their URLs. */
export async function clearEndpointHealth(trx: Kysely<Database>, partnerId: string,
    url?: string): Promise<string[]> {
  let query = trx.deleteFrom('webhook_endpoint_health').where('partner_id', '=', partnerId)
  if (url !== undefined) query = query.where('url', '=', url)
  return (await query.returning('url').execute()).map((row) => row.url)
}

export interface EndpointHealthFilter {
  partnerId?: string | undefined
  state?: EndpointState | undefined
  limit: number
}

/** Failing endpoints for operators, longest failing first. */
export async function pageEndpointHealth(db: Kysely<Database>, filter: EndpointHealthFilter,
    limits: WebhookBreakerLimits): Promise<EndpointHealthRow[]> {
  const open = limits.open_after_failures
  const state = {
    paused: sql`paused_at is not null`,
    backed_off: sql`paused_at is null and failures >= ${open}`,
    failing: sql`paused_at is null and failures < ${open}`,
  }
  const { rows } = await sql<EndpointHealthRow>`
    select * from webhook_endpoint_health
    where ${filter.partnerId === undefined ? sql`true` : sql`partner_id = ${filter.partnerId}`}
      and ${filter.state === undefined ? sql`true` : state[filter.state]}
    order by failing_since, partner_id, url
    limit ${filter.limit}`.execute(db)
  return rows
}
