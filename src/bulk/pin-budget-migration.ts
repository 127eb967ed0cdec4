import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The per-entity limits of bulk payments (bulk-entity-limits.ts):
// at most 10 wrong PINs in any rolling hour across an entity's batches, and at most 20 of
// its batches waiting for their PIN at once. They live in the database so that every
// instance on one PostgreSQL counts the same attempts.
//
// - bulk_pin_budgets: one row per entity, created on its first initiate or verify. It holds
//   no data: its row lock is what orders one entity's verifies and initiates, so that two
//   of them on two instances cannot both pass a limit the other is about to reach.
// - bulk_wrong_pins: one row per wrong PIN given in the last hour (older rows are deleted
//   when the entity's next wrong PIN is recorded), so an entity keeps at most 10.
// - bulk_payments_entity_pending: the entity's batches waiting for their PIN, counted at
//   initiate without reading its finished ones.
export const pinBudgetMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table bulk_pin_budgets (
        entity_id uuid primary key references entities(id)
      );
      create table bulk_wrong_pins (
        entity_id uuid not null references entities(id),
        batch_id uuid not null references bulk_payments(id),
        given_at timestamptz not null
      );
      create index bulk_wrong_pins_entity on bulk_wrong_pins (entity_id, given_at);
      create index bulk_payments_entity_pending on bulk_payments (entity_id, otp_expires_at) where status = 'pending_otp'
    `)
  },
}
