import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Checkpoints of `ledger verify` (ledger-verification.ts): what the last clean verify
// established, so that `ledger verify --incremental` checks only what came after it. Written
// by verify alone; nothing on the payment path reads or writes them, so they cost a payment
// nothing. Each account's row is anchored in its chain (the hash of the row at `seq`), and
// an incremental verify checks that the row still has it.
export const ledgerCheckpointMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(
      db,
      `
      create table ledger_checkpoint (
        id smallint primary key check (id = 1),
        postings_horizon bigint not null,
        internal_balances jsonb not null,
        verified_at timestamptz not null,
        incremental boolean not null
      );
      create table ledger_account_checkpoints (
        account_id uuid primary key,
        seq bigint not null,
        tx_sha text not null,
        posted_order bigint not null,
        running_balance bigint not null,
        pending_seq bigint,
        postings_sum bigint not null,
        verified_at timestamptz not null
      )
    `,
    )
  },
}
