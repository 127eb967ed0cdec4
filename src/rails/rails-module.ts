import type { Module } from '../module.ts'
import { simulatedRailMigrations } from './simulated-rail-migration.ts'
import { simulatedDebitRailMigration } from './debit-rail-migration.ts'

// The rails and their simulated implementations (the simulated rails keep tables of their own).
export const railsModule: Module = {
  name: 'rails',
  migrations: {
    ...simulatedRailMigrations,
    '0011_simulated_debit_rail': simulatedDebitRailMigration,
  },
}
