import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Delivery jobs name their partner as their share of the job runner's slots (0019 added
// the column; webhook-service.ts sets it from now on). Jobs queued or running before that
// get their delivery's partner here, so a backlog carried over an upgrade is shared out
// by partner like any other instead of waiting together in the bank's own share ''.
export const webhookJobSharesMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      update jobs set share = d.partner_id::text
      from webhook_deliveries d
      where jobs.kind = 'webhook.deliver' and jobs.state in ('queued', 'running')
        and d.event_id = (jobs.payload->>'event_id')::uuid
    `)
  },
}
