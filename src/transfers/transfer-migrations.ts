import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// What the reference client needed beyond the interface, added in one migration that stays
// whole here, with transfers (payment advices): it also added an entity's purpose (entities)
// and made the simulated notifier's `notifier_messages` (notify).

export const transferMigrations: Record<string, Migration> = {
  '0005_reference_client': {
    // What the incumbent's reference client sends beyond the interface: an entity's stated
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
}
