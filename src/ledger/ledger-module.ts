import type { Module } from '../module.ts'
import { ledgerMigrations } from './ledger-migrations.ts'
import { partnerDebtMigration } from './partner-debt-migration.ts'
import { ledgerCheckpointMigration } from './ledger-checkpoint-migration.ts'
import { batch_attempts_max, known_accounts_default } from './ledger-limits.ts'

// The ledger: the only code that moves money.
export const ledgerModule: Module = {
  name: 'ledger',
  migrations: {
    ...ledgerMigrations,
    '0012_partner_debts': partnerDebtMigration,
    '0031_ledger_checkpoints': ledgerCheckpointMigration,
  },
  limits: { known_accounts: known_accounts_default, batch_attempts_max },
}
