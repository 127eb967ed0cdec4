import { z } from 'zod'
import { pageLimit, uuid } from '../contract/fields.ts'
import { operation, type Operation } from '../contract/operation.ts'

// Operators' view of background work (the jobs module): what is queued, running, done or
// dead, one job by id with its outcome, and a way to put a dead job back in the queue
// after its cause was mended.
//
// Long operator calls (`ops.clearing.run`, `ops.sandbox.clock.advance`, `ops.debit.run`)
// are jobs. Their request takes `detach`: with `detach: true` the bank queues the job and
// answers at once with it (this file's job view; whichever instance is free runs it), and
// the caller follows it with `ops.jobs.get` until it ends: `done` with the call's report as
// its `result`, or failed (`last_error`). A caller that leaves `detach` out waits for the
// report, as before. The instance that runs a job may die: another takes the job over once
// its lease lapses, and the caller following it by id learns the outcome all the same.

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

/** The request field of a long operator call that asks for the job instead of the report. */
export const detach = z.boolean({ error: 'must be true or false' }).optional()

/** The reply of a long operator call: its report, or with `detach: true` its job (queued). */
export function reportOrJob<R extends z.ZodObject>(report: R) {
  return z.union([report, jobView])
}

/** Whether an operation's request takes `detach` (the CLI then follows the job it answers with). */
export function isDetachable(op: Operation): boolean {
  return op.request instanceof z.ZodObject && 'detach' in op.request.shape
}

export const jobOperations = {
  list: operation({
    name: 'ops_jobs_list',
    subject: 'ops.jobs.list',
    permission: 'operator',
    summary: 'List background jobs, most recently changed first; filter by state (e.g. dead) and kind.',
    request: z.strictObject({
      state: z.enum(job_states, { error: `must be one of ${job_states.join(', ')}` }).optional(),
      kind: z.string({ error: 'must be a string' }).max(100,
        { error: 'must be at most 100 characters' }).optional(),
      limit: pageLimit(jobs_list_limit_max).optional(),
    }),
    response: z.object({ jobs: z.array(jobView) }),
  }),
  get: operation({
    name: 'ops_jobs_get',
    subject: 'ops.jobs.get',
    permission: 'operator',
    summary:
      'One job by id: its state, attempts and lease, and once it has ended its outcome: `result` ' +
      'when done (a long call\'s report), `last_error` when an attempt failed (`dead` when none ' +
        'is left). The CLI\'s `--follow` asks again until the job ends.',
    request: z.strictObject({ job_id: uuid() }),
    response: jobView,
    cli: { positionals: ['job_id'] },
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
