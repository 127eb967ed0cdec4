import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The bank as the NATS authority of its partners (nats-claims.ts): the operator and the
// bank's accounts (one row, written by `bank nats init`), one account per partner and every
// user issued. A partner may be suspended: its tokens are refused and its NATS users cut off.
export const natsIdentityMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table nats_authority (
        id smallint primary key check (id = 1),
        operator_public_key text not null,
        operator_jwt text not null,
        operator_seed_sealed text not null,
        signing_seed_sealed text not null,
        system_account text not null,
        system_seed_sealed text not null,
        bank_account text not null,
        bank_seed_sealed text not null,
        operators_account text not null,
        operators_seed_sealed text not null,
        created_at timestamptz not null
      );
      create table nats_accounts (
        partner_id uuid primary key references partners(id),
        public_key text not null unique,
        seed_sealed text not null,
        jwt text not null,
        jwt_issued_at bigint not null,
        created_at timestamptz not null
      );
      create table nats_users (
        id uuid primary key,
        created_seq bigint generated always as identity,
        role text not null check (role in ('partner', 'operator', 'bank')),
        partner_id uuid references partners(id),
        account text not null,
        public_key text not null unique,
        label text not null,
        created_at timestamptz not null,
        expires_at timestamptz,
        revoked_at timestamptz,
        check ((role = 'partner') = (partner_id is not null))
      );
      create index nats_users_partner on nats_users (partner_id, created_seq);
      alter table partners add column suspended_at timestamptz
    `)
  },
}

// The card network's NATS account beside the operators' (nats-claims.ts, CARD_NETWORK): its
// key, sealed like the others, and its users among those the bank issued. Null on an
// authority set up before; `bank nats init` run again makes it.
export const cardNetworkNatsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table nats_authority add column card_network_account text;
      alter table nats_authority add column card_network_seed_sealed text;
      alter table nats_authority add constraint nats_authority_card_network_check
        check ((card_network_account is null) = (card_network_seed_sealed is null));
      alter table nats_users drop constraint nats_users_role_check;
      alter table nats_users add constraint nats_users_role_check
        check (role in ('partner', 'operator', 'card_network', 'bank'))
    `)
  },
}

// What an operator gave a partner's NATS account (nats-claims.ts, PartnerNatsLimits): a null
// column is the bank's default, so a partner without a row has all of them. Every change is
// signed into the partner's account JWT and pushed to the servers.
export const natsLimitsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table nats_limits (
        partner_id uuid primary key references partners(id),
        connections integer check (connections > 0),
        subscriptions integer check (subscriptions > 0),
        payload integer check (payload > 0),
        jetstream_disk bigint check (jetstream_disk > 0),
        jetstream_memory bigint check (jetstream_memory >= 0),
        jetstream_streams integer check (jetstream_streams > 0),
        jetstream_consumers integer check (jetstream_consumers > 0),
        updated_at timestamptz not null
      )
    `)
  },
}
