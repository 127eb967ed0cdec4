import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The tables of bulk payments: one row per batch (its state, its one-time PIN as a keyed
// hash, and its funding transaction) and one row per payment of a batch. Money itself is
// only ever in the ledger's tables; these rows point at the ledger's transactions.
export const bulkPaymentsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table bulk_payments (
        id uuid primary key,
        created_seq bigint generated always as identity,
        partner_id uuid not null references partners(id),
        entity_id uuid not null references entities(id),
        account_id uuid not null references accounts(id),
        bulk_payment_id text not null,
        description text not null,
        callback_url text,
        status text not null
          check (status in ('pending_otp', 'processing', 'completed', 'failed', 'cancelled')),
        total_amount bigint not null check (total_amount > 0),
        fee_total bigint not null check (fee_total >= 0),
        payment_count integer not null check (payment_count between 1 and 1000),
        funding_tx_id uuid not null,
        otp_hash text not null,
        otp_number integer not null,
        otp_sandbox text,
        otp_reference text not null,
        otp_expires_at timestamptz not null,
        otp_attempts integer not null default 0,
        failure_reason text,
        cancel_reason text,
        added_by text not null,
        created_at timestamptz not null,
        verified_at timestamptz,
        completed_at timestamptz,
        cancelled_at timestamptz,
        unique (partner_id, bulk_payment_id)
      );
      create table bulk_payment_items (
        batch_id uuid not null references bulk_payments(id),
        position integer not null,
        payment_id text not null,
        amount bigint not null check (amount > 0),
        fee bigint not null check (fee >= 0),
        real_time boolean not null,
        ref text not null,
        own_ref text not null,
        account_number text not null,
        branch_code text not null,
        name text not null,
        notification_email text,
        status text not null check (status in ('pending', 'processing', 'success', 'failed')),
        tx_id uuid,
        error_message text,
        processed_at timestamptz,
        primary key (batch_id, position),
        unique (batch_id, payment_id)
      );
      create index bulk_payment_items_open on bulk_payment_items (batch_id) where status = 'processing'
    `)
  },
}

// A payment found by its ledger transaction: a screening review names the payment by its
// tx_id, and its decision fails the payment or sends it on (bulk-processing.ts).
export const bulkPaymentTxIdsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create index bulk_payment_items_tx_id on bulk_payment_items (tx_id) where tx_id is not null
    `)
  },
}
