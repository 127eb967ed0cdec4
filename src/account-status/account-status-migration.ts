import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/** Accounts' statuses (every account starts `active`) and the history of their changes. */
export const accountStatusMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table accounts add column status text not null default 'active'
        check (status in ('active', 'frozen', 'blocked', 'dormant', 'closed'));
      create table account_status_changes (
        id uuid primary key,
        seq bigint generated always as identity,
        account_id uuid not null references accounts (id),
        partner_id uuid not null,
        from_status text not null,
        to_status text not null,
        reason text not null,
        changed_by text not null check (changed_by in ('partner', 'operator', 'system')),
        changed_at timestamptz not null,
        account_seq bigint not null
      );
      create index account_status_changes_account
        on account_status_changes (account_id, seq);
    `)
  },
}
