import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Whose sandbox clock a job runs by: the partner whose work it is when that partner's clock
// may be ahead of the bank's (src/sandbox/sandbox-clock.ts), '' for the bank's own. A
// job's `due_at` stays bank time; a partner's advance brings its jobs' due times nearer by
// as much as its clock moved (shiftPartnerJobs), which the index finds.
export const jobClockMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table jobs add column clock_partner text not null default '';
      create index jobs_clock_partner on jobs (clock_partner, due_at) where clock_partner <> ''
        and state = 'queued'
    `)
  },
}
