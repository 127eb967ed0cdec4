import type { Module } from '../module.ts'
import { bulkPaymentsMigration } from './bulk-migration.ts'
import { pinBudgetMigration } from './pin-budget-migration.ts'
import { bulk_limits } from './bulk-contract.ts'
import { bulk_eft_cycle_job_limits, bulk_otp_expiry_job_limits, bulk_process_job_limits } from './bulk-limits.ts'

// Bulk payments.
export const bulkModule: Module = {
  name: 'bulk',
  migrations: {
    '0007_bulk_payments': bulkPaymentsMigration,
    '0020_bulk_pin_budget': pinBudgetMigration,
  },
  limits: {
    // The request bounds live in the contract, which the SDK checks too.
    ...bulk_limits,
    otp_expiry_job: bulk_otp_expiry_job_limits,
    process_job: bulk_process_job_limits,
    eft_cycle_job: bulk_eft_cycle_job_limits,
  },
}
