import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { luhnValid } from '../../src/contract/fields.ts'
import { formatTimestamp } from '../../src/contract/format.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { businessEntity, numberedPersonalEntity } from '../support/fixtures.ts'
import { expectApiError, type FieldIssue, uuidPattern } from '../support/assertions.ts'

// svc.account.<partner_id>.create / get_by_entity / get_details: an entity's first account
// opens on KYB/KYC approval; creating an account for an unapproved entity is 400;
// get_by_entity is oldest first.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb)
})

async function approvedBusiness(overrides: Record<string, unknown> = {},
    partner = p): Promise<string> {
  const { id } = await partner.client.entities.create(businessEntity(overrides))
  await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  return id
}

test('accounts - create for an unapproved entity is 400 and creates nothing', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const error = await expectApiError(p.client.accounts.create({ entity_id: id }))
  assert.equal(error.code, 400)
  assert.equal(error.type, 'invalid_request')
  assert.deepEqual((error.details as FieldIssue[]).map((d) => d.field), ['entity_id'])
  assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: id }),
    { entity_id: id, accounts: [] })
})

test('accounts - create for an unapproved personal entity is 400 and creates nothing', async () => {
  const { id } = await p.client.entities.create(numberedPersonalEntity())
  const error = await expectApiError(p.client.accounts.create({ entity_id: id }))
  assert.equal(error.code, 400)
  assert.deepEqual(await p.client.accounts.getByEntity({ entity_id: id }),
    { entity_id: id, accounts: [] })
})

test('accounts - create for a rejected entity is 400 and creates nothing', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'documents unreadable' })
  assert.equal((await p.client.entities.info({ entity_id: id })).approved, false)
  const error = await expectApiError(p.client.accounts.create({ entity_id: id }))
  assert.equal(error.code, 400)
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: id })).accounts, [])
})

test('accounts - an entity with no accounts lists an empty array', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  const reply = await p.client.accounts.getByEntity({ entity_id: id })
  assert.deepEqual(reply, { entity_id: id, accounts: [] })
})

test('accounts - approving a business opens its first account', async () => {
  tb.clock.advance(60_000)
  const at = formatTimestamp(tb.clock.now())
  const { id } = await p.client.entities.create(businessEntity())
  const review = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(review.approved, true)
  assert.ok(review.account)
  assert.equal((await p.client.entities.info({ entity_id: id })).approved, true)

  const { entity_id, accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.equal(entity_id, id)
  assert.equal(accounts.length, 1)
  const first = accounts[0]!
  assert.deepEqual(Object.keys(first).sort(), ['account_id', 'account_number', 'account_type',
    'created_at', 'metadata'])
  assert.match(first.account_id, uuidPattern)
  assert.match(first.account_number, /^\d+$/)
  assert.equal(first.created_at, at)
  assert.equal(first.metadata.kind, 'standard')
  assert.equal(first.account_id, review.account.account_id)
  assert.equal(first.account_number, review.account.account_number)
})

test('accounts - approving a personal entity opens its first account and approves its user', async () => {
  const { id } = await p.client.entities.create(numberedPersonalEntity())
  await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.equal(accounts.length, 1)
  assert.equal(accounts[0]!.metadata.kind, 'standard')

  const [user] = (await p.client.users.list({ entity_id: id })).users
  assert.equal(user?.kyc_status, 'approved')
  assert.equal(user?.verified, true)

  const further = await p.client.accounts.create({ entity_id: id })
  assert.equal(further.entity_id, id)
  assert.equal((await p.client.accounts.getByEntity({ entity_id: id })).accounts.length, 2)
})

test('accounts - approving twice opens only one first account', async () => {
  const id = await approvedBusiness()
  const again = await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal(again.account, null)
  assert.equal((await p.client.accounts.getByEntity({ entity_id: id })).accounts.length, 1)
})

test('accounts - approving after a rejection opens the first account', async () => {
  const { id } = await p.client.entities.create(businessEntity())
  await tb.operator.entities.review({ entity_id: id, decision: 'reject',
    reason: 'missing proof of address' })
  assert.deepEqual((await p.client.accounts.getByEntity({ entity_id: id })).accounts, [])
  await tb.operator.entities.review({ entity_id: id, decision: 'approve' })
  assert.equal((await p.client.accounts.getByEntity({ entity_id: id })).accounts.length, 1)
})

test('accounts - create returns every field of the new account', async () => {
  const id = await approvedBusiness()
  tb.clock.advance(5_000)
  const at = formatTimestamp(tb.clock.now())
  const created = await p.client.accounts.create({ entity_id: id })
  assert.deepEqual(Object.keys(created).sort(), ['account_id', 'account_number', 'account_type',
    'country', 'created_at', 'entity_id'])
  assert.match(created.account_id, uuidPattern)
  assert.equal(created.entity_id, id)
  assert.match(created.account_number, /^\d+$/)
  assert.equal(created.country, 'ZAF')
  assert.equal(created.created_at, at)

  const listed = (await p.client.accounts.getByEntity({ entity_id: id })).accounts.at(-1)
  assert.deepEqual(listed, {
    account_id: created.account_id,
    account_number: created.account_number,
    created_at: created.created_at,
    account_type: 'current',
    metadata: listed?.metadata,
  })
  assert.equal(listed?.metadata.kind, 'standard')
})

test("accounts - country comes from the entity's registered country", async () => {
  const namibian = await approvedBusiness({ country: 'NAM' })
  assert.equal((await p.client.accounts.create({ entity_id: namibian })).country, 'NAM')

  const { id: motswana } = await p.client.entities.create(
    numberedPersonalEntity({ country: 'BWA' }))
  await tb.operator.entities.review({ entity_id: motswana, decision: 'approve' })
  assert.equal((await p.client.accounts.create({ entity_id: motswana })).country, 'BWA')
})

test('accounts - get_details has every field, zero balances and the metadata object', async () => {
  const id = await approvedBusiness()
  const created = await p.client.accounts.create({ entity_id: id })
  const details = await p.client.accounts.getDetails({ account_id: created.account_id })
  // The SDK puts the Account-Status reply header back as `status`: the body has no such key.
  assert.deepEqual(Object.keys(details).sort(), ['account_id', 'account_number', 'account_type',
    'available_balance', 'balance', 'metadata', 'status'])
  assert.equal(details.status, 'active')
  const raw = await rawRequest(tb, `svc.account.${p.partnerId}.get_details`,
    JSON.stringify({ account_id: created.account_id }), { token: p.token })
  assert.equal(raw.headers['Account-Status'], 'active')
  assert.equal('status' in raw.body, false, 'the body the reference SDK reads has no status')
  assert.equal(details.account_id, created.account_id)
  assert.equal(details.account_number, created.account_number)
  assert.equal(details.balance, '0')
  assert.equal(details.available_balance, '0')
  assert.equal(typeof details.metadata, 'object')
  assert.ok(details.metadata !== null && !Array.isArray(details.metadata))
  assert.deepEqual(details.metadata, { currency: 'ZAR', kind: 'standard' })
  assert.equal(details.account_type, 'current')

  const listed = (await p.client.accounts.getByEntity({ entity_id: id })).accounts.find(
    (a) => a.account_id === created.account_id)
  assert.deepEqual(listed?.metadata, details.metadata)
})

test("accounts - approving the partner's root entity opens the pool account", async () => {
  const fresh = await onboardPartner(tb)
  assert.deepEqual(
    (await fresh.client.accounts.getByEntity({ entity_id: fresh.rootEntityId })).accounts, [])
  assert.equal((await expectApiError(
    fresh.client.accounts.create({ entity_id: fresh.rootEntityId }))).code, 400)

  const review = await tb.operator.entities.review({ entity_id: fresh.rootEntityId,
    decision: 'approve' })
  assert.equal(review.account?.kind, 'pool')
  const { accounts } = await fresh.client.accounts.getByEntity({ entity_id: fresh.rootEntityId })
  assert.equal(accounts.length, 1)
  assert.equal(accounts[0]!.metadata.kind, 'pool')
  const pool = await fresh.client.accounts.getDetails({ account_id: accounts[0]!.account_id })
  assert.equal(pool.metadata.kind, 'pool')
  assert.equal(pool.balance, '0')

  // Further accounts under the root entity are ordinary accounts.
  const further = await fresh.client.accounts.create({ entity_id: fresh.rootEntityId })
  assert.equal(further.country, 'ZAF')
  const after =
    (await fresh.client.accounts.getByEntity({ entity_id: fresh.rootEntityId })).accounts
  assert.deepEqual(after.map((a) => a.metadata.kind), ['pool', 'standard'])
  assert.equal(after[1]!.account_id, further.account_id)
})

test('accounts - onboardPartner with approve gives the partner its pool account', async () => {
  const approved = await onboardPartner(tb, { approve: true })
  const { accounts } = await approved.client.accounts.getByEntity(
    { entity_id: approved.rootEntityId })
  assert.equal(accounts.length, 1)
  assert.equal(accounts[0]!.metadata.kind, 'pool')
})

test('accounts - get_by_entity is oldest first when created at the same instant', async () => {
  const id = await approvedBusiness()
  // The test clock stands still: every account below has the same created_at.
  const created = []
  for (let i = 0; i < 5; i++) created.push(await p.client.accounts.create({ entity_id: id }))
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.equal(accounts.length, 6)
  assert.deepEqual(
    accounts.slice(1).map((a) => a.account_id),
    created.map((c) => c.account_id),
  )
  assert.equal(new Set(accounts.slice(1).map((a) => a.created_at)).size, 1)
})

test('accounts - get_by_entity is sorted by created_at ascending as time moves', async () => {
  const id = await approvedBusiness()
  const created = []
  for (let i = 0; i < 4; i++) {
    tb.clock.advance(1_500)
    created.push(await p.client.accounts.create({ entity_id: id }))
  }
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.deepEqual(
    accounts.slice(1).map((a) => a.account_id),
    created.map((c) => c.account_id),
  )
  const times = accounts.map((a) => Date.parse(a.created_at))
  for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! < times[i]!,
    `created_at ${accounts[i]!.created_at} after ${accounts[i - 1]!.created_at}`)
})

test("accounts - get_by_entity follows created_at even when an instance's clock lags", async () => {
  // Many instances share the load (one queue group), and their clocks are never exactly
  // equal: an account opened later may carry an earlier created_at. The list is still
  // sorted by created_at, as get_by_entity promises.
  const id = await approvedBusiness()
  const now = tb.clock.now()
  tb.clock.advance(10_000)
  const ahead = await p.client.accounts.create({ entity_id: id })
  tb.clock.set(new Date(now.getTime() + 5_000))
  const lagging = await p.client.accounts.create({ entity_id: id })
  tb.clock.set(new Date(now.getTime() + 20_000))

  const { accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.deepEqual(
    accounts.map((a) => a.account_id).slice(1),
    [lagging.account_id, ahead.account_id],
  )
  const times = accounts.map((a) => a.created_at)
  assert.deepEqual([...times].sort(), times)
})

test('accounts - account numbers are digits, unique and carry a check digit', async () => {
  const other = await onboardPartner(tb, { approve: true })
  const numbers: string[] = []
  for (const partner of [p, other]) {
    const first = await approvedBusiness({}, partner)
    const second = await approvedBusiness({}, partner)
    for (const id of [first, second]) {
      await partner.client.accounts.create({ entity_id: id })
      await partner.client.accounts.create({ entity_id: id })
      numbers.push(...(await partner.client.accounts.getByEntity({ entity_id: id })).accounts.map(
        (a) => a.account_number))
    }
    numbers.push(...(await partner.client.accounts.getByEntity(
      { entity_id: partner.rootEntityId })).accounts.map((a) => a.account_number))
  }
  assert.ok(numbers.length >= 12)
  assert.equal(new Set(numbers).size, numbers.length)
  for (const number of numbers) {
    assert.match(number, /^\d{9}$/)
    assert.ok(luhnValid(number), `${number} should pass the Luhn check`)
  }
})

test('accounts - concurrent creates give distinct accounts and numbers', async () => {
  const id = await approvedBusiness()
  const created =
    await Promise.all(Array.from({ length: 8 }, () => p.client.accounts.create({ entity_id: id })))
  assert.equal(new Set(created.map((c) => c.account_id)).size, 8)
  assert.equal(new Set(created.map((c) => c.account_number)).size, 8)
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: id })
  assert.equal(accounts.length, 9)
  assert.deepEqual(new Set(accounts.slice(1).map((a) => a.account_id)),
    new Set(created.map((c) => c.account_id)))
})

test('accounts - there is no limit of a handful of accounts per entity', async () => {
  const id = await approvedBusiness()
  for (let i = 0; i < 25; i++) await p.client.accounts.create({ entity_id: id })
  assert.equal((await p.client.accounts.getByEntity({ entity_id: id })).accounts.length, 26)
})
