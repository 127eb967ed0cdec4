// The one closed table of error types. Domain code throws these; the NATS transport maps
// them to `Nats-Service-Error-Code` / `Nats-Service-Error` headers and the JSON body of
// RULINGS.md ("Errors"). Anything else that escapes a handler is a programmer's mistake
// and becomes an opaque 500 with a correlation id.

export interface FieldIssue {
  field: string
  message: string
}

export type ErrorType =
  | 'invalid_request'
  | 'invalid_json'
  | 'payload_too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'too_many_attempts'
  | 'unavailable'
  | 'internal_error'

export interface ErrorBody {
  error: {
    code: number
    type: ErrorType
    message: string
    details: unknown[]
  }
}

export class BankError extends Error {
  constructor(
    readonly code: number,
    readonly type: ErrorType,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message)
    this.name = new.target.name
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, type: this.type, message: this.message, details: this.details } }
  }
}

export class Invalid extends BankError {
  constructor(message: string, details: FieldIssue[] = []) {
    super(400, 'invalid_request', message, details)
  }
  static field(field: string, message: string): Invalid {
    return new Invalid(`${field}: ${message}`, [{ field, message }])
  }
}

export class InvalidJson extends BankError {
  constructor(message = 'request body is not valid JSON') {
    super(400, 'invalid_json', message)
  }
}

export class PayloadTooLarge extends BankError {
  constructor(bytes: number, limit: number) {
    super(400, 'payload_too_large', `request body is ${bytes} bytes; the limit is ${limit}`, [
      { field: '(body)', message: `at most ${limit} bytes` },
    ])
  }
}

export class Unauthorized extends BankError {
  constructor(message = 'missing, malformed, expired or revoked credential') {
    super(401, 'unauthorized', message)
  }
}

export class Forbidden extends BankError {
  constructor(message = 'permission denied') {
    super(403, 'forbidden', message)
  }
}

export class NotFound extends BankError {
  constructor(what: string) {
    super(404, 'not_found', `${what} not found`)
  }
}

export class Conflict extends BankError {
  constructor(message: string, details: unknown[] = []) {
    super(409, 'conflict', message, details)
  }
}

export class Unprocessable extends BankError {
  constructor(message: string, details: FieldIssue[] = []) {
    super(422, 'unprocessable', message, details)
  }
}

export class TooManyAttempts extends BankError {
  constructor(message: string) {
    super(429, 'too_many_attempts', message)
  }
}

export class Unavailable extends BankError {
  constructor(message: string) {
    super(503, 'unavailable', message)
  }
}

export function internalErrorBody(correlationId: string): ErrorBody {
  return {
    error: {
      code: 500,
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
