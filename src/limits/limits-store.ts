import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.ts'

// The SQL of request budgets: the limits operators give partners, and the one statement
// that leases tokens from a credential's shared bucket (see rate-limiter.ts).

export interface Limits {
  requests_per_second: number
  burst: number
}

export interface Lease extends Limits {
  /** Tokens granted to the leasing instance (0 when the bucket holds less than one). */
  leased: number
  /** Tokens left in the shared bucket after this lease. */
  tokens: number
}

export interface LeaseRequest {
  credentialId: string
  /** The credential's partner (its limits, if it has its own); null for an operator. */
  partnerId: string | null
  /** The leasing instance's time, in ms since the epoch. */
  nowMs: number
  /** The bank's limits, for a credential whose partner has none of its own. */
  defaults: Limits
  /**
   * A lease takes at most this many seconds' worth of the rate (at least one token, at most the
   * burst).
   */
  leaseSeconds: number
  /**
   * The tokens the request waiting for this lease costs (1 to the burst): the lease takes at
   * least that many when the bucket holds them.
   */
  cost: number
}

// The bucket's tokens now: what the last lease left, refilled at the rate for the time since
// (never backwards: an instance whose clock is behind refills nothing), capped at the burst.
// Written once here and used twice below: every SET expression reads the row as it was
// before this statement, so the grant and the tokens left are computed from the same state.
const available = sql.raw(
  'least(excluded.burst, b.tokens + excluded.requests_per_second::float8 * greatest(0, ' +
    'excluded.refilled_ms - b.refilled_ms) / 1000.0)',
)
const granted = sql`least(excluded.leased, floor(${available}))::int`

/**
 * Takes up to a chunk of tokens from the credential's shared bucket in one atomic statement,
 * under the limits in force now (the partner's own, else the bank's): a bucket seen for the
 * first time starts full. An upsert locks the row, so instances leasing at once each see the
 * tokens the other left: together they are never granted more than the bucket held.
 */
export async function leaseTokens(db: Kysely<Database>, request: LeaseRequest): Promise<Lease> {
  const { credentialId, partnerId, nowMs, defaults, leaseSeconds, cost } = request
  const { rows } = await sql<Lease>`
    insert into rate_buckets as b (credential_id, requests_per_second, burst, tokens, leased, refilled_ms)
    select ${credentialId}::uuid, l.rate, l.burst, l.burst - l.chunk, l.chunk, ${nowMs}::bigint
    from (
      select rate, burst,
        least(burst, greatest(${cost}::int, ceil(rate * ${leaseSeconds}::float8)))::int as chunk
      from (
        select coalesce(r.requests_per_second, ${defaults.requests_per_second}::int) as rate,
               coalesce(r.burst, ${defaults.burst}::int) as burst
        from (select 1) as one left join rate_limits r on r.partner_id = ${partnerId}::uuid
      ) as own
    ) as l
    on conflict (credential_id) do update set
      leased = ${granted},
      tokens = ${available} - ${granted},
      refilled_ms = greatest(b.refilled_ms, excluded.refilled_ms),
      requests_per_second = excluded.requests_per_second,
      burst = excluded.burst
    returning leased, tokens, requests_per_second, burst
  `.execute(db)
  const lease = rows[0]
  if (!lease) throw new Error('the rate bucket upsert returned no row')
  return { leased: Number(lease.leased), tokens: Number(lease.tokens),
    requests_per_second: Number(lease.requests_per_second), burst: Number(lease.burst) }
}

/** The limits an operator gave the partner, if any. */
export async function ownLimits(db: Kysely<Database>,
    partnerId: string): Promise<Limits | undefined> {
  return db.selectFrom('rate_limits').select(['requests_per_second', 'burst']).where('partner_id',
    '=', partnerId).executeTakeFirst()
}

export async function setOwnLimits(db: Kysely<Database>, partnerId: string, limits: Limits,
    at: Date): Promise<void> {
  await db
    .insertInto('rate_limits')
    .values({ partner_id: partnerId, ...limits, updated_at: at })
    .onConflict((oc) => oc.column('partner_id').doUpdateSet({ ...limits, updated_at: at }))
    .execute()
}

export async function removeOwnLimits(db: Kysely<Database>, partnerId: string): Promise<void> {
  await db.deleteFrom('rate_limits').where('partner_id', '=', partnerId).execute()
}
