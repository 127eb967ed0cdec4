import { sql, type Kysely } from 'kysely'
import { dailyAtSast } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Database } from '../schema.ts'
import { customer_tx_types, type AccountStatusService } from './account-status-service.ts'

// Dormancy (RULINGS "Account lifecycle"): once a day (03:00 SAST, the `accounts.dormancy`
// job, once across instances by its day's key) every active account whose customer made no
// transaction (a payout, an internal payment out, a bulk batch, a card payment: credits from
// others and the bank's own fees do not count) for BANK_DORMANT_AFTER_DAYS, and that is older
// than that, becomes `dormant` by the bank itself (`changed_by` system, with
// `account.status_changed`). Each is checked again under its lock, so a payment that came
// meanwhile keeps it active. A dormant account takes credits; its next debit is refused until
// an operator reactivates it.

export const dormancy_job_kind = 'accounts.dormancy'

/** Minutes after SAST midnight the day's run is due. */
const dormancy_due_minutes = 3 * 60
/** Accounts looked at per query. */
const accounts_page = 500

export class Dormancy {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly status: AccountStatusService,
    private readonly afterDays: number,
    private readonly clock: Clock,
    jobs: JobRunner,
  ) {
    jobs.register({
      kind: dormancy_job_kind,
      attempts_max: 5,
      lease_ms: 120_000,
      backoff_base_ms: 60_000,
      backoff_max_ms: 60 * 60_000,
      plan: (now) => dailyAtSast(now, dormancy_due_minutes),
      run: async () => ({ ...(await this.run(this.clock.now())) }),
    })
  }

  /** Makes dormant every active account without customer activity since the cut-off. */
  async run(now: Date): Promise<{ dormant: number }> {
    const cutoff = new Date(now.getTime() - this.afterDays * 86_400_000)
    let after = '00000000-0000-0000-0000-000000000000'
    let dormant = 0
    for (;;) {
      const ids = await idleAccounts(this.db, cutoff, after, accounts_page)
      if (ids.length === 0) break
      for (const id of ids) {
        const view = await this.status.change({ kind: 'system' }, id, 'dormant',
          `no customer activity for ${this.afterDays} days`,
          async (trx) => (await idleAccounts(trx, cutoff, undefined, 1, id)).length === 1)
        if (view.status === 'dormant') dormant++
      }
      after = ids.at(-1)!
    }
    return { dormant }
  }
}

/** Active accounts opened before the cut-off with no customer transaction since, by id. */
async function idleAccounts(db: Kysely<Database>, cutoff: Date, after: string | undefined,
    limit: number, only?: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select a.id from accounts as a
    where a.status = 'active' and a.created_at < ${cutoff}
      ${after === undefined ? sql`` : sql`and a.id > ${after}`}
      ${only === undefined ? sql`` : sql`and a.id = ${only}`}
      and not exists (
        select 1 from transactions as t
        where t.account_id = a.id and t.created_at >= ${cutoff}
          and t.tx_type in (${sql.join(customer_tx_types.map((type) => sql`${type}`))}))
    order by a.id limit ${limit}`.execute(db)
  return rows.map((row) => row.id)
}
