import assert from 'node:assert/strict'
import { test } from 'node:test'
import { luhnCheckDigit } from '../../src/contract/fields.ts'
import { onboardPartner, useTestBank } from '../support/harness.ts'
import { businessEntity } from '../support/fixtures.ts'
import { expectApiError } from '../support/assertions.ts'

// Account numbers come from a configured pool (BANK_ACCOUNT_NUMBER_FIRST.._LAST) with a
// Luhn check digit appended. A pool of three numbers, used up to and just over its limit.

const first = 20_000_001
const last = 20_000_003

const tb = useTestBank(
  { env: { BANK_ACCOUNT_NUMBER_FIRST: String(first), BANK_ACCOUNT_NUMBER_LAST: String(last) } })

function numbered(value: number): string {
  return String(value) + luhnCheckDigit(String(value))
}

test('accounts - numbers are drawn in order from the configured pool', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { id } = await p.client.entities.create(businessEntity())
  await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  const third = await p.client.accounts.create({ entity_id: id })

  const pool = (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts
  const mine = (await p.client.accounts.getByEntity({ entity_id: id })).accounts
  assert.deepEqual(
    [...pool, ...mine].map((a) => a.account_number),
    [numbered(first), numbered(first + 1), numbered(last)],
  )
  assert.equal(third.account_number, numbered(last))

  // The pool is used up: one more is refused, as unavailable, and nothing is stored.
  const exhausted = await expectApiError(p.client.accounts.create({ entity_id: id }), 503)
  assert.equal(exhausted.type, 'unavailable')
  assert.equal((await p.client.accounts.getByEntity({ entity_id: id })).accounts.length, 2)

  // An approval that would open a first account cannot either, and leaves the entity pending.
  const { id: late } = await p.client.entities.create(businessEntity())
  await expectApiError(tb.operator.entities.review({ entity_id: late, decision: 'approve' }), 503)
  assert.equal((await p.client.entities.info({ entity_id: late })).approved, false)
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: late })).accounts, [])
})
