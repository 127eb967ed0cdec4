import { z } from 'zod'
import { timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { detach, reportOrJob } from '../jobs/jobs-contract.ts'
import { calendarDate } from './debit-contract.ts'

// The operator's side of debit-order collection runs (issue 9): run one now, and in the
// sandbox have a debtor dispute an order's last collection. CLI: `bank debit run
// [--date YYYY-MM-DD]`, `bank debit dispute <debit_order_id>`. A run is a job: see `detach` in
// src/jobs/jobs-contract.ts.

export const debitRunReport = z.object({
  run: z.string(),
  date: z.string(),
  resumed: z.boolean(),
  /** Orders taken from scheduled to processing. */
  submitted: z.number(),
  successful: z.number(),
  failed: z.number(),
  /** Collections that found insufficient funds and are tried again on a later business day. */
  retrying: z.number(),
  /** Recurring orders scheduled again for their next date. */
  rescheduled: z.number(),
  disputed: z.number(),
})
export type DebitRunReport = z.output<typeof debitRunReport>

export const debitRunOperations = {
  run: operation({
    name: 'ops_debit_run',
    sdk: 'debit.run',
    subject: 'ops.debit.run',
    permission: 'operator',
    summary:
      'Run a debit-order collection now (as the daily 00:00 SAST run would): book disputes, ' +
      'submit the orders due by `date` (default: today in SAST) and the insufficient-funds ' +
      'retries, book the outcomes. Answers the report; with `detach: true` answers at once with ' +
      'the run\'s job (queued behind a run still going), whose `result` becomes the report ' +
      '(`ops.jobs.get`). `bank debit run` ' +
      'detaches and follows the job.',
    request: z.strictObject({ date: calendarDate().optional(), detach }),
    response: reportOrJob(debitRunReport),
    // A run of many thousands of orders takes minutes; a detached call is answered at once.
    replyTimeoutMs: 10 * 60_000,
  }),
  dispute: operation({
    name: 'ops_debit_dispute',
    sdk: 'debit.dispute',
    cli: { positionals: ['debit_order_id'] },
    subject: 'ops.debit.dispute',
    permission: 'operator',
    summary:
      "Sandbox only: the debtor disputes the order's last successful collection now; the next " +
      "collection run books it " +
      '(disputed within 40 days: reversed). Production refuses it (403).',
    request: z.strictObject({ debit_order_id: uuid() }),
    response: z.object({ debit_order_id: z.string(), collection_date: z.string(),
      bank_reference: z.string(), disputed_at: timestamp }),
  }),
}
