import type { Module } from '../module.ts'
import { sandboxMigration } from './sandbox-migration.ts'

// The sandbox: a movable clock and test helpers.
export const sandboxModule: Module = {
  name: 'sandbox',
  migrations: {
    '0009_sandbox': sandboxMigration,
  },
}
