import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The migration that brought background work and the outbox in together: it made `jobs`
// and `events` (the outbox's, src/events/) in one step, and stays whole here, with jobs.

export const jobsMigrations: Record<string, Migration> = {
  '0003_jobs_events': {
    // One mechanism for background work (src/jobs) and one outbox (src/events). A job is a
    // row with a due time; an instance takes due rows with `for update skip locked` and a
    // lease, so each runs on one instance at a time and a dead instance's work is taken
    // over when its lease expires. Clearing runs move onto it: each cycle is one job row
    // (unique per kind and key), which replaces `clearing_runs`.
    async up(db: Kysely<any>) {
      await runStatements(db, `
        create table jobs (
          id uuid primary key,
          kind text not null,
          key text not null,
          payload jsonb not null default '{}',
          state text not null check (state in ('queued', 'running', 'done', 'dead')),
          due_at timestamptz not null,
          attempts integer not null default 0 check (attempts >= 0),
          attempts_max integer not null check (attempts_max >= 1),
          lease_ms integer not null check (lease_ms >= 1000),
          lease_owner text,
          lease_expires_at timestamptz,
          last_error text,
          result jsonb,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          started_at timestamptz,
          finished_at timestamptz,
          unique (kind, key)
        );
        create index jobs_due on jobs (due_at) where state in ('queued', 'running');
        create index jobs_state on jobs (state, updated_at);
        insert into jobs (id, kind, key, payload, state, due_at, attempts, attempts_max, lease_ms, result, created_at, updated_at, started_at, finished_at)
          select id, 'clearing.cycle', cycle,
                 jsonb_build_object('cycle', cycle, 'cutoff', cutoff),
                 case when status = 'done' then 'done' else 'queued' end,
                 cutoff, 1, 10, 300000,
                 case when status = 'done' then jsonb_build_object('settled', settled_count,
                   'failed', failed_count, 'returned', returned_count) end,
                 started_at, coalesce(finished_at, started_at), started_at, finished_at
          from clearing_runs;
        drop table clearing_runs;
        create table events (
          id uuid primary key,
          seq bigint generated always as identity unique,
          type text not null,
          partner_id uuid,
          resource_id text not null,
          data jsonb not null,
          occurred_at timestamptz not null,
          dispatched_at timestamptz
        );
        create index events_undispatched on events (seq) where dispatched_at is null;
      `)
    },
  },
}
