import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clientFor, onboardPartner, useTestBank } from '../support/harness.ts'
import { personalEntity, userRequest } from '../support/fixtures.ts'
import { expectApiError } from '../support/assertions.ts'

// Everything a partner or operator was told is stored is still there after the service
// restarts on the same storage: nothing the interface serves lives only in memory, so that
// instances can come and go. Credentials keep their state too: a revoked one stays revoked.

const tb = useTestBank({ persistent: true })

test('restart - data, credentials and their states survive a restart of the service', async () => {
  const partner = await onboardPartner(tb, { approve: true })
  const personal = await partner.client.entities.create(personalEntity())
  await partner.client.entities.updateAddress({ entity_id: partner.rootEntityId,
    address_line_1: '7 Long Street', city: 'Cape Town', country: 'ZAF' })
  const { userId } = await partner.client.users.create(userRequest(partner.rootEntityId,
    { verified: true }))
  const opened = await partner.client.accounts.create({ entity_id: partner.rootEntityId })
  const readOnly = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'] })
  const revoked = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'] })
  await tb.operator.credentials.revoke({ credential_id: revoked.id })

  const snapshot = async () => ({
    entities: await partner.client.entities.list(),
    root: await partner.client.entities.info({ entity_id: partner.rootEntityId }),
    rootAddress: await partner.client.entities.getAddress({ entity_id: partner.rootEntityId }),
    personal: await partner.client.entities.info({ entity_id: personal.id }),
    user: await partner.client.users.get({ user_id: userId }),
    users: await partner.client.users.list(),
    accounts: await partner.client.accounts.getByEntity({ entity_id: partner.rootEntityId }),
    details: await partner.client.accounts.getDetails({ account_id: opened.account_id }),
    partners: await tb.operator.partners.list(),
    credentials: await tb.operator.credentials.list({ partner_id: partner.partnerId }),
    review: await tb.operator.entities.list({ partner_id: partner.partnerId }),
  })
  const before = await snapshot()
  assert.equal(before.rootAddress.address?.address_line_1, '7 Long Street')
  assert.equal(before.user.user.kyc_status, 'approved')
  assert.equal(before.accounts.accounts.length, 2)
  const instanceBefore = tb.bank.micro.id

  await tb.restart()

  assert.notEqual(tb.bank.micro.id, instanceBefore, 'a new instance answers')
  assert.deepEqual(await snapshot(), before)
  // Issued credentials still authenticate (only their hashes were stored), with their permissions.
  const reader = clientFor(tb, partner.partnerId, readOnly.token)
  assert.equal((await reader.entities.list()).entities.length, before.entities.entities.length)
  await expectApiError(reader.entities.create(personalEntity()), 403)
  const revokedClient = clientFor(tb, partner.partnerId, revoked.token)
  await expectApiError(revokedClient.entities.list(), 401)
  // Writing continues where it left off: account numbers and ids are not reissued.
  const next = await partner.client.accounts.create({ entity_id: partner.rootEntityId })
  assert.ok(!before.accounts.accounts.some((a) => a.account_number === next.account_number
    || a.account_id === next.account_id))
})

test('restart - an expired credential stays expired across a restart', async () => {
  const partner = await onboardPartner(tb)
  const expiring = await tb.operator.credentials.create({ partner_id: partner.partnerId,
    permissions: ['read'], expires_in_seconds: 60 })
  const client = clientFor(tb, partner.partnerId, expiring.token)
  assert.ok((await client.entities.list()).entities.length > 0)
  tb.clock.advance(61_000)
  await tb.restart()
  await expectApiError(client.entities.list(), 401)
  assert.ok((await partner.client.entities.list()).entities.length > 0)
})
