import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/**
 * The clearing house's statements of the bank's settlement account, entry by entry, and when
 * each payout's return was applied (the day it comes back on the statement).
 */
export const railStatementsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table rail_submissions add column returned_at timestamptz;
      create table rail_statements (
        message_id text primary key,
        kind text not null check (kind in ('camt.053.001.08', 'camt.054.001.08')),
        report_id text not null,
        account_id text not null,
        statement_date text not null,
        opening_balance bigint,
        closing_balance bigint,
        entry_count integer not null,
        issued_at text not null,
        recorded_at timestamptz not null
      );
      create index rail_statements_date on rail_statements (statement_date, recorded_at);
      create table rail_statement_entries (
        message_id text not null references rail_statements (message_id),
        position integer not null,
        amount bigint not null check (amount >= 0),
        credit_debit text not null check (credit_debit in ('CRDT', 'DBIT')),
        reversal boolean not null,
        status text not null,
        booking_date text,
        entry_reference text,
        account_servicer_reference text,
        end_to_end_id text,
        ref_message_id text,
        ref_tx_id text,
        primary key (message_id, position)
      );
      create index rail_statement_entries_end_to_end
        on rail_statement_entries (end_to_end_id, credit_debit);
      create index incoming_payments_end_to_end on incoming_payments (end_to_end_id);
      create index incoming_payments_settlement on incoming_payments (settlement_date);
      create index incoming_payments_returned on incoming_payments (received_at)
        where status = 'returned';
      create index rail_messages_settlement on rail_messages (settlement_date)
        where direction = 'out';
      create index rail_submissions_returned on rail_submissions (returned_at)
        where returned_at is not null;
    `)
  },
}
