import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Request budgets (limits/rate-limiter.ts). `rate_limits` holds the limits an operator gave
// a partner (a partner without a row has the bank's defaults). `rate_buckets` is each
// credential's shared token bucket: the tokens left after the last lease, when it was last
// refilled (ms since the epoch, on the leasing instance's clock), the last lease's size and
// the limits it was taken under. Instances lease tokens from it in chunks with one upsert
// each; no row is written per request.
export const rateLimitsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table rate_limits (
        partner_id uuid primary key references partners(id),
        requests_per_second integer not null check (requests_per_second > 0),
        burst integer not null check (burst > 0),
        updated_at timestamptz not null
      );
      create table rate_buckets (
        credential_id uuid primary key references credentials(id),
        requests_per_second integer not null check (requests_per_second > 0),
        burst integer not null check (burst > 0),
        tokens double precision not null check (tokens >= 0),
        leased integer not null check (leased >= 0),
        refilled_ms bigint not null
      )
    `)
  },
}
