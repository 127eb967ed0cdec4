// The one closed table of error types: each type's HTTP-style code and what it means.
// The error classes (src/errors.ts) take their codes from it, the AsyncAPI document lists
// it, and a docs test holds the list of error types in docs/guides/wire-conventions.md to
// it. It lives beside the contract because callers read it too: it imports nothing.
//
// A type is what a partner branches on: each refusal a partner can act on has its own, and a
// type's name never changes (RULINGS.md, "Partner integration"). Its code is the one the
// interface and the rulings fix; where they fix another code for the same refusal in one place
// (a bulk batch's verify or cancel in the wrong state is 400), `other_codes` names it and
// where.

export const errorTypes = {
  invalid_request: { code: 400,
    description: 'A field is missing or wrong; `details` names each failing field.' },
  invalid_json: { code: 400, description: 'The body is not valid JSON.' },
  payload_too_large: { code: 400,
    description: 'The body is larger than the limit (64 KiB by default).' },
  insufficient_funds: { code: 400,
    description: "The paying account's available balance does not cover the payment plus its fee (a transfer, an internal payment) or a bulk batch's total plus fees: `details` names `amount` (`total_amount` for a batch). Nothing was taken and the `clientTxId` stays free, so the same request may be sent again once the money is there.",
    other_codes: [{ code: 422,
      description: "a card network's clearing above its hold, and an operator's reversal or legal hold larger than the account's available balance" }] },
  limit_exceeded: { code: 400,
    description: 'The amount is over a per-payment limit: an EFT is at most R5,000,000; an RTC or an internal payment at most R5,000,000 on South African business days from 00:00 until 16:00 SAST and R250,000 at other times. `details` names `amount` (`payments[i].amount` in a bulk batch) and the limit. Nothing was done.' },
  otp_invalid: { code: 400,
    description: "A bulk batch's one-time PIN is wrong; `details` gives the attempts left (the third wrong PIN ends the batch failed)." },
  otp_expired: { code: 400,
    description: "A bulk batch's one-time PIN has expired (5 minutes); the batch has ended failed and its hold is released." },
  unauthorized: { code: 401,
    description: 'The credential is missing, malformed, expired or revoked.' },
  forbidden: { code: 403,
    description: "The credential may not use this subject: a missing permission, another partner's id, or the wrong kind of credential." },
  not_found: { code: 404,
    description: "No such resource; another partner's resource is answered the same way." },
  duplicate: { code: 409,
    description: 'The request repeats one already taken with the same idempotency key and the same fields: a transfer\'s `clientTxId` within its window (24 hours), a debit order\'s within 30 days, a bulk batch\'s `bulk_payment_id`. Nothing was done again; `details[0]` carries the original\'s id (`tx_id`, `debit_order_id` or `bulk_payment_id`): a retry answered so was taken the first time.' },
  idempotency_key_reused: { code: 409,
    description: 'The idempotency key (`clientTxId`, `bulk_payment_id`) was used within its window for a different request: `details` names each field that differs from the original\'s (`amount`, `account_id`, …) with the original\'s id. Nothing was done: a new payment needs a new key.' },
  conflict: { code: 409,
    description: 'The request contradicts what the bank holds: an entity, partner or mandate reference that exists already, or work of its kind already running (a clearing cycle, a sandbox clock advance).' },
  invalid_state: { code: 422,
    description: "The resource's state does not allow the operation (an account frozen for this action, a hold released already, a card that is blocked or no longer pending, a user whose KYC is approved already); the message names the state.",
    other_codes: [
      { code: 400,
        description: 'a bulk batch verified or cancelled when it is not `pending_otp`, a debit order or mandate cancelled when it no longer can be (400, as the interface and rulings fix it)' },
      { code: 409,
        description: "a card's or a card authorization's state, a user's or entity's KYC or KYB approved already, a transaction not Successful (409 as before)" },
    ] },
  unprocessable: { code: 422,
    description: 'Well formed, but the bank cannot act on it: a debit order its mandate does not cover (`details` names each field), a statement too large to answer at once.' },
  account_not_active: { code: 422,
    description: "The account's status does not allow it: a debit from an account that is not `active` (frozen, blocked, dormant or closed), or a credit to one that is blocked or closed. `details` names the account and its status (`svc.account.<partner_id>.status` tells why)." },
  screening_review: { code: 422,
    description: "The customer is held for the bank's sanctions screening review: a name of the entity or of one of its users came close to a name on a sanctions list, and no account opens for the entity until the bank has cleared it (its accounts, if it has any, are frozen meanwhile). `details` names the `entity_id` (and the `user_id` when a user's name was the hit). The list and its entry are never told. The `Screening-Status` reply header of the entity's and the user's reads says where the review stands (`review`, `confirmed`, `clear`).",
  },
  account_not_closable: { code: 422,
    description: 'The account cannot be closed yet: `details` names each obstacle (`pending_transactions`, `legal_holds`, `payout_missing`, `payout_refused`) with a message; remove them and ask again.' },
  too_many_attempts: { code: 429,
    description: 'Too many attempts in a short time; wait before trying again (the `Retry-After-Ms` reply header says how long, when the bank knows).' },
  rate_limited: { code: 429,
    description: "The credential has spent its request budget (a token bucket per credential); the `Retry-After-Ms` reply header says when the next request will be taken. Nothing was done." },
  internal_error: { code: 500,
    description: "The bank's own fault; the message carries only a correlation id to quote to the bank." },
  unavailable: { code: 503,
    description: 'The bank cannot serve the request now (no instance answering, overloaded, or its database unreachable); try again.' },
} as const satisfies Record<string, { code: number; description: string;
  other_codes?: ReadonlyArray<{ code: number; description: string }> }>

export type ErrorType = keyof typeof errorTypes

/** The codes a type may answer with: its own, then any other the table names for it. */
export function codesOf(type: ErrorType): number[] {
  const entry: { code: number; other_codes?: ReadonlyArray<{ code: number }> } = errorTypes[type]
  return [entry.code, ...(entry.other_codes ?? []).map((other) => other.code)]
}

/** One failing field of a refused request: the `details` of an `invalid_request` reply. */
export interface FieldIssue {
  field: string
  message: string
}

/** A `duplicate` reply's first detail: the key's field and the original request's id. */
export interface DuplicateOf extends FieldIssue {
  /** The original transfer (a transfer's or internal payment's `clientTxId`). */
  tx_id?: string
  /** The original debit order (a debit order's `clientTxId`). */
  debit_order_id?: string
  /** The batch (a bulk batch's `bulk_payment_id`). */
  bulk_payment_id?: string
}

/** One detail of an error reply: a field and a message, with what the type adds. */
export interface ErrorDetail extends DuplicateOf {
  /** `otp_invalid`: wrong PINs the batch still allows. */
  attempts_left?: number
  /** `account_not_active`: the account and its status. */
  account_id?: string
  status?: string
  /** `screening_review`: the customer held (with `user_id` when a user was the hit). */
  entity_id?: string
  user_id?: string
  /** `account_not_closable`: what stands in the way. */
  obstacle?: string
}
