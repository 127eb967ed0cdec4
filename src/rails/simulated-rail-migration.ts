import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The simulated rail's table of the payments it will send back.

export const simulatedRailMigrations: Record<string, Migration> = {
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
}

/** The ISO 20022 rail's tables (rail-tables.ts). */
export const railMessagesMigration: Migration = {
  // The ISO 20022 rail's record of its messages (rail-tables.ts): what the bank sent, each
  // payout in it with its answer, and the inbound files refused whole.
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table rail_messages (
        direction text not null check (direction in ('out', 'in')),
        message_id text not null,
        kind text not null,
        file_name text not null,
        payment_type text check (payment_type in ('EFT', 'RTC')),
        transaction_count integer not null check (transaction_count >= 0),
        control_sum bigint not null check (control_sum >= 0),
        created_at timestamptz not null,
        settlement_date text,
        written_at timestamptz,
        sha256 text,
        body text,
        primary key (direction, message_id)
      );
      create index rail_messages_unwritten on rail_messages (created_at) where direction = 'out' and written_at is null;
      create table rail_submissions (
        tx_id uuid primary key,
        message_id text not null,
        source text not null check (source in ('transfer', 'bulk')),
        source_ref text,
        position integer not null,
        end_to_end_id text not null unique,
        amount bigint not null check (amount > 0),
        debtor_name text not null,
        debtor_account text not null,
        creditor_name text not null,
        creditor_account text not null,
        creditor_branch text not null,
        ref text not null,
        status text,
        reason_code text,
        answered_at timestamptz,
        returned_reason_code text,
        unique (message_id, position)
      );
      create index rail_submissions_unanswered on rail_submissions (message_id) where status is null;
      create table rail_refusals (
        id bigint generated always as identity primary key,
        file_name text not null,
        sha256 text not null,
        reason text not null,
        refused_at timestamptz not null
      );
    `)
  },
}
