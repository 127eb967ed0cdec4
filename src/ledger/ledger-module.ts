import type { Module } from '../module.ts'
import type { Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { card_authorization_desk } from '../cards/card-authorizations.ts'
import { LedgerService } from './ledger-service.ts'
import { LedgerWriter } from './ledger-writer.ts'
import type { LedgerTables } from './ledger-tables.ts'
import { ledgerMigrations } from './ledger-migrations.ts'
import { partnerDebtMigration } from './partner-debt-migration.ts'
import { ledgerCheckpointMigration } from './ledger-checkpoint-migration.ts'
import { legalHoldsMigration } from './legal-holds.ts'
import { verifyResultMigration } from './verify-result.ts'
import { unclaimedFundsMigration } from './unclaimed-payout.ts'
import { batch_attempts_max, known_accounts_default } from './ledger-limits.ts'

/** What the module builds: its members of the bank's Services. */
export interface LedgerServices {
  /** Deposits, reversals, balances and `ledger verify`. */
  ledger: LedgerService
  /** The ledger's write engine (group commit, remembered accounts, idempotency keys). */
  ledgerWriter: LedgerWriter<Kysely<Database>>
}

// The ledger: the only code that moves money.
export const ledgerModule: Module<LedgerServices, LedgerTables> = {
  name: 'ledger',
  services: (s, { db, clock, config }) => {
    // The one door for money: group commit of payments and settlements, and the composed
    // writes of every capability (ledger-writer.ts).
    const ledgerWriter = new LedgerWriter<Kysely<Database>>(db, clock, {
      key_window_ms: config.transferKeyWindowMs,
      batch_jobs_max: config.ledgerBatchJobsMax,
      batches_in_flight_max: config.ledgerBatchesInFlightMax,
      batch_overlap_jobs_min: config.ledgerOverlapJobsMin,
      account_batches_max: config.ledgerAccountBatchesMax,
      queue_jobs_max: config.ledgerQueueJobsMax,
      observeBatch: (desk, size, seconds, ok) => s.metrics.ledgerBatch(desk, size, seconds, ok),
      // Card authorization batches have a counter of their own.
      observeStart: (start, desk) => {
        if (desk === card_authorization_desk) s.metrics.cardGroupStart(start)
        else s.metrics.ledgerBatchStart(start)
      },
    })
    return { ledgerWriter, ledger: new LedgerService(db, ledgerWriter) }
  },
  migrations: {
    ...ledgerMigrations,
    '0012_partner_debts': partnerDebtMigration,
    '0031_ledger_checkpoints': ledgerCheckpointMigration,
    '0042_legal_holds': legalHoldsMigration,
    '0044_ledger_verify_result': verifyResultMigration,
    '0047_unclaimed_funds': unclaimedFundsMigration,
  },
  limits: { known_accounts: known_accounts_default, batch_attempts_max },
}
