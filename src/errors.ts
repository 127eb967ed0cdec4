import {
  codesOf,
  errorTypes,
  type DuplicateOf,
  type ErrorDetail,
  type ErrorType,
  type FieldIssue,
} from './contract/error-types.ts'

// The error classes of the one closed table of error types (src/contract/error-types.ts,
// which gives each type its code). Domain code throws these; the NATS transport maps them
// to `Nats-Service-Error-Code` / `Nats-Service-Error` headers and the JSON body of
// docs/guides/wire-conventions.md ("Errors"). Anything else that escapes a handler is a
// programmer's mistake and becomes an opaque 500 with a correlation id.

export { errorTypes, type DuplicateOf, type ErrorDetail, type ErrorType, type FieldIssue }

export interface ErrorBody {
  error: {
    code: number
    type: ErrorType
    message: string
    details: unknown[]
  }
}

export class BankError extends Error {
  /** The type's code, from the table: never written beside the type. */
  readonly code: number
  /** Reply headers that go with this error (e.g. `Retry-After-Ms` on a 429). */
  headers: Record<string, string> | undefined

  /**
   * `code` only where the table names another code for the type (`other_codes`): a refusal
   * whose code the interface fixes otherwise.
   */
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly details: unknown[] = [],
    code?: number,
  ) {
    super(message)
    this.name = new.target.name
    assert(code === undefined || codesOf(type).includes(code),
      `${type} is never answered with ${code}`)
    this.code = code ?? errorTypes[type].code
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, type: this.type, message: this.message,
      details: this.details } }
  }
}

export class Invalid extends BankError {
  constructor(message: string, details: FieldIssue[] = []) {
    super('invalid_request', message, details)
  }
  static field(field: string, message: string): Invalid {
    return new Invalid(`${field}: ${message}`, [{ field, message }])
  }

  /**
   * A refusal of many fields at once (`invalid request: a is required; b …; and 7 more`).
   * It names at most `invalid_message_fields_max` in its message and lists at most
   * `invalid_details_max` in `details`: a request with thousands of bad items (every element
   * of a huge array) must not make a reply larger than NATS can carry.
   */
  static listing(what: string, details: FieldIssue[]): Invalid {
    const listed = details.slice(0, invalid_message_fields_max).map(
      (d) => `${d.field} ${d.message}`)
    const more = details.length > invalid_message_fields_max
      ? `; and ${details.length - invalid_message_fields_max} more` : ''
    return new Invalid(`${what}: ${listed.join('; ')}${more}`,
      details.slice(0, invalid_details_max))
  }
}

/** The most fields a refusal's `details` lists. */
export const invalid_details_max = 50
/** The most fields a refusal's message names. */
export const invalid_message_fields_max = 5

export class InvalidJson extends BankError {
  constructor(message = 'request body is not valid JSON') {
    super('invalid_json', message)
  }
}

export class PayloadTooLarge extends BankError {
  constructor(bytes: number, limit: number) {
    super('payload_too_large', `request body is ${bytes} bytes; the limit is ${limit}`, [
      { field: '(body)', message: `at most ${limit} bytes` },
    ])
  }
}

export class Unauthorized extends BankError {
  constructor(message = 'missing, malformed, expired or revoked credential') {
    super('unauthorized', message)
  }
}

export class Forbidden extends BankError {
  constructor(message = 'permission denied') {
    super('forbidden', message)
  }
}

export class NotFound extends BankError {
  constructor(what: string) {
    super('not_found', `${what} not found`)
  }
}

export class Conflict extends BankError {
  constructor(message: string, details: unknown[] = []) {
    super('conflict', message, details)
  }
}

/**
 * The paying account's available balance does not cover the payment (and its fee): 400 on
 * `field`, or the 422 the table allows where that is the code (an operator's reversal).
 */
export class InsufficientFunds extends BankError {
  constructor(field: string, message: string, code?: 422) {
    super('insufficient_funds', `${field}: insufficient funds: ${message}`,
      [{ field, message: `insufficient funds: ${message}` }], code)
  }
}

/** An amount over a per-payment limit (400 on `field`). */
export class LimitExceeded extends BankError {
  constructor(message: string, details: FieldIssue[]) {
    super('limit_exceeded', message, details)
  }
  static field(field: string, message: string): LimitExceeded {
    return new LimitExceeded(`${field}: ${message}`, [{ field, message }])
  }
  /** Many payments over their limits (a bulk batch), listed as Invalid.listing lists. */
  static listing(what: string, details: FieldIssue[]): LimitExceeded {
    const listed = Invalid.listing(what, details)
    return new LimitExceeded(listed.message, listed.details as FieldIssue[])
  }
}

/** A repeat of a request already taken with the same key and fields: names the original. */
export class Duplicate extends BankError {
  constructor(message: string, original: DuplicateOf) {
    super('duplicate', message, [original])
  }
}

/**
 * An idempotency key used before for a different request: one detail per field that differs,
 * each with the original's id.
 */
export class IdempotencyKeyReused extends BankError {
  constructor(key: string, differing: ErrorDetail[]) {
    super('idempotency_key_reused', `${key} was used within its window for a different ` +
      `request (differing: ${differing.map((d) => d.field).join(', ')}): a new request needs ` +
      `a new ${key}`, differing)
  }
}

/**
 * Refused for the resource's state: 422, or the code the interface fixes for that refusal
 * (the table's `other_codes`: 400 for a bulk batch, 409 where the bank said 409 before).
 */
/** A customer held for sanctions screening review (RULINGS "Financial crime controls"). */
export class ScreeningHeld extends BankError {
  constructor(entityId: string, status: 'review' | 'confirmed') {
    super('screening_review', status === 'review'
      ? `entity ${entityId} is held for the bank's sanctions screening review: no account ` +
        'opens for it until the bank clears it'
      : `entity ${entityId} is held by the bank after its sanctions screening: no account ` +
        'opens for it', [{ field: 'entity_id', message: `screening ${status}`,
      entity_id: entityId }])
  }
}

export class InvalidState extends BankError {
  constructor(message: string, details: FieldIssue[] = [], code?: 400 | 409) {
    super('invalid_state', message, details, code)
  }
  /** A state refusal on one field of the request (`field: message`). */
  static field(field: string, message: string, code?: 400 | 409): InvalidState {
    return new InvalidState(`${field}: ${message}`, [{ field, message }], code)
  }
}

export class Unprocessable extends BankError {
  constructor(message: string, details: FieldIssue[] = []) {
    super('unprocessable', message, details)
  }
}

/** A debit from (or credit to) an account whose status does not allow it. */
export class AccountNotActive extends BankError {
  constructor(field: string, accountId: string, status: string, what = 'debited') {
    super('account_not_active', `${field}: the account is ${status} and cannot be ${what}`,
      [{ field, message: `the account is ${status}`, account_id: accountId, status }])
  }
}

/** Header of a 429: how many milliseconds until a retry can be taken. */
export const retry_after_header = 'Retry-After-Ms'

export class TooManyAttempts extends BankError {
  constructor(message: string, retryAfterMs?: number) {
    super('too_many_attempts', message)
    if (retryAfterMs !== undefined) this.headers =
      { [retry_after_header]: String(Math.max(1, Math.ceil(retryAfterMs))) }
  }
}

/** Over the credential's request budget: nothing was done; retry after `retryAfterMs`. */
export class RateLimited extends BankError {
  constructor(message: string, retryAfterMs: number) {
    super('rate_limited', message)
    this.headers = { [retry_after_header]: String(Math.max(1, Math.ceil(retryAfterMs))) }
  }
}

export class Unavailable extends BankError {
  constructor(message: string) {
    super('unavailable', message)
  }
}

export function internalErrorBody(correlationId: string): ErrorBody {
  return {
    error: {
      code: errorTypes.internal_error.code,
      type: 'internal_error',
      message: `internal error; quote correlation id ${correlationId} to the bank`,
      details: [],
    },
  }
}

/** A programmer's mistake or a broken invariant: never caught as a domain error. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`)
}
