import { z } from 'zod'
import { pageCursor } from '../contract/cursor.ts'
import { text, timestamp, uuid } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Sanctions screening as operators call it: a list file uploaded part by part (what
// `bank screening load <file>` sends; a list is megabytes, a NATS message at most one), the
// loads (versions) of each list, and a name screened by hand. Partners never see a list
// entry: these are `ops.` operations only.

/** The most bytes of a list file one `ops.screening.upload` part carries (before base64). */
export const upload_part_bytes_max = 256 * 1024
/** The most parts of one file: 100 MiB at most (OFAC's SDN list is about 10 MiB). */
export const upload_parts_max = 400
/** The most characters of a name screened. */
export const screened_name_chars_max = 300

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date, YYYY-MM-DD' })
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`))
    && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
  { error: 'must be a real date, YYYY-MM-DD' })

const source = z.enum(['un_consolidated', 'ofac_sdn'])

export const listLoad = z.object({
  id: z.string(),
  source,
  list_date: z.string().nullable(),
  entry_count: z.number(),
  sha256: z.string(),
  bytes: z.number(),
  loaded_at: timestamp,
  loaded_by: z.string(),
  active: z.boolean(),
  replaced_at: timestamp.nullable(),
})

const hit = z.object({
  entry_id: z.string(),
  source,
  list_ref: z.string(),
  load_id: z.string(),
  kind: z.enum(['individual', 'entity', 'vessel', 'aircraft']),
  matched_name: z.string(),
  score: z.number(),
  name_score: z.number(),
  date_of_birth: z.enum(['match', 'year_match', 'mismatch', 'not_compared']),
  id_number: z.enum(['match', 'no_match', 'not_compared']),
})

const reviewStatus = z.enum(['open', 'clear_pending', 'cleared', 'confirmed'])

const reviewView = z.object({
  id: z.string(),
  partner_id: z.string(),
  entity_id: z.string(),
  subject: z.enum(['entity', 'user', 'payout', 'incoming']),
  subject_id: z.string(),
  cause: z.enum(['create', 'update', 'rescreen', 'payout', 'incoming']),
  screened: z.array(z.object({ name: z.string(), kind: z.enum(['individual', 'entity']),
    date_of_birth: z.string().optional(), id_number: z.string().optional() })),
  hits: z.array(hit),
  top_score: z.number(),
  status: reviewStatus,
  needs_second_operator: z.boolean(),
  opened_at: timestamp,
  clear_requested_by: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: timestamp.nullable(),
  reason: z.string().nullable(),
})

const base64Part = z.string().min(1).max(Math.ceil(upload_part_bytes_max / 3) * 4)
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, { error: 'must be base64' })

export const screeningOperations = {
  screeningUpload: operation({
    name: 'ops_screening_upload',
    sdk: 'screening.upload',
    subject: 'ops.screening.upload',
    permission: 'operator',
    summary: 'One part of a sanctions list file (the UN consolidated list or OFAC\'s SDN list, ' +
      'their XML formats), as `bank screening load <file>` sends it: parts of at most ' +
      `${upload_part_bytes_max} bytes (base64), numbered from 0, each naming the whole file's ` +
      'SHA-256 and number of parts. A part sent again is taken once. When the last part is in, ' +
      'the file is checked against its SHA-256, read, and loaded as a new version of its list ' +
      'that replaces the active one at once; every customer is then re-screened in the ' +
      'background (`screening.rescreen` job). Answers `receiving` until then, then `loaded` ' +
      'with the load.',
    request: z.strictObject({
      upload_id: uuid(),
      part: z.number().int().min(0).max(upload_parts_max - 1),
      parts: z.number().int().min(1).max(upload_parts_max),
      sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' }),
      data: base64Part,
    }),
    response: z.object({
      status: z.enum(['receiving', 'loaded']),
      received: z.number(),
      parts: z.number(),
      load: listLoad.nullable(),
      rescreen_job_id: z.string().nullable(),
    }),
    requestBytesMax: 512 * 1024,
    replyTimeoutMs: 120_000,
  }),
  screeningLists: operation({
    name: 'ops_screening_lists',
    sdk: 'screening.lists',
    subject: 'ops.screening.lists',
    permission: 'operator',
    summary: 'The loads of the sanctions lists, newest first (at most `limit`, 50 by default): ' +
      "each list's own date, when and by whom it was loaded, its entries, and whether it is " +
      'the active version; and the scores in force (`review_score`, `confirm_score`).',
    request: z.strictObject({ limit: z.number().int().min(1).max(500).optional() }),
    response: z.object({
      review_score: z.number(),
      confirm_score: z.number(),
      loads: z.array(listLoad),
    }),
  }),
  screeningCheck: operation({
    name: 'ops_screening_check',
    sdk: 'screening.check',
    subject: 'ops.screening.check',
    permission: 'operator',
    summary: 'Screens a name by hand against the active lists, as the bank screens customers: ' +
      'names and aliases, transliterated and in any order, fuzzily; a date of birth and an ID ' +
      'number raise or lower the score where the list has them. Answers the hits at or above ' +
      '`threshold` (the review score by default), best first, at most 20. Changes nothing.',
    request: z.strictObject({
      name: z.string().trim().min(1).max(screened_name_chars_max),
      kind: z.enum(['individual', 'entity']).optional(),
      date_of_birth: day.optional(),
      id_number: z.string().trim().min(1).max(64).optional(),
      threshold: z.number().min(0).max(1).optional(),
    }),
    response: z.object({
      threshold: z.number(),
      lists: z.array(z.object({ source, load_id: z.string(), list_date: z.string().nullable() })),
      hits: z.array(hit),
    }),
    cli: { positionals: ['name'] },
  }),
  screeningReviews: operation({
    name: 'ops_screening_reviews',
    sdk: 'screening.reviews',
    subject: 'ops.screening.reviews',
    permission: 'operator',
    summary: 'Screening reviews, newest first, filtered by status, partner and entity: each a ' +
      "customer's (an entity's or a user's) or a payment's counterparty's name that came to " +
      'the review score against a list, with its hits, held until an operator decides it. At ' +
      'most `limit` (50 by default); `next_cursor` pages on.',
    request: z.strictObject({
      status: reviewStatus.optional(),
      partner_id: uuid().optional(),
      entity_id: uuid().optional(),
      limit: z.number().int().min(1).max(500).optional(),
      cursor: pageCursor().optional(),
    }),
    response: z.object({ reviews: z.array(reviewView), next_cursor: z.string().optional() }),
  }),
  screeningReview: operation({
    name: 'ops_screening_review',
    sdk: 'screening.review',
    cli: { words: 'screening review show', positionals: ['review_id'] },
    subject: 'ops.screening.review',
    permission: 'operator',
    summary: 'One screening review with its hits (the list entries, their scores and what the ' +
      'date of birth and ID number did).',
    request: z.strictObject({ review_id: uuid() }),
    response: reviewView,
  }),
  screeningReviewDecide: operation({
    name: 'ops_screening_review_decide',
    sdk: 'screening.decide',
    cli: { positionals: ['review_id', 'decision'] },
    subject: 'ops.screening.review.decide',
    permission: 'operator',
    summary: 'Decides a screening review: `clear` (a false positive: the hold is lifted once ' +
      "no other review holds the customer, and the accounts the review froze are unfrozen) or " +
      '`confirm` (the customer is the listed one: it stays held and its accounts frozen, and ' +
      'only an operator can unfreeze them). A review whose best score is at or above the ' +
      'confirm score is cleared by two operators: the first one\'s `clear` makes it ' +
      '`clear_pending`, another operator\'s `clear` clears it (the same operator again is 409). ' +
      'Deciding a decided review the same way again answers it; the other way is 409.',
    request: z.strictObject({ review_id: uuid(), decision: z.enum(['clear', 'confirm']),
      reason: text(1, 2_000) }),
    response: reviewView,
  }),
}
