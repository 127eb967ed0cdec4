import assert from 'node:assert/strict'
import { BankApiError, errorTypes, type ErrorType } from '../../src/client/index.ts'
import type { TestBank } from './harness.ts'

// Assertions and expected values every test folder shares. Request bodies live in
// fixtures.ts, the running bank in harness.ts.

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The zero time the service writes for a timestamp that has not happened yet. */
export const zeroTimestamp = '0001-01-01T00:00:00Z'

/**
 * RFC 3339 as the service writes it: whole seconds without a fraction. `at` is a Date or epoch
 * milliseconds.
 */
export function iso(at: Date | number): string {
  return new Date(at).toISOString().replace('.000Z', 'Z')
}

/** One entry of a 400's `details`. */
export interface FieldIssue {
  field: string
  message: string
}

/**
 * Awaits a call that must be refused and returns its BankApiError. With `code`, checks the
 * error's code; with `field` too, checks that the details name that field.
 */
export async function expectApiError(call: Promise<unknown>, code?: number,
    field?: string): Promise<BankApiError> {
  const outcome = await call.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  )
  if (outcome.ok) {
    const expected = code === undefined ? 'the request to be refused' : `a ${code} refusal`
    assert.fail(`expected ${expected}, got success: ${JSON.stringify(outcome.value)}`)
  }
  const error = outcome.error
  assert.ok(error instanceof BankApiError, `expected a BankApiError, got ${String(error)}`)
  if (code !== undefined) assert.equal(error.code, code,
    `expected ${code}, got ${error.code} ${error.type}: ${error.message}`)
  if (field !== undefined) {
    const fields = (error.details as Array<{ field?: unknown }>).map((d) => d.field)
    assert.ok(fields.includes(field),
      `expected details to name ${field}; got ${JSON.stringify(error.details)}`)
  }
  return error
}

const typeOfCode: Record<number, ErrorType> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
}

/**
 * expectApiError with the whole error checked: its type (`expected` when it is a type, with
 * that type's code; else `type`, or the type that goes with the code `expected`), a message,
 * and for `field` a detail naming it with a message of its own. A type whose code the table
 * lets differ (`other_codes`) is given as the code and the type: `(call, 400, field,
 * 'invalid_state')`.
 */
export async function expectRefusal(call: Promise<unknown>, expected: number | ErrorType,
    field?: string, type?: ErrorType): Promise<BankApiError> {
  const code = typeof expected === 'number' ? expected : errorTypes[expected].code
  const wanted = typeof expected === 'number' ? type ?? typeOfCode[code] : expected
  const error = await expectApiError(call, code)
  if (wanted) assert.equal(error.type, wanted, `${error.type}: ${error.message}`)
  assert.ok(error.message.length > 0, 'an error carries a message')
  if (field !== undefined) {
    const details = error.details as Array<{ field?: unknown; message?: unknown }>
    const named = details.find((d) => d.field === field)
    assert.ok(named, `expected details to name ${field}; got ${JSON.stringify(details)}`)
    assert.equal(typeof named.message, 'string')
    assert.ok((named.message as string).length > 0)
  }
  return error
}

/** The error as the wire carries it, to compare two refusals. */
export function errorBody(error: BankApiError) {
  return { code: error.code, type: error.type, message: error.message, details: error.details }
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: BankApiError }

/** Settles a request to its reply or its BankApiError; anything else (a client fault) rethrows. */
export async function outcome<T>(request: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await request }
  } catch (error) {
    if (error instanceof BankApiError) return { ok: false, error }
    throw error
  }
}

type LedgerReport = Awaited<ReturnType<TestBank['operator']['ledger']['verify']>>

/**
 * `ops.ledger.verify` finds no problem and all postings together sum to zero; returns the report.
 */
export async function assertLedgerClean(tb: TestBank): Promise<LedgerReport> {
  const report = await tb.operator.ledger.verify()
  assert.deepEqual(report.problems, [])
  assert.equal(report.ok, true)
  assert.equal(report.postings_total, '0')
  return report
}
