import type { Module } from '../module.ts'
import { debitOrdersMigration, debitRunIndexesMigration } from './debit-migration.ts'

// Debit orders: mandates, collection runs, disputes.
export const debitModule: Module = {
  name: 'debit',
  migrations: {
    '0010_debit_orders': debitOrdersMigration,
    '0014_debit_run_indexes': debitRunIndexesMigration,
  },
}
