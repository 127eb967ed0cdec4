import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The tables of debit orders and their mandates. Money itself is only ever in the ledger's
// tables; these rows point at the ledger's transactions (credit_tx_id, reversal_tx_id).
//
// - debit_mandates: a debtor's authority (DebiCheck-style), unique per entity by its
//   reference. A once_off mandate serves one order (used_by_order).
// - debit_orders: one row per order. `collection_date` is the first collection date the
//   partner asked for, moved to a business day; `next_collection_date` is the date of the
//   collection the runs will take next (null once nothing is left to collect). The fields
//   of the last collection (processed_at, bank_charges, net_amount, credit_tx_id,
//   bank_reference, failure_reason) are what the status operation shows.
// - debit_order_history: every status an order passes through, in order (status_history).
// - debit_collections: one row per collection of an order (a recurring order has one per
//   date), so that a run submits each collection once, retries are counted per
//   collection, and a dispute finds the credit of the collection it disputes.
// - debit_order_keys: the clientTxId duplicate window (30 days), one row per partner and key.
//
// Dates (business dates in SAST) are `YYYY-MM-DD` text: both back ends read them back as
// written, with no time zone to shift them, and they compare in calendar order.
// Partner debt (a dispute's shortfall) is left to the collection runs' own migration.
export const debitOrdersMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table debit_mandates (
        id uuid primary key,
        created_seq bigint generated always as identity,
        partner_id uuid not null references partners(id),
        entity_id uuid not null references entities(id),
        mandate_reference text not null,
        status text not null
          check (status in ('pending_authentication', 'active', 'rejected', 'cancelled')),
        account_holder_name text not null,
        account_number text not null,
        account_type text not null check (account_type in ('cheque', 'savings')),
        branch_code text not null,
        max_amount bigint not null check (max_amount > 0),
        frequency text not null check (frequency in ('once_off', 'weekly', 'monthly', 'annually')),
        first_collection_date text,
        debtor_email text,
        used_by_order uuid,
        rejection_reason text,
        authentication_due_at timestamptz,
        added_by text not null,
        created_at timestamptz not null,
        authenticated_at timestamptz,
        decided_at timestamptz,
        cancelled_at timestamptz,
        unique (entity_id, mandate_reference)
      );
      create index debit_mandates_entity_order on debit_mandates (entity_id, created_seq);
      create index debit_mandates_pending on debit_mandates (authentication_due_at) where status = 'pending_authentication';
      create table debit_orders (
        id uuid primary key,
        created_seq bigint generated always as identity,
        partner_id uuid not null references partners(id),
        entity_id uuid not null references entities(id),
        account_id uuid not null references accounts(id),
        mandate_id uuid not null references debit_mandates(id),
        mandate_reference text not null,
        client_tx_id text not null,
        amount bigint not null check (amount > 0),
        account_holder_name text not null,
        account_number text not null,
        account_type text not null check (account_type in ('cheque', 'savings')),
        branch_code text not null,
        reference text not null,
        frequency text not null check (frequency in ('once_off', 'weekly', 'monthly', 'annually')),
        requested_collection_date text not null,
        collection_date text not null,
        next_collection_date text,
        end_date text,
        tracking_days integer not null check (tracking_days between 0 and 30),
        notification_email text,
        metadata jsonb,
        status text not null check (status in ('scheduled', 'processing', 'successful', 'failed',
          'disputed', 'cancelled')),
        attempts integer not null default 0 check (attempts >= 0),
        first_attempt_date text,
        last_attempt_date text,
        collections_count integer not null default 0 check (collections_count >= 0),
        processed_at timestamptz,
        bank_charges bigint check (bank_charges >= 0),
        net_amount bigint check (net_amount >= 0),
        credit_tx_id uuid,
        bank_reference text,
        failure_reason text,
        disputed_at timestamptz,
        reversal_tx_id uuid,
        cancelled_at timestamptz,
        cancel_reason text,
        added_by text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check (requested_collection_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
          and collection_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
        check (frequency = 'once_off' or end_date is not null),
        check (end_date is null or end_date >= collection_date)
      );
      create index debit_orders_entity_created on debit_orders (entity_id, created_at desc, id desc);
      create index debit_orders_due on debit_orders (next_collection_date) where status = 'scheduled';
      create index debit_orders_processing on debit_orders (next_collection_date) where status = 'processing';
      create index debit_orders_mandate on debit_orders (mandate_id);
      create table debit_order_history (
        id bigint generated always as identity primary key,
        debit_order_id uuid not null references debit_orders(id),
        status text not null check (status in ('scheduled', 'processing', 'successful', 'failed',
          'disputed', 'cancelled')),
        description text not null,
        bank_reference text,
        collection_date text,
        occurred_at timestamptz not null
      );
      create index debit_order_history_order on debit_order_history (debit_order_id, id);
      create table debit_collections (
        debit_order_id uuid not null references debit_orders(id),
        collection_date text not null,
        status text not null check (status in ('processing', 'successful', 'failed', 'disputed')),
        attempts integer not null default 0 check (attempts >= 0),
        first_attempt_date text,
        last_attempt_date text,
        amount bigint not null check (amount > 0),
        bank_charges bigint check (bank_charges >= 0),
        net_amount bigint check (net_amount >= 0),
        credit_tx_id uuid,
        reversal_tx_id uuid,
        bank_reference text,
        failure_reason text,
        submitted_at timestamptz,
        processed_at timestamptz,
        disputed_at timestamptz,
        primary key (debit_order_id, collection_date)
      );
      create index debit_collections_open on debit_collections (last_attempt_date) where status = 'processing';
      create table debit_order_keys (
        partner_id uuid not null,
        client_tx_id text not null,
        debit_order_id uuid not null,
        created_at timestamptz not null,
        primary key (partner_id, client_tx_id)
      )
    `)
  },
}

// The collection run takes due orders and open collections in chunks, in a fixed order:
// indexes in that order let each chunk read its rows off the index instead of sorting
// every remaining one (a run of 100,000 orders asks 200 times).
export const debitRunIndexesMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create index debit_orders_due_in_order on debit_orders (next_collection_date, id) where status = 'scheduled';
      drop index debit_orders_due;
      create index debit_collections_open_in_order on debit_collections (collection_date, debit_order_id) where status = 'processing'
    `)
  },
}
