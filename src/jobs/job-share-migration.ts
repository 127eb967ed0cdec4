import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Shares of job capacity (job-runner.ts, `share_running_max`). A job done on someone's
// behalf names whose work it is in `share` (a webhook delivery: the partner); '' is the
// bank's own work. The claim of such a kind walks the shares that have queued jobs, one
// index probe each (the first index), and counts each share's running jobs (the second,
// which holds only the few jobs running at a time), so its cost grows with the number of
// partners, not with the length of one partner's backlog.
export const jobSharesMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table jobs add column share text not null default '';
      create index jobs_share_queued on jobs (kind, share, due_at, id) where state = 'queued';
      create index jobs_share_running on jobs (kind, share) where state = 'running'
    `)
  },
}
