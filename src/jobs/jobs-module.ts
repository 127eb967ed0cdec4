import type { Module } from '../module.ts'
import { jobsMigrations } from './jobs-migrations.ts'
import { jobSharesMigration } from './job-share-migration.ts'

// Background work: job rows, the runner.
export const jobsModule: Module = {
  name: 'jobs',
  migrations: {
    ...jobsMigrations,
    '0022_job_shares': jobSharesMigration,
  },
}
