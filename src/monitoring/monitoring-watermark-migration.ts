import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The sweep's place in the postings becomes exact (monitoring-ledger-read.ts): a range of
// postings read while other transactions were still in progress is remembered with those
// transactions and the ids it saw, and read again for what it missed once they have all
// finished, instead of re-reading a fixed overlap before the place on every batch. Claims
// (`monitoring_evaluated`) are kept only for payouts evaluated while Pending, and a movement
// already in an alert of a rule is looked up by its id (the index below) so that reading the
// ledger again never records its hit twice. The place is moved back once by the old overlap
// (5,000 ids): what the old cursor may have missed is read again, the rest skipped as before.
export const monitoringWatermarkMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table monitoring_open_ranges (
        hi bigint primary key,
        lo bigint not null,
        xids bigint[] not null,
        seen bigint[] not null
      );
      create index monitoring_alert_transactions_tx on monitoring_alert_transactions (tx_id);
      update monitoring_cursor set postings_id = greatest(0, postings_id - 5000)
    `)
  },
}
