import assert from 'node:assert/strict'
import { BankApiError } from '../../src/client/index.ts'
import type { BankClient } from '../../src/client/index.ts'

// Small assertions the user tests share. The shared harness lives in test/support.

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const zeroTimestamp = '0001-01-01T00:00:00Z'

const typeOfCode: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
}

/** RFC 3339 as the service writes it: whole seconds without a fraction. */
export function iso(at: Date): string {
  return at.toISOString().replace('.000Z', 'Z')
}

/**
 * Awaits a call that must fail with `code`; for a 400 naming `field`, checks that the
 * details name it. Returns the error for further checks.
 */
export async function rejects(call: Promise<unknown>, code: number, field?: string): Promise<BankApiError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if (!('error' in outcome)) assert.fail(`expected a ${code} refusal, got success: ${JSON.stringify(outcome.value)}`)
  const error = outcome.error
  assert.ok(error instanceof BankApiError, `expected a BankApiError, got ${String(error)}`)
  assert.equal(error.code, code, `expected ${code}, got ${error.code} ${error.type}: ${error.message}`)
  if (typeOfCode[code]) assert.equal(error.type, typeOfCode[code])
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

type CreateBody = Parameters<BankClient['users']['create']>[0]
type UpdateBody = Parameters<BankClient['users']['update']>[0]

/** Sends a body the SDK's types would refuse, to see the service refuse it too. */
export function asCreate(body: Record<string, unknown>): CreateBody {
  return body as unknown as CreateBody
}

export function asUpdate(body: Record<string, unknown>): UpdateBody {
  return body as unknown as UpdateBody
}

/** A copy of `body` without `key`. */
export function without(body: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...body }
  delete copy[key]
  return copy
}
