import { z } from 'zod'
import { timestamp } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// The operators' summary of the bank (issue 32's overview): money, payments per minute, the
// job queue, webhook failures and the clearing schedule, from aggregates that read indexes
// only, so that it answers in milliseconds on a ledger of millions of transactions (unlike
// `ledger verify`, which recomputes everything). Amounts are integer-cent strings.

/** Minutes of payments the summary counts, one bucket a minute. */
export const summary_minutes = 60
/** The newest deliveries of each partner the webhook failure rate is taken over. */
export const summary_delivery_window = 100
/** Upcoming clearing cycles listed. */
export const summary_cycles_shown = 3

const cents = z.string()

export const summaryView = z.object({
  /** The bank's time the summary was taken at. */
  now: timestamp,
  money: z.object({
    accounts: z.number(),
    /** Every partner account's balance together (pool and customer accounts). */
    balance_total: cents,
    /** Held by pending payments and card authorizations. */
    held_total: cents,
    available_total: cents,
  }),
  payments: z.object({
    pending_eft_count: z.number(),
    pending_eft_amount: cents,
    /** The fee income taken since 00:00 SAST today. */
    fee_income_today: cents,
    /**
     * Transactions (fees not counted) per minute over the last hour, oldest minute first: the
     * minutes of the clock from `per_minute_from`, the last one the minute now running.
     */
    per_minute: z.array(z.number()),
    per_minute_from: timestamp,
    last_hour: z.number(),
  }),
  jobs: z.object({
    queued: z.number(),
    running: z.number(),
    dead: z.number(),
    /** Queued jobs due more than five minutes ago: the runners are behind. */
    overdue: z.number(),
    done_last_hour: z.number(),
  }),
  webhooks: z.object({
    /** Each partner's newest deliveries counted. */
    window: z.number(),
    pending: z.number(),
    delivered: z.number(),
    failed: z.number(),
    /** failed / (delivered + failed) over the window, 0 when none ended. */
    failure_rate: z.number(),
  }),
  clearing: z.object({
    /** The day's cycle times, SAST (`HH:MM`). */
    cycles_sast: z.array(z.string()),
    next_cycles: z.array(timestamp),
    last_run: z
      .object({ cycle: z.string(), state: z.string(), finished_at: timestamp.nullable() })
      .nullable(),
  }),
})

export type SummaryView = z.output<typeof summaryView>

export const summaryOperations = {
  summary: operation({
    name: 'ops_summary',
    sdk: 'summary.get',
    subject: 'ops.summary',
    permission: 'operator',
    summary: 'The bank at a glance, from indexed aggregates (fast on any ledger): money totals and holds, pending EFTs, fee income today, payments per minute over the last hour, job queue health, the webhook failure rate and the clearing schedule.',
    request: z.strictObject({}),
    response: summaryView,
  }),
}
