import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Cards' tables, and the ledger's new kinds of rows:
//  - card_requests: a partner's request for a card, pending until a user of the entity
//    approves or rejects it; an approved one names the card it issued;
//  - cards: one card on one account for one holder. The number and CVV are sealed with the
//    bank's key (secrets/secret-box.ts), with the card's id as context; `pan_hash`, a keyed
//    hash of the number, keeps numbers unique without opening them; the PIN is a keyed hash;
//  - card_authorizations: every authorization the network asked for, approved or declined
//    (with its reason); an approved one names its Pending `card` transaction and says what it
//    holds, what was reversed and what was cleared.
// The ledger's transactions take tx_type `card` and tx_payment_type `CARD`.
export const cardsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(
      db,
      `
      alter table transactions drop constraint transactions_tx_type_check;
      alter table transactions add constraint transactions_tx_type_check
        check (tx_type in (
          'transfer', 'fee', 'deposit', 'bulk_payment', 'debit_order', 'reversal', 'refund', 'card'
        ));
      alter table transactions drop constraint transactions_tx_payment_type_check;
      alter table transactions add constraint transactions_tx_payment_type_check
        check (tx_payment_type in ('EFT', 'RTC', 'INTERNAL', 'DEBIT_ORDER', 'CARD'));
      create table card_requests (
        id uuid primary key,
        created_seq bigint generated always as identity,
        partner_id uuid not null,
        entity_id uuid not null,
        account_id uuid not null references accounts (id),
        holder_user_id uuid not null,
        requested_by text not null,
        name text not null,
        type smallint not null check (type in (0, 1)),
        use_type smallint not null check (use_type in (0, 1)),
        features jsonb not null,
        limits jsonb not null,
        auto_lock timestamptz,
        status text not null check (status in ('pending', 'approved', 'rejected')),
        decided_by text,
        decided_at timestamptz,
        card_id uuid,
        created_at timestamptz not null
      );
      create index card_requests_account on card_requests (account_id, created_seq);
      create table cards (
        id uuid primary key,
        created_seq bigint generated always as identity,
        partner_id uuid not null,
        entity_id uuid not null,
        account_id uuid not null references accounts (id),
        holder_user_id uuid not null,
        request_id uuid not null unique references card_requests (id),
        name text not null,
        type smallint not null check (type in (0, 1)),
        use_type smallint not null check (use_type in (0, 1)),
        features jsonb not null,
        limits jsonb not null,
        auto_lock timestamptz,
        status text not null
          check (status in ('inactive', 'active', 'frozen', 'stopped', 'cancelled', 'expired')),
        last_4 text not null,
        pan_hash text not null unique,
        pan_sealed text not null,
        cvv_sealed text not null,
        expires_on text not null,
        pin_hash text,
        wrong_pins integer not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index cards_account on cards (account_id, created_seq);
      create table card_authorizations (
        id uuid primary key,
        partner_id uuid not null,
        card_id uuid not null references cards (id),
        account_id uuid not null,
        tx_id uuid,
        status text not null
          check (status in ('pending', 'cleared', 'reversed', 'expired', 'declined')),
        decline_reason text,
        decline_message text,
        amount bigint not null check (amount >= 0),
        held bigint not null check (held >= 0),
        reversed bigint not null check (reversed >= 0),
        cleared bigint not null check (cleared >= 0),
        merchant_name text not null,
        mcc text not null,
        merchant_country text not null,
        channel text not null,
        entry_mode text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index card_authorizations_card on card_authorizations (card_id, created_at);
      create index card_authorizations_pending on card_authorizations (created_at) where status = 'pending'
    `,
    )
  },
}

// A partner's real-time authorization decisions (card-decisions.ts): the subject it serves
// them on (null: the bank decides alone) and its stand-in choice when it does not answer.
export const cardDecisionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table card_decision_settings (
        partner_id uuid primary key,
        subject text,
        stand_in text not null check (stand_in in ('approve', 'decline')),
        updated_at timestamptz not null
      )
    `)
  },
}

// A card's version (card-memory.ts): raised by every statement that changes the card or
// what it has spent — an edit, a status change, a PIN, an authorization, a reversal, a
// clearing, an expiry — so that an instance deciding from a remembered card can check, in
// its one write, that the card is still as it remembers it (and what it had spent).
export const cardVersionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table cards add column version bigint not null default 0
    `)
  },
}
