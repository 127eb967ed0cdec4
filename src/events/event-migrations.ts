import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The outbox's later migrations (0003_jobs_events, with jobs, made its table).

export const eventMigrations: Record<string, Migration> = {
  '0006_event_endpoints': {
    // A partner may send one resource's webhooks somewhere else than its endpoint (a bulk
    // batch's callback_url); the event carries that address.
    async up(db: Kysely<any>) {
      await runStatements(db, `alter table events add column endpoint_url text`)
    },
  },
  '0017_events_pending': {
    // The outbox's pending events are rows of their own (the event's seq), deleted when a
    // dispatch hands them over: marking an event dispatched used to write a new copy of the
    // whole event (its data included, about 1.2 kB of WAL) and its index entries; deleting a
    // pending row writes about 50 bytes. The events pending now are carried over.
    async up(db: Kysely<any>) {
      await runStatements(db, `
        create table events_pending (seq bigint primary key);
        insert into events_pending (seq) select seq from events where dispatched_at is null;
        drop index events_undispatched;
        alter table events drop column dispatched_at
      `)
    },
  },
}
