import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'

// A 400's details say what is wrong with each field: "is required" only when the field
// was not sent, the schema's own message when it was sent with the wrong type or value.

const tb = useTestBank()
let partner: TestPartner
before(async () => {
  await tb.ready
  partner = await onboardPartner(tb)
})

async function detailsOf(body: Record<string, unknown>) {
  const error = await expectApiError(partner.client.entities.create(body as never), 400)
  return error.details as Array<{ field: string; message: string }>
}

test('field messages - a missing field is required', async () => {
  const { email: _omitted, ...body } = businessEntity()
  assert.deepEqual(await detailsOf(body), [{ field: 'email', message: 'is required' }])
})

test('field messages - a field of the wrong type is not called missing', async () => {
  const details = await detailsOf({ ...businessEntity(), email: 42 })
  assert.equal(details.length, 1)
  assert.equal(details[0]!.field, 'email')
  assert.notEqual(details[0]!.message, 'is required')
  assert.match(details[0]!.message, /string/)
})

test('field messages - null is a wrong value, not an absent field', async () => {
  const details = await detailsOf({ ...businessEntity(), trading_name: null })
  assert.equal(details[0]!.field, 'trading_name')
  assert.notEqual(details[0]!.message, 'is required')
})
