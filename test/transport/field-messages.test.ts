import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'

// A 400's details say what is wrong with each field: "is required" when the field was not
// sent (or sent as null, which means absent), the schema's own message when it was sent
// with the wrong type or value.

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

test('field messages - null on a required field means absent: it is required', async () => {
  const details = await detailsOf({ ...businessEntity(), trading_name: null })
  assert.deepEqual(details, [{ field: 'trading_name', message: 'is required' }])
})

test('field messages - null on an optional field is taken as absent', async () => {
  const body = { ...businessEntity(), tax_number: null, first_name: null,
    id_issue_expiry_date: null }
  const { id } = await partner.client.entities.create(body as never)
  assert.match(id, /^[0-9a-f-]{36}$/)
})

test('field messages - null on a field the operation does not know is still an unknown field', async () => {
  const details = await detailsOf({ ...businessEntity(), nickname: null })
  assert.deepEqual(details, [{ field: 'nickname', message: 'is not a known field' }])
})
