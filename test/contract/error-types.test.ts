import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  BankApiError,
  errorTypes,
  type BankApiErrorType,
  type ErrorDetail,
  type ErrorType,
} from '../../src/client/index.ts'
import { codesOf } from '../../src/contract/error-types.ts'
import { BankError, InvalidState } from '../../src/errors.ts'

// The error types a partner branches on (RULINGS.md, "Partner integration"; issue 44): each
// has its stable name and the code the interface and rulings give it, and the SDK's
// BankApiError narrows by them. The checks marked @ts-expect-error are compile-time ones:
// `tsc` (npm test's type check) fails should the line compile, so a misspelt type, a detail
// key that does not exist or a detail of the wrong shape must stay a type error.

/** What a partner's code does with a refusal: it branches on the type, never the message. */
function next(error: BankApiError): string {
  if (error.type === 'insufficient_funds') return `top up: ${error.details[0]?.field}`
  if (error.type === 'duplicate') return `taken before as ${error.details[0]?.tx_id}`
  if (error.type === 'idempotency_key_reused') {
    return `new key: ${error.details.map((d) => d.field).join(', ')}`
  }
  // @ts-expect-error: a misspelt type is not one of the union's, so the comparison fails
  if (error.type === 'insuficient_funds') return 'never'
  // @ts-expect-error: the old name of otp_invalid is no type any more
  if (error.type === 'invalid_otp') return 'never'
  // @ts-expect-error: a detail has no key that the table does not give it
  if (error.details[0]?.txid) return 'never'
  return error.type
}

// @ts-expect-error: a detail's field is a string
const badDetail: ErrorDetail = { field: 7, message: 'x' }
void badDetail
// @ts-expect-error: BankApiError takes only a type of the union
void new BankApiError(400, 'insufficient', 'x')

/** Every type of the SDK's union, spelt out: adding or renaming one must touch this list. */
const sdkTypes: Record<BankApiErrorType, true> = {
  invalid_request: true, invalid_json: true, payload_too_large: true, insufficient_funds: true,
  limit_exceeded: true, otp_invalid: true, otp_expired: true, unauthorized: true,
  forbidden: true, not_found: true, duplicate: true, idempotency_key_reused: true,
  conflict: true, invalid_state: true, unprocessable: true, account_not_active: true,
  account_not_closable: true, screening_review: true, too_many_attempts: true,
  rate_limited: true,
  internal_error: true, unavailable: true, timeout: true, error: true,
}

test('error types - the refusals a partner can act on, each with its code', () => {
  const required: Record<string, number> = {
    insufficient_funds: 400, limit_exceeded: 400, otp_invalid: 400, otp_expired: 400,
    not_found: 404, duplicate: 409, idempotency_key_reused: 409, invalid_state: 422,
    account_not_active: 422, screening_review: 422, too_many_attempts: 429, rate_limited: 429,
  }
  for (const [type, code] of Object.entries(required)) {
    assert.equal(errorTypes[type as ErrorType]?.code, code, type)
  }
  for (const type of Object.keys(errorTypes)) assert.match(type, /^[a-z]+(_[a-z]+)*$/)
  assert.deepEqual(Object.keys(sdkTypes).sort(),
    [...Object.keys(errorTypes), 'timeout', 'error'].sort())
})

test('error types - a type answers with its own code, or one its row names; never another', () => {
  assert.deepEqual(codesOf('invalid_state'), [422, 400, 409])
  assert.deepEqual(codesOf('insufficient_funds'), [400, 422])
  assert.deepEqual(codesOf('duplicate'), [409])
  assert.equal(new InvalidState('the batch is processing', [], 400).code, 400)
  assert.equal(new InvalidState('the hold was released').code, 422)
  assert.throws(() => new BankError('duplicate', 'x', [], 400), /never answered with 400/)
})

test('error types - BankApiError narrows by its type and carries typed details', () => {
  const duplicate = new BankApiError(409, 'duplicate', 'duplicate transaction',
    [{ field: 'clientTxId', message: 'already used', tx_id: 'tx-1' }])
  assert.equal(next(duplicate), 'taken before as tx-1')
  assert.equal(duplicate.originalTxId, 'tx-1')
  const reused = new BankApiError(409, 'idempotency_key_reused', 'reused',
    [{ field: 'amount', message: 'differs', tx_id: 'tx-1' }])
  assert.equal(next(reused), 'new key: amount')
  assert.equal(reused.originalTxId, undefined)
  assert.equal(next(new BankApiError(400, 'insufficient_funds', 'short',
    [{ field: 'amount', message: 'insufficient funds' }])), 'top up: amount')
  assert.equal(next(new BankApiError(504, 'timeout', 'no answer')), 'timeout')
})
