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
