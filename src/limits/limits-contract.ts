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

/**
 * The bounds of what an operator may give a partner's NATS account (docs/operations.md, "NATS
 * limits per partner"): [least, most]. The payload's most is the servers' own `max_payload`
 * (`bank nats init` writes 1 MiB).
 */
export const nats_limit_bounds = {
  connections: [1, 100_000],
  subscriptions: [1, 1_000_000],
  payload: [1024, 1024 ** 2],
  jetstream_disk: [1, 1024 ** 5],
  jetstream_memory: [0, 1024 ** 4],
  jetstream_streams: [1, 1_000_000],
  jetstream_consumers: [1, 100_000],
} as const satisfies Record<string, readonly [number, number]>

type NatsLimitName = keyof typeof nats_limit_bounds
const natsLimitNames = Object.keys(nats_limit_bounds) as NatsLimitName[]

const natsLimitFields = Object.fromEntries(natsLimitNames.map((name) => [name,
  z.int(wholeNumber).min(nats_limit_bounds[name][0]).max(nats_limit_bounds[name][1])
    .optional()])) as Record<NatsLimitName, z.ZodOptional<z.ZodInt>>

export const natsLimitsView = z.object({
  /** Connections open at once in the partner's NATS account. */
  connections: z.int(),
  /** Subscriptions of each of its connections. */
  subscriptions: z.int(),
  /** The largest message it may publish, headers included (bytes). */
  payload: z.int(),
  /** JetStream file storage (bytes): its KYC/KYB dropboxes. */
  jetstream_disk: z.int(),
  /** JetStream memory storage (bytes). */
  jetstream_memory: z.int(),
  /** JetStream streams (each dropbox bucket is one). */
  jetstream_streams: z.int(),
  /** Consumers of each of its streams. */
  jetstream_consumers: z.int(),
  /** The limits an operator gave this partner; the others are the bank's defaults. */
  own: z.array(z.enum(natsLimitNames)),
  /**
   * True when the bank is the NATS authority (`bank nats init`), so the servers enforce them;
   * false on an open NATS server, where they are kept for when it is.
   */
  enforced: z.boolean(),
})

export type NatsLimitsView = z.infer<typeof natsLimitsView>

export const rateLimitsView = z.object({
  partner_id: z.string(),
  /** Requests per second each of the partner's credentials may sustain. */
  requests_per_second: z.int(),
  /** Requests each credential may send at once after a quiet spell (the bucket's size). */
  burst: z.int(),
  /** True when the partner has no limits of its own and the bank's defaults apply. */
  bank_default: z.boolean(),
  /** What its NATS account may use of the servers, each enforced by them. */
  nats: natsLimitsView,
})

export type RateLimitsView = z.infer<typeof rateLimitsView>

export const limitsOperations = {
  partnerLimits: operation({
    name: 'ops_partner_limits',
    sdk: 'partners.limits',
    subject: 'ops.partner.limits',
    permission: 'operator',
    summary:
      "Show a partner's limits, or set them. Its request budget: `requests_per_second` and " +
      '`burst` together give each of its credentials those limits (every instance applies a ' +
      "change within a second). Its NATS account's: `connections`, `subscriptions` (of each " +
      'connection), `payload` (bytes), `jetstream_disk`, `jetstream_memory` (bytes), ' +
      '`jetstream_streams` and `jetstream_consumers` (of each stream), each given alone or ' +
      'together, are signed into its account and pushed to the servers at once. `reset` ' +
      "returns all of them to the bank's defaults. A JetStream quota raised past what the " +
      "servers' JetStream storage holds beside the other partners' quotas is refused (409).",
    request: z.strictObject({
      partner_id: uuid(),
      requests_per_second: z.int(wholeNumber).min(1).max(requests_per_second_max).optional(),
      burst: z.int(wholeNumber).min(1).max(burst_max).optional(),
      ...natsLimitFields,
      reset: z.boolean({ error: 'must be true or false' }).optional(),
    }),
    response: rateLimitsView,
  }),
} as const
