import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/** Incoming payments: the `incoming` transaction type and the payers' details. */
export const incomingPaymentsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table transactions drop constraint transactions_tx_type_check;
      alter table transactions add constraint transactions_tx_type_check
        check (tx_type in (
          'transfer', 'fee', 'deposit', 'bulk_payment', 'debit_order', 'reversal', 'refund', 'card',
          'incoming'
        ));
      create table incoming_payments (
        id uuid primary key,
        partner_id uuid,
        account_id uuid,
        tx_id uuid unique,
        message_id text not null,
        end_to_end_id text not null,
        amount bigint not null check (amount > 0),
        payment_type text not null check (payment_type in ('EFT', 'RTC')),
        payer_name text not null,
        payer_account_number text not null,
        payer_branch_code text not null,
        account_number text not null,
        reference text,
        settlement_date text not null,
        status text not null check (status in ('credited', 'returned')),
        return_reason_code text,
        received_at timestamptz not null,
        unique (payer_branch_code, end_to_end_id)
      );
      create index incoming_payments_partner on incoming_payments (partner_id, tx_id);
    `)
  },
}
