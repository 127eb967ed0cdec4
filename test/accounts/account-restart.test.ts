import assert from 'node:assert/strict'
import { test } from 'node:test'
import { onboardPartner, useTestBank } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'

// Accounts live in storage: after a restart on the same storage they read back exactly,
// and new account numbers continue from the pool without reusing any.

const tb = useTestBank({ persistent: true })

test('accounts - data survives a restart and numbers are not reused', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { id: business } = await p.client.entities.create(businessEntity())
  const { id: personal } = await p.client.entities.create(personalEntity())
  await tb.operator.entities.review({ entity_id: business, decision: 'approve' })
  await tb.operator.entities.review({ entity_id: personal, decision: 'approve' })
  tb.clock.advance(2_000)
  const extra = await p.client.accounts.create({ entity_id: business })
  const { id: pending } = await p.client.entities.create(businessEntity())

  const entityIds = [p.rootEntityId, business, personal, pending]
  const byEntityBefore =
    await Promise.all(entityIds.map((id) => p.client.accounts.getByEntity({ entity_id: id })))
  const accountIds = byEntityBefore.flatMap((r) => r.accounts.map((a) => a.account_id))
  assert.equal(accountIds.length, 4)
  const detailsBefore =
    await Promise.all(accountIds.map((id) => p.client.accounts.getDetails({ account_id: id })))

  await tb.restart()

  const byEntityAfter =
    await Promise.all(entityIds.map((id) => p.client.accounts.getByEntity({ entity_id: id })))
  assert.deepEqual(byEntityAfter, byEntityBefore)
  assert.deepEqual(byEntityAfter[3], { entity_id: pending, accounts: [] })
  const detailsAfter =
    await Promise.all(accountIds.map((id) => p.client.accounts.getDetails({ account_id: id })))
  assert.deepEqual(detailsAfter, detailsBefore)
  assert.equal(byEntityAfter[1]!.accounts.at(-1)?.account_id, extra.account_id)

  // Approval state survived: the approved entity still gets accounts, the pending one not.
  const after = await p.client.accounts.create({ entity_id: business })
  const numbersBefore =
    new Set(byEntityBefore.flatMap((r) => r.accounts.map((a) => a.account_number)))
  assert.ok(!numbersBefore.has(after.account_number),
    `${after.account_number} was handed out before the restart`)
  await assert.rejects(p.client.accounts.create({ entity_id: pending }), { code: 400 })
  assert.deepEqual(
    (await p.client.accounts.getByEntity({ entity_id: business })).accounts.map(
      (a) => a.account_id),
    [...byEntityBefore[1]!.accounts.map((a) => a.account_id), after.account_id],
  )
})
