import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The per-endpoint circuit breaker (webhook-breaker.ts): one row per endpoint (a partner
// and a URL, its own or a batch's callback_url) whose latest attempts failed. A success
// deletes it, so the table holds only the endpoints that are failing, backed off or paused.
export const webhookBreakerMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table webhook_endpoint_health (
        partner_id uuid not null,
        url text not null,
        failures integer not null,
        failing_since timestamptz not null,
        backoff_until timestamptz,
        paused_at timestamptz,
        last_error text,
        updated_at timestamptz not null,
        primary key (partner_id, url)
      );
    `)
  },
}
