import assert from 'node:assert/strict'
import { test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'

const tb = useTestBank()

test('smoke - onboard, create, approve, account', async () => {
  const p = await onboardPartner(tb, { approve: true })
  const { id } = await p.client.entities.create(businessEntity())
  const info = await p.client.entities.info({ entity_id: id })
  assert.equal(info.approved, false)
  const review = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.ok(review.account)
  const personal = await p.client.entities.create(personalEntity())
  const list = await p.client.entities.list()
  assert.equal(list.entities.length, 3)
  const users = await p.client.users.list({ entity_id: personal.id })
  assert.equal(users.users.length, 1)
  const accounts = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  assert.equal(accounts.accounts.length, 1)
  const bad = await rawRequest(tb, `svc.entity.${p.partnerId}.create`, '{nope', { token: p.token })
  assert.equal(bad.code, 400)
  console.log(JSON.stringify(bad))
})
