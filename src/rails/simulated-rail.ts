import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { Rail, RailReturn } from './rail.ts'

/** The most returns one collectReturns call hands out; the rest follow in later calls. */
export const returns_batch_max = 1000

// What is left of the simulated rail that settled every payout inside the bank before the ISO
// 20022 rail (iso-rail.ts): the returns it had recorded for the "returned" recipient
// (`simulated_rail_returns`) and not yet handed out. A bank upgraded from that version
// books them at its clearing runs, as before, until none is left; nothing records new ones.
export class SimulatedRail implements Rail {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async collectReturns(): Promise<RailReturn[]> {
    const rows = await this.db
      .selectFrom('simulated_rail_returns')
      .select(['tx_id', 'reason'])
      .where('collected_at', 'is', null)
      .orderBy('created_at')
      .orderBy('tx_id')
      .limit(returns_batch_max)
      .execute()
    return rows.map((row) => ({ tx_id: row.tx_id, reason: row.reason }))
  }

  async acknowledgeReturns(txIds: readonly string[]): Promise<void> {
    if (txIds.length === 0) return
    await this.db
      .updateTable('simulated_rail_returns')
      .set({ collected_at: this.clock.now() })
      .where('tx_id', 'in', txIds)
      .where('collected_at', 'is', null)
      .execute()
  }
}
