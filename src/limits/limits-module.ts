import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { rateLimitsMigration } from './limits-migration.ts'
import { rate_limiter_defaults } from './rate-limiter.ts'
import { burst_max, requests_per_second_max } from './limits-contract.ts'

// Request budgets: the per-credential token bucket and partners' limits.
export const limitsModule: Module = {
  name: 'limits',
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
