import { sql, type Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

// Versioned schema changes, applied in order at start (Kysely's Migrator keeps the
// record in `kysely_migration` and takes a lock, so many instances may start at once).
// Never edit a migration that has shipped: add the next one.

// PGlite's extended protocol takes one statement at a time, so a migration's script is
// split on statement ends (no migration may put a semicolon inside a literal).
async function runStatements(db: Kysely<any>, script: string): Promise<void> {
  for (const statement of script.split(/;\s*\n/)) {
    if (statement.trim() !== '') await sql.raw(statement).execute(db)
  }
}

export const migrations: Record<string, Migration> = {
  '0001_foundation': {
    async up(db: Kysely<any>) {
      await runStatements(db, `
        create table partners (
          id uuid primary key,
          created_seq bigint generated always as identity,
          name text not null,
          email text not null,
          root_entity_id uuid not null,
          created_at timestamptz not null
        );
        create table credentials (
          id uuid primary key,
          created_seq bigint generated always as identity,
          partner_id uuid references partners(id),
          role text not null check (role in ('partner', 'operator')),
          permissions text not null,
          token_hash text not null unique,
          label text not null default '',
          created_at timestamptz not null,
          expires_at timestamptz,
          revoked_at timestamptz,
          check ((role = 'operator') = (partner_id is null))
        );
        create index credentials_partner on credentials (partner_id, created_at);
        create table entities (
          id uuid primary key,
          created_seq bigint generated always as identity,
          partner_id uuid not null references partners(id),
          entity_type text not null check (entity_type in ('business', 'personal')),
          is_root boolean not null default false,
          name text not null,
          email text not null,
          country text not null,
          trading_name text not null default '',
          registration_number text,
          tax_number text not null default '',
          first_name text not null default '',
          last_name text not null default '',
          phone_number text not null default '',
          gender text not null default '',
          date_of_birth timestamptz,
          id_number text,
          id_type text not null default '',
          id_issue_date timestamptz,
          id_issue_expiry_date timestamptz,
          city text not null default '',
          residency text not null default '',
          title text not null default '',
          permit_number text not null default '',
          review_status text not null check (review_status in ('pending', 'approved', 'rejected')),
          review_reason text,
          reviewed_at timestamptz,
          address jsonb,
          created_at timestamptz not null
        );
        create unique index entities_partner_registration_number
          on entities (partner_id, registration_number) where registration_number is not null;
        create unique index entities_partner_id_number
          on entities (partner_id, id_number) where id_number is not null;
        create unique index entities_root_registration_number
          on entities (registration_number) where is_root;
        create index entities_partner_order on entities (partner_id, created_seq);
        create table users (
          id uuid primary key,
          created_seq bigint generated always as identity,
          partner_id uuid not null references partners(id),
          entity_id uuid not null references entities(id),
          is_entity_holder boolean not null default false,
          first_name text not null,
          last_name text not null,
          email text not null,
          phone_number text not null,
          gender text not null,
          date_of_birth timestamptz not null,
          country text not null,
          city text not null,
          residency text not null,
          id_number text not null,
          id_type text not null,
          id_issue_date timestamptz not null,
          id_issue_expiry_date timestamptz,
          title text not null,
          permit_number text not null,
          birth_country text,
          birth_city text,
          address jsonb,
          kyc_status text not null check (kyc_status in ('not_started', 'pending', 'approved', 'rejected')),
          kyc_submitted_at timestamptz,
          kyc_reviewed_at timestamptz,
          kyc_rejection_reason text,
          verified_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index users_partner_order on users (partner_id, created_seq);
        create index users_entity_order on users (entity_id, created_seq);
        create sequence account_number_seq;
        create table accounts (
          id uuid primary key,
          created_seq bigint generated always as identity,
          partner_id uuid not null references partners(id),
          entity_id uuid not null references entities(id),
          account_number text not null unique,
          country text not null,
          kind text not null check (kind in ('pool', 'standard')),
          metadata jsonb not null,
          created_at timestamptz not null
        );
        create index accounts_entity_order on accounts (entity_id, created_seq);
      `)
    },
  },
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
          tx_type text not null check (tx_type in ('transfer', 'fee', 'deposit', 'bulk_payment', 'debit_order', 'reversal', 'refund')),
          tx_payment_type text not null check (tx_payment_type in ('EFT', 'RTC', 'INTERNAL', 'DEBIT_ORDER')),
          status text not null check (status in ('Invalid', 'Pending', 'Successful', 'Failed', 'Reversed')),
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
}

