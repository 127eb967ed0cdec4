import type { Module } from '../module.ts'
import { transferMigrations } from './transfer-migrations.ts'
import { clearing_job_limits, limits as payment_limits, payment_advice_job_limits, rtc_recovery_job_limits } from './transfer-limits.ts'

// Transfers: EFT/RTC payouts, settlement, clearing, payment advices. Its `transfer_keys`
// came with 0002_ledger (ledger).
export const transfersModule: Module = {
  name: 'transfers',
  migrations: {
    ...transferMigrations,
  },
  limits: {
    ...payment_limits,
    payment_advice_job: payment_advice_job_limits,
    clearing_job: clearing_job_limits,
    rtc_recovery_job: rtc_recovery_job_limits,
  },
}
