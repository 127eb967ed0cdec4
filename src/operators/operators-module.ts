import type { Module } from '../module.ts'
import { foundationMigrations } from './foundation-migration.ts'

// Operators' work on partners: create, suspend.
export const operatorsModule: Module = {
  name: 'operators',
  migrations: {
    ...foundationMigrations,
  },
}
