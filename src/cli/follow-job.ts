import { followJob } from '../client/job-follow.ts'
import type { OperatorClient } from '../client/operator-client.ts'
import type { JobView } from '../jobs/jobs-contract.ts'
import { JobProgress, type ProgressOutput } from './job-progress.ts'

// The long commands (`bank clearing run`, `bank sandbox advance`, `bank debit run`: the
// operations whose request takes `detach`) do not wait on one instance for the report.
// They send the request with `detach: true`, which the bank answers at once with the job,
// then follow the job by polling `ops.jobs.get` (src/client/job-follow.ts), saying how it
// goes on stderr, until it ends on whichever instance: stdout then gets the job's result,
// the same report the call would have answered. A job that fails ends the command with
// JobFailedError (exit 1). `--detach` prints the job and leaves it; `bank jobs get <id>
// --follow` follows a job by its id.

type Send = (request: Record<string, unknown>) => Promise<unknown>

/** Sends the request detached and follows its job: resolves with the job's result. */
export async function detachAndFollow(client: OperatorClient, send: Send, request: Record<string,
    unknown>, out: ProgressOutput): Promise<unknown> {
  const job = (await send({ ...request, detach: true })) as JobView
  return (await follow(client, job, out)).result
}

/** `bank jobs get <job_id> --follow`: resolves with the job's last view once it has ended. */
export async function followById(client: OperatorClient, jobId: string,
    out: ProgressOutput): Promise<JobView> {
  return follow(client, await client.jobs.get({ job_id: jobId }), out)
}

async function follow(client: OperatorClient, job: JobView, out: ProgressOutput): Promise<JobView> {
  const progress = new JobProgress(out)
  progress.following(job)
  try {
    return await followJob(client, job.job_id, { onUpdate: (view) => progress.update(view),
      onUnanswered: (error) => progress.noAnswer(error) })
  } finally {
    progress.end()
  }
}
