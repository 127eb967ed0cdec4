import { sql, type Kysely } from 'kysely'
import type { Migration } from 'kysely'
import { bulkPaymentsMigration } from '../bulk/bulk-migration.ts'
import { pinBudgetMigration } from '../bulk/pin-budget-migration.ts'
import { debitOrdersMigration, debitRunIndexesMigration } from '../debit/debit-migration.ts'
import { partnerDebtMigration } from '../ledger/partner-debt-migration.ts'
import { kycDocumentsMigration } from '../kyc/kyc-migration.ts'
import { notifierSentMigration } from '../notify/notify-migration.ts'
import { simulatedDebitRailMigration } from '../rails/debit-rail-migration.ts'
import { natsIdentityMigration } from '../nats-identity/nats-identity-migration.ts'
import { rateLimitsMigration } from '../limits/limits-migration.ts'
import { operatorAuditMigration } from '../audit/audit-migration.ts'
import { sandboxMigration } from '../sandbox/sandbox-migration.ts'
import { webhooksMigration } from '../webhooks/webhook-migration.ts'
import { webhookJobSharesMigration } from '../webhooks/webhook-share-migration.ts'
import { jobSharesMigration } from '../jobs/job-share-migration.ts'

// Versioned schema changes, applied in order at start (Kysely's Migrator keeps the
// record in `kysely_migration` and takes a lock, so many instances may start at once).
// Never edit a migration that has shipped: add the next one.

// PGlite's extended protocol takes one statement at a time, so a migration's script is
// split on statement ends (no migration may put a semicolon inside a literal).
export async function runStatements(db: Kysely<any>, script: string): Promise<void> {
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
                 case when status = 'done' then jsonb_build_object('settled', settled_count, 'failed', failed_count, 'returned', returned_count) end,
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
  '0004_simulated_rail': {
    // The simulated rail's own record of the payments it will send back (the "returned"
    // magic recipient), so that it never reads the bank's ledger. A return is handed out
    // by collectReturns until the bank acknowledges it. Payments the rail paid before this
    // migration, and not yet returned, are carried over once from the ledger.
    async up(db: Kysely<any>) {
      await runStatements(db, `
        create table simulated_rail_returns (
          tx_id uuid primary key,
          reason text not null,
          created_at timestamptz not null,
          collected_at timestamptz
        );
        create index simulated_rail_returns_uncollected on simulated_rail_returns (created_at) where collected_at is null;
        insert into simulated_rail_returns (tx_id, reason, created_at)
          select id, 'returned by the recipient bank (simulated)', created_at
          from transactions
          where tx_type in ('transfer', 'bulk_payment') and status = 'Successful' and recipient_account = '4000000028';
      `)
    },
  },
  '0005_reference_client': {
    // What the incumbent's reference client sends beyond interface.md: an entity's stated
    // purpose, and payment advices (a notice to a transfer's recipient once it is paid).
    // The notifier's record of what it sent (the simulated notifier keeps it here, so that
    // every instance and the operators see the same list).
    async up(db: Kysely<any>) {
      await runStatements(db, `
        alter table entities add column purpose text not null default '';
        create table payment_advices (
          tx_id uuid primary key,
          partner_id uuid not null,
          email text not null,
          name text not null,
          created_at timestamptz not null,
          sent_at timestamptz
        );
        create table notifier_messages (
          id uuid primary key,
          created_seq bigint generated always as identity,
          key text not null unique,
          recipient text not null,
          subject text not null,
          body text not null,
          created_at timestamptz not null
        );
      `)
    },
  },
  '0006_event_endpoints': {
    // A partner may send one resource's webhooks somewhere else than its endpoint (a bulk
    // batch's callback_url); the event carries that address.
    async up(db: Kysely<any>) {
      await runStatements(db, `alter table events add column endpoint_url text`)
    },
  },
  // Each later capability keeps its migration beside its code.
  '0007_bulk_payments': bulkPaymentsMigration,
  '0008_webhooks': webhooksMigration,
  '0009_sandbox': sandboxMigration,
  '0010_debit_orders': debitOrdersMigration,
  '0011_simulated_debit_rail': simulatedDebitRailMigration,
  '0012_partner_debts': partnerDebtMigration,
  '0013_notifier_sent': notifierSentMigration,
  '0014_debit_run_indexes': debitRunIndexesMigration,
  '0015_kyc_documents': kycDocumentsMigration,
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
  '0018_nats_identity': natsIdentityMigration,
  '0019_operator_audit': operatorAuditMigration,
  '0020_bulk_pin_budget': pinBudgetMigration,
  '0021_rate_limits': rateLimitsMigration,
  '0022_job_shares': jobSharesMigration,
  '0023_webhook_job_shares': webhookJobSharesMigration,
}
