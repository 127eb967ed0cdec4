import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// What partners owe the bank (docs/guides/debit-orders.md: a disputed collection whose credit
// the account cannot cover). One row per partner: `owed` is the outstanding total, the
// mirror of the ledger's internal account `partner_debt:<partner_id>` (whose postings sum
// to minus `owed`); `ledger verify` checks that the two agree. Locked for update by every
// booking that adds to or recovers from it, so two credits never recover the same cents.
export const partnerDebtMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table partner_debts (
        partner_id uuid primary key references partners(id),
        owed bigint not null check (owed >= 0),
        updated_at timestamptz not null
      )
    `)
  },
}
