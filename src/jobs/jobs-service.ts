import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { JobState } from './job-tables.ts'
import { Invalid, NotFound } from '../errors.ts'
import type { JobView } from './jobs-contract.ts'
import { findJob, listJobs, requeueDead } from './job-store.ts'
import { jobView } from './job-view.ts'

export const jobs_list_limit_default = 100

// The operators' use cases of the jobs module: see background work and mend a dead job.
export class JobsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async list(filter: { state?: JobState | undefined; kind?: string | undefined;
      limit?: number | undefined }): Promise<{ jobs: JobView[] }> {
    const rows =
      await listJobs(this.db, { ...filter, limit: filter.limit ?? jobs_list_limit_default })
    return { jobs: rows.map(jobView) }
  }

  /**
   * One job by id: its state and, once it has ended, its outcome (`result` when done,
   * `last_error` when an attempt failed). A caller that detached a long call follows it here.
   */
  async get(jobId: string): Promise<JobView> {
    const job = await findJob(this.db, jobId)
    if (!job) throw new NotFound('job')
    return jobView(job)
  }

  /**
   * A dead job goes back in the queue, due now. Retrying a job that already waits in the
   * queue changes nothing (so a repeated command is harmless); a running or done job is
   * refused: it is not stuck.
   */
  async retry(jobId: string): Promise<JobView> {
    // In a transaction of its own, so that an operator's audit row commits with it.
    const requeued = await this.db.transaction().execute((trx) => requeueDead(trx, jobId,
      this.clock.now()))
    if (requeued) return jobView(requeued)
    const job = await findJob(this.db, jobId)
    if (!job) throw new NotFound('job')
    if (job.state === 'queued') return jobView(job)
    throw Invalid.field('job_id', `only a dead job can be retried; this one is ${job.state}`)
  }
}
