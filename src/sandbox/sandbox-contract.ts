import { z } from 'zod'
import { email_length_max, emptyRequest, pageLimit, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'
import { detach, reportOrJob } from '../jobs/jobs-contract.ts'

// The sandbox's operator operations: read the bank's clock, move it forward (running the
// work that falls due on the way), and read what the notifier sent. Production refuses
// every `ops.sandbox.` subject (403) in the endpoint wrapper, before reading the body.

/** One advance moves the clock at most this far (a year and a day). */
export const advance_seconds_max = 366 * 86_400
export const messages_limit_max = 1000
export const messages_limit_default = 100

export const sandboxMessage = z.object({
  id: z.string(),
  key: z.string(),
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  created_at: timestamp,
})

/** What an advance did: the bank's time after it, and the jobs it ran on the way. */
export const advanceReport = z.object({ now: timestamp, jobs_run: z.number() })
export type AdvanceReply = z.output<typeof advanceReport>

/** Where an advance goes: exactly one of `seconds` and `to` (checked by the service). */
const advanceTarget = {
  seconds: z
    .int({ error: 'must be a whole number of seconds' })
    .min(1, { error: 'must be at least 1' })
    .max(advance_seconds_max, { error: `must be at most ${advance_seconds_max} (366 days)` })
    .optional(),
  to: z.iso.datetime({ offset: true,
    error: 'must be an RFC 3339 timestamp like 2026-11-24T10:00:00Z' }).optional(),
}

/** A partner's sandbox clock: its time, and the bank's, which it is never behind. */
export const partnerClockView = z.object({ now: timestamp, bank_now: timestamp })

const partnerAdvanceSummary = 'Before answering, runs in time order the work of this ' +
  "partner's that falls due on the way (its batches' PIN expiry and processing, its EFTs' " +
  "clearing cycles, its debit-order runs, its webhook retries, its cards' authorizations' " +
  "expiry), by its clock; no other partner's clock moves, and nothing of theirs runs."

/** What a reset retired (or, previewed, would retire): the partner's rows, by kind. */
const retiredCounts = z.object({
  entities: z.number(), users: z.number(), accounts: z.number(), transactions: z.number(),
  cards: z.number(), debit_orders: z.number(), bulk_payments: z.number(), events: z.number(),
})

/** A partner's sandbox reset: where its data went, and how it starts again. */
export const resetReport = z.object({
  partner_id: z.string(),
  /** The archive partner the data moved to; null for a preview, which changes nothing. */
  retired_to: z.string().nullable(),
  retired: retiredCounts,
  /** The root entity, which stays with the partner. */
  root_entity_id: z.string(),
  /** An approved root entity's fresh first account; null when it is not approved (or preview). */
  account: z.object({ account_id: z.string(), account_number: z.string() }).nullable(),
  /** The partner's time after the reset: the bank's, which its clock rejoined. */
  now: timestamp,
})
export type ResetReply = z.output<typeof resetReport>

const resetSummary = 'Every row the partner made (entities but its root, users, accounts with ' +
  'their transactions and balances, cards, debit orders, bulk batches, events and webhook ' +
  'deliveries, …) moves to a new, suspended archive partner (`retired_to`), ids unchanged: ' +
  "the ledger's hash chains cannot lose a posting. The partner keeps its credentials, NATS " +
  'users, limits, webhook endpoint and secret and its root entity, which gets a fresh first ' +
  "account when approved; its clock rejoins the bank's. Nothing of the retired data reaches " +
  'the partner afterwards; its old ids answer 404.'

export const sandboxOperations = {
  clock: operation({
    name: 'ops_sandbox_clock',
    subject: 'ops.sandbox.clock',
    permission: 'operator',
    summary: "Read the bank's clock (sandbox only): the time every instance works by; with " +
      "`partner_id`, that partner's clock (never behind the bank's).",
    request: z.strictObject({ partner_id: uuid().optional() }),
    response: z.object({ now: timestamp }),
  }),
  advance: operation({
    name: 'ops_sandbox_clock_advance',
    subject: 'ops.sandbox.clock.advance',
    permission: 'operator',
    summary:
      "Move the bank's clock forward by `seconds` or to `to` (exactly one; never back; at most " +
        "366 days) (sandbox only). " +
      'Before answering, runs in time order all scheduled work that falls due on the way, as one ' +
      'job; with `detach: true` answers at once with that job, whose `result` becomes the reply ' +
        '(`ops.jobs.get`). `bank sandbox advance` detaches and follows it. Every partner\'s ' +
        "clock moves with the bank's. With `partner_id`, moves that partner's clock only, as " +
        '`svc.sandbox.<partner_id>.clock.advance` does.',
    request: z.strictObject({ ...advanceTarget, partner_id: uuid().optional(), detach }),
    response: reportOrJob(advanceReport),
    // Months of clearing cycles and collection runs take a while to run through; a detached call is
    // answered at once.
    replyTimeoutMs: 10 * 60_000,
    cli: { words: 'sandbox advance', positionals: ['seconds'], names: { seconds: 'duration' },
      durations: ['seconds'] },
  }),
  messages: operation({
    name: 'ops_sandbox_messages',
    subject: 'ops.sandbox.messages',
    permission: 'operator',
    summary: 'List what the notifier sent, newest first (sandbox only); `to` narrows to one recipient.',
    request: z.strictObject({
      limit: pageLimit(messages_limit_max).optional(),
      to: z.string({ error: 'must be a string' }).max(email_length_max,
        { error: `must be at most ${email_length_max} characters` }).optional(),
    }),
    response: z.object({ messages: z.array(sandboxMessage) }),
  }),
  partnerClock: operation({
    name: 'sandbox_partner_clock',
    sdk: 'sandbox.clock',
    subject: 'svc.sandbox.<partner_id>.clock',
    permission: 'read',
    summary: "Read your own sandbox clock (sandbox only): the time the bank works by for your " +
      "requests and your work, and the bank's own time, which yours is never behind.",
    request: emptyRequest,
    response: partnerClockView,
  }),
  partnerAdvance: operation({
    name: 'sandbox_partner_clock_advance',
    sdk: 'sandbox.advance',
    subject: 'svc.sandbox.<partner_id>.clock.advance',
    permission: 'write',
    summary: 'Move your own sandbox clock forward by `seconds` or to `to` (exactly one; never ' +
      'back; at most 366 days) (sandbox only). ' + partnerAdvanceSummary,
    request: z.strictObject(advanceTarget),
    response: advanceReport,
    replyTimeoutMs: 10 * 60_000,
  }),
  partnerReset: operation({
    name: 'sandbox_partner_reset',
    sdk: 'sandbox.reset',
    subject: 'svc.sandbox.<partner_id>.reset',
    permission: 'write',
    summary: 'Retire your sandbox data and start again as just onboarded (sandbox only). ' +
      'Without `confirm`, answers what a reset would retire and changes nothing; with ' +
      '`confirm` set to your own partner id, resets. ' + resetSummary +
      ' 409 while an advance of a sandbox clock runs.',
    request: z.strictObject({ confirm: uuid().optional() }),
    response: resetReport,
  }),
  reset: operation({
    name: 'ops_sandbox_reset',
    subject: 'ops.sandbox.reset',
    permission: 'operator',
    summary: "Retire a partner's sandbox data (sandbox only), as " +
      '`svc.sandbox.<partner_id>.reset` with `confirm` does. ' + resetSummary +
      ' 409 while an advance of a sandbox clock runs.',
    request: z.strictObject({ partner_id: uuid() }),
    response: resetReport,
  }),
}
