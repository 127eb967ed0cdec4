import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The tables of webhooks. A partner's endpoint and signing secrets, and one delivery row
// per partner event: the event's signed body is copied in when the event is handed over,
// so every attempt (and a redelivery) sends the same bytes without reading the outbox.
// Deliveries carry no foreign key to partners: an event of a partner this bank does not
// know must still be recorded, never block the outbox.
export const webhooksMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table webhook_endpoints (
        partner_id uuid primary key references partners(id),
        url text not null,
        updated_at timestamptz not null
      );
      create table webhook_secrets (
        id uuid primary key,
        partner_id uuid not null references partners(id),
        sealed text not null,
        created_at timestamptz not null,
        retires_at timestamptz
      );
      create unique index webhook_secrets_current on webhook_secrets (partner_id) where retires_at is null;
      create index webhook_secrets_partner on webhook_secrets (partner_id, created_at);
      create table webhook_deliveries (
        event_id uuid primary key,
        seq bigint not null,
        partner_id uuid not null,
        resource_id text not null,
        event_type text not null,
        endpoint_url text,
        body text not null,
        state text not null check (state in ('pending', 'delivered', 'failed')),
        attempts integer not null default 0,
        generation integer not null default 0,
        first_attempt_at timestamptz,
        last_attempt_at timestamptz,
        next_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_deliveries_lane on webhook_deliveries (partner_id, resource_id, seq) where state = 'pending';
      create index webhook_deliveries_partner on webhook_deliveries (partner_id, seq);
    `)
  },
}
