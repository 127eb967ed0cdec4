import type { Module } from '../module.ts'
import { bulkPaymentsMigration } from './bulk-migration.ts'
import { pinBudgetMigration } from './pin-budget-migration.ts'

// Bulk payments.
export const bulkModule: Module = {
  name: 'bulk',
  migrations: {
    '0007_bulk_payments': bulkPaymentsMigration,
    '0020_bulk_pin_budget': pinBudgetMigration,
  },
}
