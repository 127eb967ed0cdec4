import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { Invalid, NotFound } from '../errors.ts'
import { partnerExists } from '../partners/partner-store.ts'
import type { NatsLimits, NatsLimitsState } from '../nats-identity/nats-limits.ts'
import type { PartnerNatsLimits } from '../nats-identity/nats-claims.ts'
import { nats_limit_bounds, type NatsLimitsView, type RateLimitsView } from './limits-contract.ts'
import { ownLimits, removeOwnLimits, setOwnLimits, type Limits } from './limits-store.ts'
import type { RateLimiter } from './rate-limiter.ts'

// The operators' side of request budgets (`ops.partner.limits`): a partner's limits shown,
// set or returned to the bank's defaults. Every instance's leases follow a change within
// their time to live; this instance forgets its leases of the partner at once. Its NATS
// account's limits are shown and set beside them (nats-identity/nats-limits.ts).

export type PartnerLimitsRequest = {
  partner_id: string
  requests_per_second?: number | undefined
  burst?: number | undefined
  reset?: boolean | undefined
} & { [K in keyof PartnerNatsLimits]?: number | undefined }

export class LimitsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    /** The bank's limits (BANK_RATE_PER_SECOND, BANK_RATE_BURST). */
    private readonly defaults: Limits,
    /** The partners' NATS accounts' limits. */
    private readonly nats: NatsLimits,
  ) {}

  async partnerLimits(request: PartnerLimitsRequest): Promise<RateLimitsView> {
    const change = limitsChange(request)
    const natsChange = natsLimitsChange(request)
    const partnerId = request.partner_id
    if (!(await partnerExists(this.db, partnerId))) throw new NotFound('partner')
    if (change === 'reset') await removeOwnLimits(this.db, partnerId)
    else if (change) await setOwnLimits(this.db, partnerId, change, this.clock.now())
    if (change) this.limiter.forgetPartner(partnerId)
    const nats = natsChange ? await this.nats.change(partnerId, natsChange)
      : await this.nats.of(partnerId)
    const own = change === 'reset' ? undefined : (change ?? (await ownLimits(this.db, partnerId)))
    const limits = own ?? this.defaults
    return { partner_id: partnerId, requests_per_second: limits.requests_per_second,
      burst: limits.burst, bank_default: own === undefined, nats: natsView(nats) }
  }
}

/** The NATS limits the request gives (those it names), `reset`, or nothing. */
function natsLimitsChange(request: PartnerLimitsRequest): Partial<PartnerNatsLimits> | 'reset'
    | undefined {
  const change: Partial<PartnerNatsLimits> = {}
  for (const name of Object.keys(nats_limit_bounds) as Array<keyof PartnerNatsLimits>) {
    const value = request[name]
    if (value !== undefined) change[name] = value
  }
  const setting = Object.keys(change).length > 0
  if (request.reset === true && setting) throw Invalid.field('reset',
    `cannot be given with ${Object.keys(change).join(', ')}`)
  if (request.reset === true) return 'reset'
  return setting ? change : undefined
}

function natsView({ limits, own, enforced }: NatsLimitsState): NatsLimitsView {
  return { ...limits, own, enforced }
}

/** What the request asks for: new limits, a reset, or nothing (show them). */
function limitsChange(request: PartnerLimitsRequest): Limits | 'reset' | undefined {
  const { requests_per_second, burst } = request
  const setting = requests_per_second !== undefined || burst !== undefined
  if (request.reset === true && setting) throw Invalid.field('reset',
    'cannot be given with requests_per_second or burst')
  if (request.reset === true) return 'reset'
  if (!setting) return undefined
  // A rate without a burst (or the reverse) would leave the other to a default the operator did not
  // see.
  if (requests_per_second === undefined) throw Invalid.field('requests_per_second',
    'is required with burst')
  if (burst === undefined) throw Invalid.field('burst', 'is required with requests_per_second')
  return { requests_per_second, burst }
}
