import type { Module } from '../module.ts'
import { JobRunner } from './job-runner.ts'
import { JobsService } from './jobs-service.ts'
import type { JobTables } from './job-tables.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'
import { jobsMigrations } from './jobs-migrations.ts'
import { jobSharesMigration } from './job-share-migration.ts'
import { jobKindMigration } from './job-kind-migration.ts'
import { jobClockMigration } from './job-clock-migration.ts'
import { jobs_list_limit_max } from './jobs-contract.ts'
import { jobs_list_limit_default } from './jobs-service.ts'
import { advance_runs_max } from './job-runner.ts'

/** What the module builds: its members of the bank's Services. */
export interface JobServices {
  /** Background work of every capability runs on this one runner. */
  jobRunner: JobRunner
  /** Operators' view of the jobs (`ops.jobs.*`). */
  jobs: JobsService
}

// Background work: job rows, the runner.
export const jobsModule: Module<JobServices, JobTables> = {
  name: 'jobs',
  needs: ['events'],
  services: (s, { db, clock, config, log, given }) => {
    const jobRunner = new JobRunner(db, clock, log, {
      poll_ms: config.jobsPollMs,
      concurrency_max: config.jobsConcurrencyMax,
      exclusive_wait_ms: config.jobsExclusiveWaitMs,
      ...(given.wallClock ? { wall_clock: given.wallClock } : {}),
      ...(given.sandboxClock ? { partner_leads: given.sandboxClock } : {}),
    })
    const sandboxClock = given.sandboxClock
    if (sandboxClock) jobRunner.refreshClockWith(() => sandboxClock.refresh())
    jobRunner.dispatchEventsWith(s.events)
    return { jobRunner, jobs: new JobsService(db, clock) }
  },
  migrations: {
    ...jobsMigrations,
    '0022_job_shares': jobSharesMigration,
    '0030_jobs_kind_updated': jobKindMigration,
    '0046_job_clock_partner': jobClockMigration,
  },
  limits: { jobs_list_limit_default, jobs_list_limit_max, advance_runs_max },
  endpoints: (s) => [
    endpoint(contract.jobs.list, (r) => s.jobs.list(r)),
    endpoint(contract.jobs.get, (r) => s.jobs.get(r.job_id)),
    endpoint(contract.jobs.retry, (r) => s.jobs.retry(r.job_id)),
  ],
}
