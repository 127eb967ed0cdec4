import type { Module } from '../module.ts'
import { rateLimitsMigration } from './limits-migration.ts'

// Request budgets: the per-credential token bucket and partners' limits.
export const limitsModule: Module = {
  name: 'limits',
  migrations: {
    '0021_rate_limits': rateLimitsMigration,
  },
}
