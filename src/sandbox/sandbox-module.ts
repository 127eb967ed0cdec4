import type { Module } from '../module.ts'
import { sandboxMigration } from './sandbox-migration.ts'
import { sandbox_advance_job_limits } from './sandbox-limits.ts'

// The sandbox: a movable clock and test helpers.
export const sandboxModule: Module = {
  name: 'sandbox',
  migrations: {
    '0009_sandbox': sandboxMigration,
  },
  limits: { advance_job: sandbox_advance_job_limits },
}
