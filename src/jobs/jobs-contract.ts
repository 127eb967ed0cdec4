import { z } from 'zod'
import { pageLimit, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Operators' view of background work (the jobs module): what is queued, running, done or
// dead, and a way to put a dead job back in the queue after its cause was mended.

export const job_states = ['queued', 'running', 'done', 'dead'] as const
export const jobs_list_limit_max = 1000

export const jobView = z.object({
  job_id: z.string(),
  kind: z.string(),
  key: z.string(),
  state: z.enum(job_states),
  attempts: z.number(),
  attempts_max: z.number(),
  due_at: z.string(),
  lease_owner: z.string().nullable(),
  lease_expires_at: z.string().nullable(),
  last_error: z.string().nullable(),
  result: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
})

export type JobView = z.output<typeof jobView>

export const jobOperations = {
  list: operation({
    name: 'ops_jobs_list',
    subject: 'ops.jobs.list',
    permission: 'operator',
    summary: 'List background jobs, most recently changed first; filter by state (e.g. dead) and kind.',
    request: z.strictObject({
      state: z.enum(job_states, { error: `must be one of ${job_states.join(', ')}` }).optional(),
      kind: z.string({ error: 'must be a string' }).max(100, { error: 'must be at most 100 characters' }).optional(),
      limit: pageLimit(jobs_list_limit_max).optional(),
    }),
    response: z.object({ jobs: z.array(jobView) }),
  }),
  retry: operation({
    name: 'ops_jobs_retry',
    subject: 'ops.jobs.retry',
    permission: 'operator',
    summary: 'Put a dead job back in the queue, due now, with its attempts counted afresh.',
    request: z.strictObject({ job_id: uuid() }),
    response: jobView,
    cli: { positionals: ['job_id'] },
  }),
}
