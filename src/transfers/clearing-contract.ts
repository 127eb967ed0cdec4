import { z } from 'zod'
import { operation } from '../contract/operation.ts'
import { detach, reportOrJob } from '../jobs/jobs-contract.ts'

// The EFT clearing cycle an operator runs by hand (`bank clearing run`), served by
// clearing-service.ts; the same cycle runs on its schedule as a job.

export const clearingOperations = {
  clearingRun: operation({
    name: 'ops_clearing_run',
    sdk: 'clearing.run',
    subject: 'ops.clearing.run',
    permission: 'operator',
    summary:
      "Run an EFT clearing cycle now: apply the clearing house's files (status reports, " +
      "returns, other banks' credits), send the pending EFTs as pacs.008 files, ask the " +
      'gateway about unanswered RTCs (pacs.028). Answers the report (in the sandbox, once the ' +
      "clearing house's statuses for those EFTs are applied); with `detach: true` answers at " +
      "once with the cycle's job (queued behind a cycle still running), whose `result` becomes " +
      'the report (`ops.jobs.get`). `bank clearing run` detaches and follows the job.',
    // A cycle may wait for one in progress elsewhere (BANK_JOBS_EXCLUSIVE_WAIT_MS), then settle
    // thousands; a detached call is answered at once, so its reply keeps the caller's timeout.
    replyTimeoutMs: 10 * 60_000,
    request: z.strictObject({ detach }),
    response: reportOrJob(
      z.object({
        cycle: z.string(),
        resumed: z.boolean(),
        settled: z.number(),
        failed: z.number(),
        invalid: z.number(),
        returned: z.number(),
        rtc_recovered: z.number(),
      }),
    ),
  }),
}

/** A clearing cycle's report, for the service that builds it. */
export type ClearingReport =
  z.output<(typeof clearingOperations.clearingRun.response)['options'][0]>
