import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The simulated debit rail's own state: disputes its debtors will raise (a collection
// from the `disputed` magic account is disputed three days later, or an operator's
// sandbox dispute at once), handed to the bank until it acknowledges them. A real rail
// keeps this at the debtors' banks; nothing of the bank's reads this table.
export const simulatedDebitRailMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table simulated_debit_disputes (
        debit_order_id uuid not null,
        collection_date text not null,
        bank_reference text not null,
        reason text not null,
        disputed_at timestamptz not null,
        acknowledged_at timestamptz,
        primary key (debit_order_id, collection_date)
      );
      create index simulated_debit_disputes_open on simulated_debit_disputes (disputed_at) where acknowledged_at is null
    `)
  },
}
