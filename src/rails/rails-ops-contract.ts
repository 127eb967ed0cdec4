import { z } from 'zod'
import { centsString } from '../accounts/account-contract.ts'
import { invalid_cursor_message, pageCursor } from '../contract/cursor.ts'
import { pageLimit, text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// What operators see of the ISO 20022 rail (issue 42; docs/operators/rails.md, "What operators
// see"): the messages the bank sent and applied, one message with its payments (and, when
// asked, its XML), the inbound files refused whole, and the payouts sent whose answer has not
// come after BANK_RAIL_UNANSWERED_AFTER_MINUTES. Read only. Amounts are integer-cent strings.
// The lists are plain reads (not audited); `ops.rails.message` is audited, since it can hand
// out a whole file of customers' names and account numbers.

export const rails_page_limit_default = 50
export const rails_page_limit_max = 200
/** Payments of one message per page of `ops.rails.message`. */
export const message_payments_limit_default = 100
export const message_payments_limit_max = 1000
/** The most characters of a message's XML one reply carries (the rest is cut, and said). */
export const message_body_chars_max = 256 * 1024
/** The most minutes `older_than_minutes` may ask for: 30 days (the setting's bound too). */
export const unanswered_minutes_max = 43_200

/** How the rail's messages travel: out (the bank's) or in (the clearing house's). */
export const rail_directions = ['out', 'in'] as const
export const rail_payment_types = ['EFT', 'RTC'] as const

const direction = z.enum(rail_directions, { error: 'must be out or in' })
const paymentType = z.enum(rail_payment_types, { error: 'must be EFT or RTC' })

/** A message id as the rail carries it (ISO 20022 Max35Text): the bank's `PB…`, another's. */
const messageId = () => text(1, 35)

/**
 * A message kind: its name (`pacs.008`) or its name and version (`pacs.008.001.09`). The name
 * alone matches every version.
 */
const messageKind = () => z.string({ error: 'must be a string' })
  .regex(/^[a-z]{4}\.\d{3}(\.\d{3}\.\d{2})?$/,
    { error: 'must be a message kind such as pacs.008 or pacs.002.001.11' })

/**
 * The messages list's cursor: longer than other lists' (`pageCursor`), since it names a
 * message by its time, direction and id, and another bank's ids are up to 35 characters.
 */
const messageCursor = () => z.string({ error: 'must be a string' })
  .regex(/^[A-Za-z0-9_-]{1,200}$/, { error: invalid_cursor_message })

export const railMessageView = z.object({
  message_id: z.string(),
  direction,
  /** The message's name and version, e.g. `pacs.008.001.09`. */
  kind: z.string(),
  file_name: z.string(),
  /** EFT or RTC for a pacs.008 the bank sent; null otherwise. */
  payment_type: paymentType.nullable(),
  /** Out: when the bank made it (its CreDtTm). In: when the bank applied it. */
  created_at: timestamp,
  /** Out: the settlement day it asks for (`YYYY-MM-DD`); null otherwise. */
  settlement_date: z.string().nullable(),
  /** Out: when its file was last written whole (null: not yet, or an RTC's, never a file). */
  written_at: timestamp.nullable(),
  /** In: the SHA-256 of the file as applied. */
  sha256: z.string().nullable(),
  /** How many payments (or statuses, or returns) it carries. */
  transaction_count: z.number(),
  /** Out: the sum of its amounts in cents. In: null (the bank does not record it). */
  control_sum: centsString.nullable(),
  /**
   * A pacs.008 the bank sent: how many of its payouts have a final answer (accepted or
   * rejected; a pending status is no answer). Null for any other message.
   */
  answered: z.number().nullable(),
})
export type RailMessageView = z.output<typeof railMessageView>

export const railPaymentView = z.object({
  tx_id: z.string(),
  /** Its place in the message, from 0. */
  position: z.number(),
  /** Whose payout it is: a transfer's, or a bulk batch's payment. */
  source: z.enum(['transfer', 'bulk']),
  amount: centsString,
  /** ACSC, ACCC, RJCT… from the clearing house's status report; null while it has none. */
  status: z.string().nullable(),
  reason_code: z.string().nullable(),
  answered_at: timestamp.nullable(),
  /** The return's (pacs.004) reason code, once the payment came back. */
  returned_reason_code: z.string().nullable(),
})
export type RailPaymentView = z.output<typeof railPaymentView>

export const railMessageBody = z.object({
  /** The XML, at most `message_body_chars_max` characters; null when there is none to show. */
  xml: z.string().nullable(),
  /** Whether the XML was cut at `message_body_chars_max` characters. */
  truncated: z.boolean(),
  /**
   * Where it came from: `record`, made again from the bank's record of a message it sent (the
   * same bytes as its file); `archive`, the applied file in the rail folder's archive/.
   */
  source: z.enum(['record', 'archive']).nullable(),
  /** Why there is no XML (the applied file is no longer in archive/, or is not the same). */
  note: z.string().nullable(),
})

export const railRefusalView = z.object({
  refusal_id: z.string(),
  file_name: z.string(),
  refused_at: timestamp,
  reason: z.string(),
  /** The SHA-256 of the file refused. */
  sha256: z.string(),
})
export type RailRefusalView = z.output<typeof railRefusalView>

export const unansweredPayoutView = z.object({
  tx_id: z.string(),
  /** The payout's partner and account (null only if its transaction row cannot be found). */
  partner_id: z.string().nullable(),
  account_id: z.string().nullable(),
  /** The account number it is paid from, as the message names it. */
  account_number: z.string(),
  source: z.enum(['transfer', 'bulk']),
  payment_type: paymentType.nullable(),
  amount: centsString,
  recipient_name: z.string(),
  message_id: z.string(),
  file_name: z.string(),
  /** When its message was made (sent, for an RTC; written into outbound/, for an EFT file). */
  sent_at: timestamp,
  /** Seconds from `sent_at` to the bank's time of the reply (`as_of`). */
  age_seconds: z.number(),
  /** A status that is not final (PDNG, ACSP…), when the clearing house sent one; else null. */
  status: z.string().nullable(),
})
export type UnansweredPayoutView = z.output<typeof unansweredPayoutView>

export const railsOpsOperations = {
  messages: operation({
    name: 'ops_rails_messages',
    sdk: 'rails.messages',
    subject: 'ops.rails.messages',
    permission: 'operator',
    summary: `The ISO 20022 messages the bank sent (out) and applied (in), newest first, without their bodies: kind, file name, time, payments, control sum (integer-cent string) and, for a pacs.008 sent, how many payouts have a final answer. Filter by direction, kind (\`pacs.008\` or \`pacs.008.001.09\`), payment type, or tx_id (the message that carried that payout); limit (default ${rails_page_limit_default}, max ${rails_page_limit_max}) and next_cursor for the next page.`,
    request: z.strictObject({
      direction: direction.optional(),
      kind: messageKind().optional(),
      payment_type: paymentType.optional(),
      tx_id: uuid().optional(),
      limit: pageLimit(rails_page_limit_max).default(rails_page_limit_default),
      cursor: messageCursor().optional(),
    }),
    response: z.object({
      messages: z.array(railMessageView),
      next_cursor: z.string().optional(),
    }),
  }),
  message: operation({
    name: 'ops_rails_message',
    sdk: 'rails.message',
    subject: 'ops.rails.message',
    permission: 'operator',
    summary: `One message of the rail by its id (with \`direction\` when an id names one each way), with its payouts in order (a pacs.008 the bank sent: tx_id, amount, status, reason code, return; limit default ${message_payments_limit_default}, max ${message_payments_limit_max}, and next_cursor), and with \`include_body\` its XML (at most ${message_body_chars_max} characters): made again from the record for a message the bank sent, read from archive/ for one it applied. Audited: the body names customers.`,
    request: z.strictObject({
      message_id: messageId(),
      direction: direction.optional(),
      include_body: z.boolean({ error: 'must be true or false' }).default(false),
      limit: pageLimit(message_payments_limit_max).default(message_payments_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({
      message: railMessageView,
      payments: z.array(railPaymentView),
      next_cursor: z.string().optional(),
      body: railMessageBody.optional(),
    }),
    cli: { positionals: ['message_id'] },
  }),
  refusals: operation({
    name: 'ops_rails_refusals',
    sdk: 'rails.refusals',
    subject: 'ops.rails.refusals',
    permission: 'operator',
    summary: `Inbound files the bank refused whole, newest first: file name, when, the reason and the file's SHA-256; limit (default ${rails_page_limit_default}, max ${rails_page_limit_max}) and next_cursor for the next page.`,
    request: z.strictObject({
      limit: pageLimit(rails_page_limit_max).default(rails_page_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({
      refusals: z.array(railRefusalView),
      next_cursor: z.string().optional(),
    }),
  }),
  unanswered: operation({
    name: 'ops_rails_unanswered',
    sdk: 'rails.unanswered',
    subject: 'ops.rails.unanswered',
    permission: 'operator',
    summary: `Payouts sent to the clearing house with no final answer after \`older_than_minutes\` (default BANK_RAIL_UNANSWERED_AFTER_MINUTES, reported as \`after_minutes_setting\`; 0 lists every one), oldest first: tx_id, partner, account, amount (integer-cent string), payment type, message, when sent and its age by the bank's clock. Filter by partner and payment type; \`total\` counts them all; limit (default ${rails_page_limit_default}, max ${rails_page_limit_max}) and next_cursor for the next page.`,
    request: z.strictObject({
      partner_id: uuid().optional(),
      payment_type: paymentType.optional(),
      older_than_minutes: z.int({ error: 'must be a whole number' })
        .min(0, { error: 'must be at least 0' })
        .max(unanswered_minutes_max, { error: `must be at most ${unanswered_minutes_max}` })
        .optional(),
      limit: pageLimit(rails_page_limit_max).default(rails_page_limit_default),
      cursor: pageCursor().optional(),
    }),
    response: z.object({
      /** The bank's time the ages are measured to. */
      as_of: timestamp,
      /** The age the list was asked for, in minutes. */
      older_than_minutes: z.number(),
      /** BANK_RAIL_UNANSWERED_AFTER_MINUTES: the age used unless the request gave one. */
      after_minutes_setting: z.number(),
      /** How many payouts match, on every page. */
      total: z.number(),
      payouts: z.array(unansweredPayoutView),
      next_cursor: z.string().optional(),
    }),
  }),
}
