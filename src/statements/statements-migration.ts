import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/**
 * Account statements made in the background (a large range asked for, or a month's
 * statement made by the monthly job): the file, its totals and its state, until the partner
 * fetches it (`svc.account.<partner_id>.statement_get`). A statement small enough to answer in
 * the reply is never stored. A month's statement of an account in a format is made once.
 */
export const accountStatementsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table account_statements (
        id uuid primary key,
        partner_id uuid not null,
        account_id uuid not null,
        format text not null check (format in ('pdf', 'camt053')),
        from_date text not null,
        to_date text not null,
        origin text not null check (origin in ('request', 'monthly')),
        state text not null check (state in ('queued', 'ready')),
        file_name text not null,
        content_type text not null,
        content bytea,
        size integer,
        sha256 text,
        totals jsonb,
        created_at timestamptz not null,
        ready_at timestamptz
      );
      create index account_statements_partner on account_statements (partner_id, state);
      create unique index account_statements_monthly
        on account_statements (account_id, format, from_date) where origin = 'monthly';
    `)
  },
}
