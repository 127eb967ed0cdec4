import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The ledger's migrations written before each capability kept its own beside its code (the
// partner debts' is partner-debt-migration.ts). 0002_ledger also made `transfer_keys`, which
// transfers own, and `clearing_runs`, which 0003_jobs_events folded into jobs: shipped
// migrations stay whole.

export const ledgerMigrations: Record<string, Migration> = {
  '0002_ledger': {
    // transactions and postings carry no foreign keys: they are the hottest tables, a
    // per-row RI check doubled the cost of a batch insert, and the ledger writes rows only
    // for accounts it holds locked (LedgerBatch asserts it); `ledger verify` re-checks.
    async up(db: Kysely<any>) {
      await runStatements(db, `
        alter table accounts add column balance bigint not null default 0;
        alter table accounts add column held bigint not null default 0;
        alter table accounts add column last_seq bigint not null default 0;
        alter table accounts add column last_sha text not null default '';
        alter table accounts add column last_posted bigint not null default 0;
        alter table accounts add constraint accounts_never_below_zero check (held >= 0 and balance >= held);
        create table transactions (
          id uuid primary key,
          partner_id uuid not null,
          account_id uuid not null,
          seq bigint not null,
          parent_tx_id uuid,
          created_at timestamptz not null,
          tx_type text not null check (tx_type in ('transfer', 'fee', 'deposit', 'bulk_payment',
            'debit_order', 'reversal', 'refund')),
          tx_payment_type text not null
            check (tx_payment_type in ('EFT', 'RTC', 'INTERNAL', 'DEBIT_ORDER')),
          status text not null
            check (status in ('Invalid', 'Pending', 'Successful', 'Failed', 'Reversed')),
          amount bigint not null check (amount >= 0),
          fee bigint not null default 0 check (fee >= 0),
          credit bigint not null check (credit >= 0),
          debit bigint not null check (debit >= 0),
          hold_amount bigint not null default 0 check (hold_amount >= 0),
          running_balance bigint not null,
          posted_order bigint,
          ref text not null default '',
          own_ref text not null default '',
          recipient_name text not null default '',
          recipient_account text not null default '',
          recipient_branch text not null default '',
          user_id text not null default '',
          added_by text not null,
          status_reason text,
          status_at timestamptz,
          prev_sha text not null,
          tx_sha text not null,
          unique (account_id, seq)
        );
        create index transactions_pending on transactions (tx_payment_type, created_at) where status = 'Pending';
        create index transactions_parent on transactions (parent_tx_id) where parent_tx_id is not null;
        create table postings (
          id bigint generated always as identity primary key,
          journal_id uuid not null,
          tx_id uuid,
          account_id uuid,
          internal_account text,
          amount bigint not null,
          created_at timestamptz not null,
          check ((account_id is null) <> (internal_account is null))
        );
        create index postings_journal on postings (journal_id);
        create index postings_account on postings (account_id) where account_id is not null;
        create table transfer_keys (
          partner_id uuid not null,
          client_tx_id uuid not null,
          tx_id uuid not null,
          created_at timestamptz not null,
          primary key (partner_id, client_tx_id)
        );
        create table clearing_runs (
          id uuid primary key,
          cycle text not null unique,
          cutoff timestamptz not null,
          status text not null check (status in ('running', 'done')),
          started_at timestamptz not null,
          finished_at timestamptz,
          settled_count bigint not null default 0,
          failed_count bigint not null default 0,
          returned_count bigint not null default 0
        );
      `)
    },
  },
  '0016_refuse': {
    // bank_refuse(message) fails the statement it is in: a condition a statement checks on
    // its own results (a ledger batch's guard) aborts the whole statement, and with it the
    // transaction, when it does not hold. Volatile, so the planner never calls it early.
    async up(db: Kysely<any>) {
      await runStatements(db, `
        create function bank_refuse(message text) returns boolean language plpgsql volatile as $$ begin raise exception '%', message using errcode = 'P0001'; end $$
      `)
    },
  },
}
