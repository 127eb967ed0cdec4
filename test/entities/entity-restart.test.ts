import assert from 'node:assert/strict'
import { test } from 'node:test'
import { onboardPartner, useTestBank } from '../support/harness.ts'
import { businessEntity, personalEntity } from '../support/fixtures.ts'
import { expectApiError } from '../support/assertions.ts'

// Entities, their addresses and the personal entity's user live in storage, not in the
// process: a restart on the same storage answers exactly as before.

const tb = useTestBank({ persistent: true })

test('entities - data survives a restart', async () => {
  const p = await onboardPartner(tb)
  const business = businessEntity()
  const personal = personalEntity()
  const b = await p.client.entities.create(business)
  tb.clock.advance(1_000)
  const q = await p.client.entities.create(personal)
  await p.client.entities.updateAddress({ entity_id: b.id, address_line_1: '1 Persist Street',
    city: 'Polokwane', country: 'ZAF' })

  const listBefore = await p.client.entities.list()
  const businessBefore = await p.client.entities.info({ entity_id: b.id })
  const personalBefore = await p.client.entities.info({ entity_id: q.id })
  const usersBefore = await p.client.users.list()
  assert.equal(listBefore.entities.length, 3)

  await tb.restart()

  assert.deepEqual(await p.client.entities.list(), listBefore)
  assert.deepEqual(await p.client.entities.info({ entity_id: b.id }), businessBefore)
  assert.deepEqual(await p.client.entities.info({ entity_id: q.id }), personalBefore)
  assert.deepEqual(await p.client.users.list(), usersBefore)
  assert.equal((await p.client.entities.getAddress({ entity_id: b.id })).address?.city, 'Polokwane')

  // The uniqueness rules are stored too: the same numbers are still duplicates.
  for (const request of [business, personal]) {
    await expectApiError(p.client.entities.create(request), 409)
  }
  // And new entities can still be created after the restart.
  const fresh = await p.client.entities.create(businessEntity())
  assert.equal((await p.client.entities.list()).entities.at(-1)?.id, fresh.id)
})
