import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The newest jobs of one kind: the overview's last clearing run (summary-store.ts
// lastClearingRun) and `ops.jobs.list` by kind (the console's clearing runs, bulk batches and
// debit-order runs). Without it both read every job of the kind through the (kind, key)
// unique index and sort them: on 2,000,000 jobs (PostgreSQL 15, EXPLAIN ANALYZE) the last
// of 4,000 clearing runs took 31–70 ms and 4,040 pages, the newest 20 of 200,000 bulk jobs
// 555 ms; with it, one backward step of this index, 0.1 and 0.2 ms. It costs every job row
// written one more index entry (a job's updates are not HOT already: jobs_state indexes
// updated_at).
export const jobKindMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create index jobs_kind_updated on jobs (kind, updated_at desc, id)
    `)
  },
}
