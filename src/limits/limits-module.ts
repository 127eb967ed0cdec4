import type { Module } from '../module.ts'
import { systemClock } from '../clock.ts'
import { RateLimiter, databaseTokens } from './rate-limiter.ts'
import { LimitsService } from './limits-service.ts'
import type { RateLimitTables } from './limits-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { rateLimitsMigration } from './limits-migration.ts'
import { rate_limiter_defaults } from './rate-limiter.ts'
import { burst_max, requests_per_second_max } from './limits-contract.ts'

/** What the module builds: its members of the bank's Services. */
export interface LimitServices {
  /** Each credential's request budget, taken by the endpoint wrapper (rate-limiter.ts). */
  limiter: RateLimiter
  /** Partners' request budgets for operators (`ops.partner.limits`). */
  limits: LimitsService
}

// Request budgets: the per-credential token bucket and partners' limits (their NATS
// accounts' limits are nats-identity's, shown and set beside them).
export const limitsModule: Module<LimitServices, RateLimitTables> = {
  name: 'limits',
  needs: ['nats-identity'],
  services: (s, { db, clock, config, given }) => {
    // Request budgets are wall-clock time, like job leases: the sandbox's moves do not refill
    // them.
    const limiter = new RateLimiter(databaseTokens(db), given.wallClock ?? systemClock,
      { ...rate_limiter_defaults, defaults: config.rateLimits,
        card_network: config.cardNetworkRateLimits })
    return { limiter, limits: new LimitsService(db, clock, limiter, config.rateLimits,
      s.natsLimits) }
  },
  migrations: {
    '0021_rate_limits': rateLimitsMigration,
  },
  limits: {
    // A partner's own limits are bounded by these; the bank's defaults are configured
    // (BANK_RATE_PER_SECOND, BANK_RATE_BURST).
    requests_per_second_max,
    burst_max,
    ...rate_limiter_defaults,
  },
  endpoints: (s) => [
    endpoint(contract.limits.partnerLimits, (r) => s.limits.partnerLimits(r)),
  ],
}
