import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The sandbox's one table: the shared clock. Bank time in the sandbox is wall time plus
// `offset_ms`, one row read by every instance, so that all of them agree on the time. The
// offset only grows (an advance never moves the clock back).
export const sandboxMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table sandbox_clock (
        id smallint primary key check (id = 1),
        offset_ms bigint not null check (offset_ms >= 0),
        updated_at timestamptz not null
      );
      insert into sandbox_clock (id, offset_ms, updated_at) values (1, 0, now())
    `)
  },
}

// Each partner's own sandbox clock: how far it is ahead of the bank's (no row: with it).
export const partnerClocksMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table sandbox_partner_clocks (
        partner_id text primary key,
        lead_ms bigint not null check (lead_ms >= 0),
        updated_at timestamptz not null
      )
    `)
  },
}
