import type { Kysely } from 'kysely'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Logger } from '../logger.ts'
import type { Database } from '../schema.ts'
import { entityScreened, personScreened } from './customer-names.ts'
import type { ScreeningReviews, ScreeningSubject } from './screening-reviews.ts'
import { rescreen_job_kind } from './screening-service.ts'

// The re-screening of every customer after a list load (`screening.rescreen`): each entity,
// and each user but a personal entity's own (the entity is that person), screened against the
// active lists as they are now, page by page, each customer in a transaction of its own. A
// hit opens a review (cause `rescreen`) as onboarding's would; a hit an operator cleared for
// the customer before does not. A retried run screens again from the start: a customer already
// in review joins its review, so nothing is held twice.

const page_rows = 500

export class Rescreening {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly reviews: ScreeningReviews,
    jobs: JobRunner,
    private readonly log: Logger,
  ) {
    jobs.register({
      kind: rescreen_job_kind,
      attempts_max: 5,
      lease_ms: 15 * 60_000,
      backoff_base_ms: 30_000,
      backoff_max_ms: 30 * 60_000,
      run: async (job) => ({ load_id: job.payload.load_id ?? null, ...(await this.run()) }),
    })
  }

  async run(): Promise<{ customers_screened: number; reviews_opened: number }> {
    const counts = { customers_screened: 0, reviews_opened: 0 }
    await this.entities(counts)
    await this.users(counts)
    this.log.info(counts, 'screening: customers re-screened')
    return counts
  }

  private async entities(counts: Counts): Promise<void> {
    for (let after = '0'; ;) {
      const rows = await this.db.selectFrom('entities')
        .select(['id', 'created_seq', 'partner_id', 'entity_type', 'name', 'trading_name',
          'first_name', 'last_name', 'date_of_birth', 'id_number'])
        .where('created_seq', '>', after).orderBy('created_seq').limit(page_rows).execute()
      for (const row of rows) {
        await this.one(counts, { partnerId: row.partner_id, entityId: row.id,
          subject: 'entity', subjectId: row.id, cause: 'rescreen',
          screened: entityScreened(row) })
      }
      if (rows.length < page_rows) return
      after = String(rows[rows.length - 1]!.created_seq)
    }
  }

  private async users(counts: Counts): Promise<void> {
    for (let after = '0'; ;) {
      const rows = await this.db.selectFrom('users')
        .select(['id', 'created_seq', 'partner_id', 'entity_id', 'first_name', 'last_name',
          'date_of_birth', 'id_number'])
        .where('is_entity_holder', '=', false)
        .where('created_seq', '>', after).orderBy('created_seq').limit(page_rows).execute()
      for (const row of rows) {
        await this.one(counts, { partnerId: row.partner_id, entityId: row.entity_id,
          subject: 'user', subjectId: row.id, cause: 'rescreen', screened: personScreened(row) })
      }
      if (rows.length < page_rows) return
      after = String(rows[rows.length - 1]!.created_seq)
    }
  }

  private async one(counts: Counts,
      subject: ScreeningSubject): Promise<void> {
    const checked = await this.reviews.check(subject)
    const outcome = await this.db.transaction().execute((trx) => this.reviews.hold(trx, checked))
    counts.customers_screened++
    if (outcome.status === 'review') counts.reviews_opened++
  }
}

interface Counts {
  customers_screened: number
  reviews_opened: number
}
