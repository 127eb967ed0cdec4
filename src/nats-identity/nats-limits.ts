import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { PartnerNatsLimits } from './nats-claims.ts'
import type { NatsIdentity } from './nats-identity.ts'
import * as store from './nats-identity-store.ts'

// What each partner's NATS account may use of the servers (nats-claims.ts, PartnerNatsLimits),
// shown and changed by operators beside its request budget (`ops.partner.limits`). A change
// is stored (nats_limits), signed into the partner's account JWT in the same transaction and
// pushed to the servers after commit, which apply it to the account's connections at once.
// On an open NATS server (no `bank nats init`) the limits are kept, not enforced.

export interface NatsLimitsState {
  limits: PartnerNatsLimits
  /** The limits an operator gave the partner; the others are the bank's defaults. */
  own: store.NatsLimitName[]
  /** Whether the servers enforce them (the bank is the NATS authority). */
  enforced: boolean
}

export class NatsLimits {
  /**
   * Awaited after a change on this instance: the partners' JetStream quotas in its `$SRV.INFO`
   * are recounted (jetstream-quota.ts), so `bank status` shows them once the change is answered.
   */
  onChanged: (() => Promise<void>) | undefined

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly identity: NatsIdentity | undefined,
  ) {}

  async of(partnerId: string): Promise<NatsLimitsState> {
    return { ...(await store.natsLimitsOf(this.db, partnerId)),
      enforced: this.identity !== undefined }
  }

  /** Gives the partner the limits in `change` (keeping its others), or the defaults (`reset`). */
  async change(partnerId: string,
      change: Partial<PartnerNatsLimits> | 'reset'): Promise<NatsLimitsState> {
    const changed = await this.db.transaction().execute(async (trx) => {
      const before = (await store.natsLimitsOf(trx, partnerId)).limits
      if (change === 'reset') await store.removeNatsLimits(trx, partnerId)
      else await store.setNatsLimits(trx, partnerId, change, this.clock.now())
      if (!this.identity || !(await store.accountOf(trx, partnerId))) return false
      // A quota raised must fit the servers; one lowered always may be (jetstream-quota.ts).
      const after = (await store.natsLimitsOf(trx, partnerId)).limits
      if (after.jetstream_disk > before.jetstream_disk
          || after.jetstream_memory > before.jetstream_memory) {
        await this.identity.assertQuotaFits(trx, partnerId, after)
      }
      await this.identity.resignPartner(trx, partnerId)
      return true
    })
    // Stored and signed: a server that cannot be told now gets it when the bank reconnects.
    if (changed) await this.identity?.publishAccount(partnerId)
    await this.onChanged?.()
    return this.of(partnerId)
  }

  /** Every partner account's JetStream file storage together (bytes). */
  async partnersJetStreamDisk(): Promise<number> {
    return store.partnersJetStreamDisk(this.db)
  }
}
