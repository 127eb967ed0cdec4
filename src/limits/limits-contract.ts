import { z } from 'zod'
import { uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Request budgets (docs/guides/wire-conventions.md): every credential has a token bucket, by
// default the bank's (BANK_RATE_PER_SECOND, BANK_RATE_BURST); an operator may give a
// partner limits of its own, which each of its credentials then has. Over its budget a
// request is refused with 429 `rate_limited` and a `Retry-After-Ms` header, and changes nothing.

/** The highest sustained rate a credential may be given (requests per second). */
export const requests_per_second_max = 1_000_000
/** The most requests a credential may be given to send at once, after a quiet spell. */
export const burst_max = 10_000_000

const wholeNumber = { error: 'must be a whole number' }

export const rateLimitsView = z.object({
  partner_id: z.string(),
  /** Requests per second each of the partner's credentials may sustain. */
  requests_per_second: z.int(),
  /** Requests each credential may send at once after a quiet spell (the bucket's size). */
  burst: z.int(),
  /** True when the partner has no limits of its own and the bank's defaults apply. */
  bank_default: z.boolean(),
})

export type RateLimitsView = z.infer<typeof rateLimitsView>

export const limitsOperations = {
  partnerLimits: operation({
    name: 'ops_partner_limits',
    sdk: 'partners.limits',
    subject: 'ops.partner.limits',
    permission: 'operator',
    summary:
      "Show a partner's request budget, or set it: `requests_per_second` and `burst` together " +
      "give each of its credentials those limits; `reset` returns it to the bank's defaults " +
        "(BANK_RATE_PER_SECOND, BANK_RATE_BURST). Every instance " +
      'applies a change within a second.',
    request: z.strictObject({
      partner_id: uuid(),
      requests_per_second: z.int(wholeNumber).min(1).max(requests_per_second_max).optional(),
      burst: z.int(wholeNumber).min(1).max(burst_max).optional(),
      reset: z.boolean({ error: 'must be true or false' }).optional(),
    }),
    response: rateLimitsView,
  }),
} as const
