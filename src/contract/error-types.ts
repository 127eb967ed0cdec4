// The one closed table of error types: each type's HTTP-style code and what it means.
// The error classes (src/errors.ts) take their codes from it, the AsyncAPI document lists
// it, and a docs test holds the list of error types in docs/guides/wire-conventions.md to
// it. It lives beside the contract because callers read it too: it imports nothing.

export const errorTypes = {
  invalid_request: { code: 400,
    description: 'A field is missing or wrong; `details` names each failing field.' },
  invalid_json: { code: 400, description: 'The body is not valid JSON.' },
  payload_too_large: { code: 400,
    description: 'The body is larger than the limit (64 KiB by default).' },
  invalid_otp: { code: 400,
    description: "A bulk batch's one-time PIN is wrong; `details` gives the attempts left (the third wrong PIN ends the batch failed)." },
  otp_expired: { code: 400,
    description: "A bulk batch's one-time PIN has expired (5 minutes); the batch has ended failed and its hold is released." },
  unauthorized: { code: 401,
    description: 'The credential is missing, malformed, expired or revoked.' },
  forbidden: { code: 403,
    description: "The credential may not use this subject: a missing permission, another partner's id, or the wrong kind of credential." },
  not_found: { code: 404,
    description: "No such resource; another partner's resource is answered the same way." },
  conflict: { code: 409,
    description: 'The request repeats or contradicts one already taken, e.g. a `clientTxId` already used.' },
  unprocessable: { code: 422,
    description: 'Well formed, but the bank cannot act on it in the current state.' },
  account_not_active: { code: 422,
    description: "The account's status does not allow it: a debit from an account that is not `active` (frozen, blocked, dormant or closed), or a credit to one that is blocked or closed. `details` names the account and its status (`svc.account.<partner_id>.status` tells why)." },
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
} as const satisfies Record<string, { code: number; description: string }>

export type ErrorType = keyof typeof errorTypes

/** One failing field of a refused request: the `details` of an `invalid_request` reply. */
export interface FieldIssue {
  field: string
  message: string
}
