import assert from 'node:assert/strict'
import { test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'

const tb = useTestBank()

test('operators - the last live operator credential cannot be revoked', async () => {
  const { credentials } = await tb.bank.services.credentials.list(null).then(
    (list) => ({ credentials: list }))
  assert.equal(credentials.length, 1)
  await expectApiError(tb.operator.credentials.revoke({ credential_id: credentials[0]!.id }), 409)
  // The operator can still work.
  const partners = await tb.operator.partners.list()
  assert.ok(Array.isArray(partners.partners))
})

test('operators - with a second operator credential, the first may be revoked', async () => {
  const second = await tb.bank.services.credentials.issue(tb.bank.database.db,
    { partnerId: null, permissions: [], label: 'second' })
  const [first] = await tb.bank.services.credentials.list(null)
  const revoked = await tb.operator.credentials.revoke({ credential_id: first!.id })
  assert.ok(revoked.revoked_at)
  await expectApiError(tb.operator.partners.list(), 401)
  assert.match(second.token, /^opk_/)
})
