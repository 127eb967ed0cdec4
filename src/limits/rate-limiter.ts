import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { RateLimited } from '../errors.ts'
import { leaseTokens, type Lease, type LeaseRequest, type Limits } from './limits-store.ts'

// Request budgets (docs/operations.md): each credential has a token bucket that holds
// across every instance on one database, without a database write per request.
//
// The bucket itself is a row (rate_buckets). An instance leases tokens from it in chunks of
// about `lease_ms` worth of the rate with one atomic upsert (refilled for the time elapsed,
// capped at the burst, under the limits in force at that moment) and spends them locally:
// most requests cost a map lookup. Leased tokens lapse after `lease_ttl_ms`, so a change of
// limits reaches every instance within that time, and a token held back by an instance that
// stopped getting requests is not kept for later. What instances hold was taken from the
// bucket, so they never spend more than it gave; the bucket may refill while they hold
// their chunks, so a burst after a quiet spell can exceed `burst` by at most one chunk per
// instance. When the bucket is empty, the instance refuses that credential's requests by
// itself until a chunk will have refilled, so a caller far over budget costs the database
// a statement per chunk of the rate, not one per request.
//
// Time is the injected clock (the bank's wall clock): with a clock that stands still
// nothing refills, and all instances together take exactly `burst` requests.

/**
 * A request costs one token for each 64 KiB of it begun: a partner's budget bounds the bytes
 * the bank reads and parses for it, not only its requests (a 768 KiB bulk payment costs 12).
 */
export const request_token_bytes = 64 * 1024

/** The tokens a request of `bytes` costs. */
export const requestCost = (bytes: number): number =>
  Math.max(1, Math.ceil(bytes / request_token_bytes))

export interface RateLimiterOptions {
  /**
   * The bank's limits, for credentials whose partner has none of its own (BANK_RATE_PER_SECOND,
   * BANK_RATE_BURST).
   */
  defaults: Limits
  /**
   * A card network's credentials' limits (BANK_CARD_NETWORK_RATE_PER_SECOND, _BURST): it
   * belongs to no partner, and carries every cardholder's payments; the defaults when absent.
   */
  card_network?: Limits | undefined
  /**
   * A lease takes this many milliseconds' worth of the rate (at least one token, at most the
   * burst).
   */
  lease_ms: number
  /** Leased tokens not spent within this time lapse. */
  lease_ttl_ms: number
  /**
   * Credentials whose leases one instance remembers; the oldest is forgotten beyond it (its tokens
   * lapse).
   */
  buckets_max: number
}

/**
 * Where leases come from: the shared buckets in the database (bench/micro.ts has one in memory).
 */
export interface TokenSource {
  lease(request: LeaseRequest): Promise<Lease>
}

export function databaseTokens(db: Kysely<Database>): TokenSource {
  return { lease: (request) => leaseTokens(db, request) }
}

export const rate_limiter_defaults: Omit<RateLimiterOptions, 'defaults' | 'card_network'> =
  { lease_ms: 100, lease_ttl_ms: 1000, buckets_max: 10_000 }

/** One credential's budget on this instance. */
interface LocalBucket {
  partnerId: string | null
  /** Tokens leased and not yet spent. */
  tokens: number
  /** When they lapse (ms, on the limiter's clock). */
  expiresAtMs: number
  /** The shared bucket was empty: refuse here until then without asking again. */
  refusedUntilMs: number
  /** The limits the last lease was taken under (for the refusal's message and wait). */
  limits: Limits
  /** The lease being taken, which every request of the credential waiting here shares. */
  leasing: Promise<void> | undefined
}

export interface RateLimiterCounts {
  /** Requests let through. */
  taken: number
  /** Requests refused with 429. */
  refused: number
  /** Statements sent to the shared buckets. */
  leases: number
}

export class RateLimiter {
  private readonly buckets = new Map<string, LocalBucket>()
  private readonly counted: RateLimiterCounts = { taken: 0, refused: 0, leases: 0 }

  constructor(
    private readonly source: TokenSource,
    private readonly clock: Clock,
    private readonly options: RateLimiterOptions,
  ) {}

  /**
   * Spends `cost` tokens of the caller's budget (requestCost; at most its burst): returns
   * nothing when leased tokens were at hand, a promise when a lease must be taken first;
   * throws (or rejects with) RateLimited when the budget is spent.
   */
  take(caller: Caller, cost = 1): Promise<void> | undefined {
    const bucket = this.buckets.get(caller.credentialId)
    if (bucket !== undefined && bucket.leasing === undefined) {
      const nowMs = this.clock.now().getTime()
      const needed = Math.min(cost, bucket.limits.burst)
      if (bucket.tokens >= needed && nowMs < bucket.expiresAtMs) {
        bucket.tokens -= needed
        this.counted.taken++
        return undefined
      }
      if (nowMs < bucket.refusedUntilMs) throw this.refusal(bucket, nowMs)
    }
    return this.takeLeased(caller, cost)
  }

  /** What this instance let through, refused and leased since it started. */
  counts(): RateLimiterCounts {
    return { ...this.counted }
  }

  /**
   * Forgets this instance's leases of a partner's credentials, so that its new limits apply here at
   * the next request.
   */
  forgetPartner(partnerId: string): void {
    for (const [credentialId, bucket] of this.buckets) {
      if (bucket.partnerId === partnerId && bucket.leasing === undefined) this.buckets.delete(
        credentialId)
    }
  }

  /**
   * Waits for a lease (one at a time per credential: requests arriving meanwhile share it),
   * then takes `cost` tokens from it. Each lease either grants the cost of the request it was
   * taken for, so at least one waiter goes on, or grants less and refuses until the rest will
   * have refilled, so every waiter that it does not cover is refused: the loop ends.
   */
  private async takeLeased(caller: Caller, cost: number): Promise<void> {
    for (;;) {
      const bucket = this.bucketOf(caller)
      const needed = Math.min(cost, bucket.limits.burst)
      bucket.leasing ??= this.lease(caller, bucket, needed).finally(() => {
        bucket.leasing = undefined
      })
      await bucket.leasing
      const nowMs = this.clock.now().getTime()
      const taken = Math.min(cost, bucket.limits.burst)
      if (bucket.tokens >= taken && nowMs < bucket.expiresAtMs) {
        bucket.tokens -= taken
        this.counted.taken++
        return
      }
      if (nowMs < bucket.refusedUntilMs) throw this.refusal(bucket, nowMs)
    }
  }

  private async lease(caller: Caller, bucket: LocalBucket, cost: number): Promise<void> {
    const nowMs = this.clock.now().getTime()
    this.counted.leases++
    const lease = await this.source.lease({
      credentialId: caller.credentialId,
      partnerId: caller.partnerId,
      nowMs,
      defaults: (caller.role === 'card_network' ? this.options.card_network : undefined)
        ?? this.options.defaults,
      leaseSeconds: this.options.lease_ms / 1000,
      cost,
    })
    bucket.limits = { requests_per_second: lease.requests_per_second, burst: lease.burst }
    // Tokens still held here have lapsed, or are fewer than the request needs: the new lease
    // takes their place (what they were taken from the bucket is not given back).
    bucket.tokens = lease.leased
    // Counted from the answer, not the asking: a slow statement must not hand over tokens
    // already lapsed (the waiters would lease again and again, draining the bucket).
    bucket.expiresAtMs = this.clock.now().getTime() + this.options.lease_ttl_ms
    // When it held less than the request's cost, ask again once a whole chunk will have
    // refilled: one statement per chunk of the rate, however hard the caller tries.
    const needed = Math.min(cost, lease.burst)
    bucket.refusedUntilMs = lease.leased >= needed ? 0
      : nowMs + ((this.chunkOf(lease, needed) - lease.tokens) * 1000) / lease.requests_per_second
  }

  /** The tokens a lease asks for under these limits (as leaseTokens computes it). */
  private chunkOf(limits: Limits, cost: number): number {
    return Math.min(limits.burst,
      Math.max(cost, Math.ceil((limits.requests_per_second * this.options.lease_ms) / 1000)))
  }

  private bucketOf(caller: Caller): LocalBucket {
    let bucket = this.buckets.get(caller.credentialId)
    if (bucket === undefined) {
      if (this.buckets.size >= this.options.buckets_max) this.forgetOne()
      bucket = { partnerId: caller.partnerId, tokens: 0, expiresAtMs: 0, refusedUntilMs: 0,
        limits: this.options.defaults, leasing: undefined }
      this.buckets.set(caller.credentialId, bucket)
    }
    return bucket
  }

  /**
   * Makes room: the oldest credential not waiting for a lease is forgotten (its leased tokens
   * lapse).
   */
  private forgetOne(): void {
    for (const [credentialId, bucket] of this.buckets) {
      if (bucket.leasing === undefined) {
        this.buckets.delete(credentialId)
        return
      }
    }
  }

  private refusal(bucket: LocalBucket, nowMs: number): RateLimited {
    this.counted.refused++
    const waitMs = Math.max(1, Math.ceil(bucket.refusedUntilMs - nowMs))
    const { requests_per_second, burst } = bucket.limits
    return new RateLimited(
      `this credential's request budget is spent (${requests_per_second} requests per second, ` +
        `burst ${burst}); retry in ${waitMs} ms`,
      waitMs,
    )
  }
}
