import type { Module } from '../module.ts'
import { debitOrdersMigration, debitRunIndexesMigration } from './debit-migration.ts'
import { debit_run_job_limits, mandate_authentication_attempts_max, mandate_authentication_job_limits } from './debit-limits.ts'

// Debit orders: mandates, collection runs, disputes.
export const debitModule: Module = {
  name: 'debit',
  migrations: {
    '0010_debit_orders': debitOrdersMigration,
    '0014_debit_run_indexes': debitRunIndexesMigration,
  },
  limits: {
    mandate_authentication_attempts_max,
    mandate_authentication_job: mandate_authentication_job_limits,
    run_job: debit_run_job_limits,
  },
}
