import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The first migration created the tables of five capabilities at once (partners,
// credentials, entities, users, accounts). A shipped migration is never split or edited, so
// it stays whole here, with the operators' capability, which owns `partners`: the table
// every other row of it belongs to. The ledger's columns of `accounts` came with 0002_ledger.

export const foundationMigrations: Record<string, Migration> = {
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
          kyc_status text not null
            check (kyc_status in ('not_started', 'pending', 'approved', 'rejected')),
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
}
