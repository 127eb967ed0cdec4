import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/**
 * What operators read of the rail (rails-ops.ts) through indexes: the messages newest first
 * (one row per RTC, so the table grows with every real-time payout), and the payouts with no
 * final answer yet, which the list of unanswered payouts and the metrics read. The partial
 * index's predicate is the one those queries write, so the planner can prove it holds.
 */
export const railOpsIndexesMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create index rail_messages_by_time on rail_messages (created_at, direction, message_id);
      create index rail_submissions_open on rail_submissions (message_id)
        where status is null or status not in ('ACSC', 'ACCC', 'RJCT');
    `)
  },
}
