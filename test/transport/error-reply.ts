import assert from 'node:assert/strict'
import type { RawReply } from '../support/harness.ts'

// The error reply of docs/guides/wire-conventions.md, checked exactly: the two micro headers and a
// body that is `{"error": {code, type, message, details}}` and nothing else.

export function assertErrorReply(reply: RawReply, code: number, type: string | undefined,
    context: string): void {
  const seen = `${context}: got ${reply.code} ${JSON.stringify(reply.body)}`
  assert.equal(reply.code, code, seen)
  assert.notEqual(reply.code, 500, seen)
  assert.deepEqual(Object.keys(reply.body ?? {}), ['error'], seen)
  const error = reply.body.error
  assert.deepEqual(Object.keys(error).sort(), ['code', 'details', 'message', 'type'], seen)
  assert.ok(Number.isInteger(error.code), seen)
  assert.equal(error.code, code, seen)
  assert.equal(typeof error.type, 'string', seen)
  assert.match(error.type, /^[a-z]+(_[a-z]+)*$/, seen)
  if (type !== undefined) assert.equal(error.type, type, seen)
  assert.equal(typeof error.message, 'string', seen)
  assert.ok(error.message.length > 0, seen)
  assert.ok(Array.isArray(error.details), seen)

  assert.equal(reply.headers['Nats-Service-Error-Code'], String(code), seen)
  const header = reply.headers['Nats-Service-Error']
  assert.equal(typeof header, 'string', seen)
  assert.ok(header!.length > 0, seen)
  assert.doesNotMatch(header!, /[\r\n]/, seen)
  if (!/[\r\n]/.test(error.message) && error.message.length <= 300) assert.equal(header, error.message, seen)
}

/** A reply that is not an error: no error headers, and a JSON object body. */
export function assertSuccessReply(reply: RawReply, context: string): void {
  const seen = `${context}: got ${reply.code} ${JSON.stringify(reply.body)}`
  assert.equal(reply.code, 200, seen)
  assert.equal(reply.headers['Nats-Service-Error-Code'], undefined, seen)
  assert.equal(reply.headers['Nats-Service-Error'], undefined, seen)
  assert.equal(typeof reply.body, 'object', seen)
  assert.equal(reply.body.error, undefined, seen)
}

/** The fields a field-level 400 names in `details`. */
export function detailFields(reply: RawReply): string[] {
  return (reply.body?.error?.details ?? []).map((d: { field?: unknown }) => String(d.field))
}
