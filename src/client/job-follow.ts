import { errors } from '@nats-io/transport-node'
import type { JobView } from '../jobs/jobs-contract.ts'
import type { OperatorClient } from './operator-client.ts'
import { BankApiError } from './transport.ts'

// Following a job by its id: what a caller does after a long operator call made with
// `detach: true` (`clearing.run`, `sandbox.advance`, `debit.run`), and what `bank clearing
// run` and the other long commands do. It asks `ops.jobs.get` again and again (soon at
// first, then once a second) until the job has ended, whichever instance runs it: the one
// that took the call may die, and another (or a restarted one) takes the job over once its
// lease lapses. A poll nobody answers (no instance up, a request lost with its instance) is
// asked again, for up to `unanswered_max_ms` in a row.
//
//   const job = await operator.clearing.run({ detach: true })
//   const report = (await followJob(operator, job.job_id)).result

export const follow_limits = {
  /** The first wait between two polls; each next wait is twice the last, up to `poll_max_ms`. */
  poll_first_ms: 100,
  poll_max_ms: 1_000,
  /** How long polls may go unanswered in a row before following gives up (the job goes on). */
  unanswered_max_ms: 5 * 60_000,
}

export interface FollowJobOptions {
  /** Each view of the job the bank answered, the last one included. */
  onUpdate?(job: JobView): void
  /** A poll that got no answer; following goes on. */
  onUnanswered?(error: unknown): void
  pollFirstMs?: number
  pollMaxMs?: number
  unansweredMaxMs?: number
  /** Stops following (the job goes on): rejects with the signal's reason. */
  signal?: AbortSignal
}

/** Where a job stands for whoever follows it. */
export type JobOutcome = 'done' | 'failed' | 'pending'

/**
 * `done`; `failed` when it is dead or an attempt failed and it waits for its next one (a
 * failed attempt counts: the call would have answered that error); else `pending`: queued
 * and not tried yet (a job put back by `jobs retry` too), or running, on whichever instance.
 */
export function jobOutcome(job: JobView): JobOutcome {
  if (job.state === 'done') return 'done'
  if (job.state === 'dead') return 'failed'
  if (job.state === 'queued' && job.attempts > 0 && job.last_error !== null) return 'failed'
  return 'pending'
}

/**
 * A followed job failed: its view says how (`last_error`) and what comes next (`state`, `due_at`).
 */
export class JobFailedError extends Error {
  constructor(readonly job: JobView) {
    const next = job.state === 'dead' ? 'it is dead (bank jobs retry puts it back in the queue)'
      : `it runs again at ${job.due_at}`
    super(`${job.kind} job ${job.job_id}: ${attemptOf(job)} ` +
      `failed: ${job.last_error ?? 'no error recorded'}; ${next}`)
    this.name = 'JobFailedError'
  }
}

/**
 * `attempt 2 of 10`; `attempt 2` when a job that allows one attempt was taken over after its
 * instance died (a takeover counts as an attempt, and may go past the number allowed).
 */
export function attemptOf(job: Pick<JobView, 'attempts' | 'attempts_max'>): string {
  return job.attempts > job.attempts_max ? `attempt ${job.attempts}`
    : `attempt ${job.attempts} of ${job.attempts_max}`
}

/**
 * Follows the job until it ends: resolves with its last view when it is done (its `result`
 * is the call's report), rejects with JobFailedError when it failed, with the bank's error
 * when it refuses (404: no such job), or with the last poll's error after
 * `unansweredMaxMs` without an answer.
 */
export async function followJob(operator: OperatorClient, jobId: string,
    options: FollowJobOptions = {}): Promise<JobView> {
  const pollMaxMs = options.pollMaxMs ?? follow_limits.poll_max_ms
  const unansweredMaxMs = options.unansweredMaxMs ?? follow_limits.unanswered_max_ms
  let waitMs = options.pollFirstMs ?? follow_limits.poll_first_ms
  let unansweredSince: number | undefined
  for (;;) {
    options.signal?.throwIfAborted()
    const job = await operator.jobs.get({ job_id: jobId }).catch((error: unknown) => {
      if (!unanswered(error)) throw error
      unansweredSince ??= Date.now()
      if (Date.now() - unansweredSince >= unansweredMaxMs) throw error
      options.onUnanswered?.(error)
      return undefined
    })
    if (job) {
      unansweredSince = undefined
      options.onUpdate?.(job)
      const outcome = jobOutcome(job)
      if (outcome === 'done') return job
      if (outcome === 'failed') throw new JobFailedError(job)
    }
    await pause(waitMs, options.signal)
    waitMs = Math.min(waitMs * 2, pollMaxMs)
  }
}

/**
 * A poll that may be answered if asked again: no instance answered (503), none in time
 * (504), the bank failed inside (5xx, e.g. its database restarting), or NATS itself was
 * between connections. A 4xx is the bank's answer and final.
 */
function unanswered(error: unknown): boolean {
  if (error instanceof BankApiError) return error.code >= 500
  return error instanceof errors.RequestError || error instanceof errors.ConnectionError
    || error instanceof errors.TimeoutError
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop)
      resolve()
    }, ms)
    const stop = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', stop, { once: true })
  })
}
