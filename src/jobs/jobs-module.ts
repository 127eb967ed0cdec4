import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { jobsMigrations } from './jobs-migrations.ts'
import { jobSharesMigration } from './job-share-migration.ts'
import { jobKindMigration } from './job-kind-migration.ts'
import { jobs_list_limit_max } from './jobs-contract.ts'
import { jobs_list_limit_default } from './jobs-service.ts'
import { advance_runs_max } from './job-runner.ts'

// Background work: job rows, the runner.
export const jobsModule: Module = {
  name: 'jobs',
  migrations: {
    ...jobsMigrations,
    '0022_job_shares': jobSharesMigration,
    '0030_jobs_kind_updated': jobKindMigration,
  },
  limits: { jobs_list_limit_default, jobs_list_limit_max, advance_runs_max },
  endpoints: (s) => [
    endpoint(contract.jobs.list, (r) => s.jobs.list(r)),
    endpoint(contract.jobs.get, (r) => s.jobs.get(r.job_id)),
    endpoint(contract.jobs.retry, (r) => s.jobs.retry(r.job_id)),
  ],
}
