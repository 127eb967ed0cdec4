import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { numberedPersonalEntity, registrationNumber } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, type TestBank } from '../support/harness.ts'
import { uuidPattern } from '../support/assertions.ts'
import type { RecordValues } from './jackson.ts'
import { ReferenceSdk, type Codec } from './reference-sdk.ts'

// The reference SDK's flows end to end, as its apps run them (CreateEntityApp,
// CreateBusinessEntityApp, TransferApp) and as its other methods are called, over real NATS
// against a real bank. Run once with our emulation of Jackson and once with real Jackson;
// every reply is read into the SDK's record by ReferenceSdk.call
// (docs/guides/moving-from-the-incumbent.md).

export interface FlowContext {
  tb: TestBank
  sdk: ReferenceSdk
  /** The partner's approved root entity (a business). */
  rootEntityId: string
  /** The root entity's first account, funded well beyond what the flows spend. */
  fundedAccountId: string
}

export const funded_amount = 10_000_000

/** What CreateEntityApp's test-data generator makes of a person, with the components it fills. */
export function personalEntityValues(): RecordValues {
  const person = numberedPersonalEntity()
  return {
    name: 'Thandi Nkosi',
    trading_name: 'Thandi Nkosi',
    tax_number: null,
    registration_number: null,
    entity_type: 'personal',
    purpose: 'personal',
    email: `sdk-${randomUUID().slice(0, 8)}@test.nexus.example`,
    country: 'ZAF',
    first_name: 'Thandi',
    last_name: 'Nkosi',
    phone_number: '+27821234567',
    gender: 'female',
    date_of_birth: '1975-01-01T00:00:00Z',
    id_number: person.id_number,
    id_type: 'National',
    id_issue_date: '1991-01-01T00:00:00Z',
    id_issue_expiry_date: '2031-01-01T00:00:00Z',
    city: 'Cape Town',
    residency: 'ZAF',
    title: 'Ms',
    permit_number: null,
    // The app sends an empty second line.
    address: { address_line_1: '12 Long Street', address_line_2: '', city: 'Cape Town',
      state: 'Western Cape', postcode: '8001' },
  }
}

/** What CreateBusinessEntityApp sends: every personal component null, no address. */
export function businessEntityValues(overrides: RecordValues = {}): RecordValues {
  return {
    name: 'Kudu Logistics (Pty) Ltd',
    trading_name: 'Kudu Logistics',
    tax_number: null,
    registration_number: registrationNumber(),
    entity_type: 'business',
    purpose: null,
    email: `sdk-biz-${randomUUID().slice(0, 8)}@test.nexus.example`,
    country: 'ZAF',
    ...overrides,
  }
}

/** A CreateUserRequest as UserService sends it: id_issue_expiry_date null (a National id). */
export function userValues(entityId: string): RecordValues {
  return {
    first_name: 'Sipho',
    last_name: 'Dlamini',
    email: 'sipho@acme.example',
    entity_id: entityId,
    gender: 'male',
    date_of_birth: '1975-01-01T00:00:00Z',
    country: 'ZAF',
    city: 'Johannesburg',
    residency: 'ZAF',
    id_number: numberedPersonalEntity().id_number,
    id_type: 'National',
    id_issue_date: '1991-01-01T00:00:00Z',
    id_issue_expiry_date: null,
    phone_number: '+27831234567',
    title: 'Mr',
    verified: false,
    permit_number: 'NA',
  }
}

/** TransferApp's request, with the payment advice fields named and no saved beneficiary. */
export function transferValues(accountId: string, overrides: RecordValues = {}): RecordValues {
  return {
    account_id: accountId,
    clientTxId: randomUUID(),
    amount: 1000,
    ref: 'SDK Test Payment',
    own_ref: `sdk-test-${randomUUID().slice(0, 8)}`,
    account_number: '1234567890',
    branch_code: '250655',
    name: 'Test Recipient',
    pay_and_clear: true,
    notification_email: 'recipient@example.com',
    notification_name: 'Test Recipient',
    beneficiary_id: null,
    beneficiary_version: 0,
    ...overrides,
  }
}

/** The stored address, read on the bank's own subject (the SDK has no method for it). */
async function storedAddress(c: FlowContext, entityId: string): Promise<Record<string,
    unknown> | null> {
  const reply = await rawRequest(
    c.tb,
    `svc.entity.${c.sdk.partner.partnerId}.get_address`,
    JSON.stringify({ entity_id: entityId }),
    { token: c.sdk.partner.token },
    c.sdk.partner.nc,
  )
  assert.equal(reply.code, 200, `get_address: ${JSON.stringify(reply.body)}`)
  assert.equal(reply.body.entity_id, entityId)
  return reply.body.address
}

/** `actual` has every key of `expected` with its value (other keys may be there too). */
function assertHolds(actual: Record<string, unknown> | null, expected: Record<string, unknown>,
    message: string): void {
  assert.ok(actual, message)
  assert.deepEqual(Object.fromEntries(Object.keys(expected).map((key) => [key, actual[key]])),
    expected, message)
}

/** A test's title, with the label of the file that runs the flows. */
type TitleOf = (behaviour: string) => string

/** Registers the flows; `context` is called inside each test, after the file's `before`. */
export function referenceSdkFlows(label: string, context: () => FlowContext): void {
  const name = (behaviour: string) => `reference SDK (${label}) - ${behaviour}`
  personalEntityFlows(name, context)
  businessEntityFlows(name, context)
  userAndAccountFlows(name, context)
  transferFlows(name, context)
  internalAndListFlows(name, context)
}

/** CreateEntityApp's flows: personal entities, and a business entity as written. */
function personalEntityFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('CreateEntityApp: a personal entity as EntityService writes it (nulls left out) comes with its user'), async () => {
    const c = context()
    const values = personalEntityValues()
    const created = await c.sdk.call('entityCreate', values)
    assert.match(created.id, uuidPattern)
    assert.equal(created.user_ready, true)
    assert.match(created.user_id, uuidPattern)

    const { users } = await c.sdk.call('userList', { entity_id: created.id })
    assert.deepEqual(users.map((u: { id: string }) => u.id), [created.user_id])

    const info = await c.sdk.call('entityInfo', { entity_id: created.id })
    assert.equal(info.id, created.id)
    assert.equal(info.entity_type, 'personal')
    assert.equal(info.id_number, values.id_number)
    assertHolds(await storedAddress(c, created.id), values.address as Record<string, unknown>,
      'the address given on create is stored')
  })

  test(name('a personal entity written with every component (a default ObjectMapper: nulls as null) is created too'), async () => {
    const c = context()
    const text = await c.sdk.write('entityCreate', personalEntityValues(), 'always')
    assert.match(text, /"tax_number":null/)
    const created = await c.sdk.accept('entityCreate', await c.sdk.send('entityCreate', text))
    assert.equal(created.user_ready, true)
    assert.match(created.user_id, uuidPattern)
  })

  test(name('CreateBusinessEntityApp: a business entity, nulls left out and nulls written, reads as CreateEntityResponse'), async () => {
    const c = context()
    for (const inclusion of ['sdk', 'always'] as const) {
      const values = businessEntityValues()
      const created = await c.sdk.call('entityCreate', values, inclusion)
      assert.match(created.id, uuidPattern, inclusion)
      assert.notEqual(created.user_ready, true,
        `${inclusion}: a business entity has no automatic user`)
      const info = await c.sdk.call('entityInfo', { entity_id: created.id })
      assert.equal(info.entity_type, 'business')
      assert.equal(info.name, values.name)
      assert.equal(info.trading_name, values.trading_name)
      assert.equal(info.approved, false)
    }
  })
}

/** Business entities with an address, update_address and list-entities. */
function businessEntityFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('a business entity with tax_number, purpose and address: the address is stored'), async () => {
    const c = context()
    const address = { address_line_1: '3 Bree Street', address_line_2: 'Floor 2', city: 'Cape Town',
      state: 'Western Cape', postcode: '8001' }
    for (const inclusion of ['sdk', 'always'] as const) {
      const created = await c.sdk.call(
        'entityCreate',
        businessEntityValues({ tax_number: '9012345678', purpose: 'supplier payments', address }),
        inclusion,
      )
      assertHolds(await storedAddress(c, created.id), address,
        `${inclusion}: the address given on create is stored`)
    }
  })

  test(name('update_address with null components, left out (EntityService) or written as null, replies {}'), async () => {
    const c = context()
    const { id } = await c.sdk.call('entityCreate', businessEntityValues())
    for (const [inclusion, line] of [['sdk', '99 Rivonia Road'],
        ['always', '7 Church Street']] as const) {
      const values = { entity_id: id, address_line_1: line, address_line_2: null, state: null,
        postcode: null, country: null, city: 'Johannesburg' }
      const text = await c.sdk.write('entityUpdateAddress', values, inclusion)
      assert.equal(text.includes('null'), inclusion === 'always')
      const reply = await c.sdk.accept('entityUpdateAddress',
        await c.sdk.send('entityUpdateAddress', text))
      assert.deepEqual(reply, {})
      const stored = await storedAddress(c, id)
      assert.equal(stored?.address_line_1, line)
      assert.equal(stored?.city, 'Johannesburg')
    }
  })

  test(name('list-entities: ListEntityRequest is {} and every item reads as Entity'), async () => {
    const c = context()
    assert.equal(await c.sdk.write('entityList', {}), '{}')
    const { entities } = await c.sdk.call('entityList', {})
    assert.ok(entities.some((e: { id: string }) => e.id === c.rootEntityId),
      'the root entity is listed')
  })
}

/** Users (created, updated, listed) and accounts. */
function userAndAccountFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('user create with id_issue_expiry_date null, then update with null components, then list'), async () => {
    const c = context()
    const created = await c.sdk.call('userCreate', userValues(c.rootEntityId))
    assert.deepEqual(Object.keys(created), ['userId'])
    assert.match(created.userId, uuidPattern)

    const update = {
      user_id: created.userId, first_name: 'Lindiwe', last_name: null, email: null,
        phone_number: null, gender: null,
      date_of_birth: null, birth_country: null, birth_city: null, residency: null, id_number: null,
        id_type: null,
      id_issue_date: null, id_issue_expiry_date: null, title: null, permit_number: null,
    }
    assert.deepEqual(await c.sdk.call('userUpdate', update), { userId: created.userId })

    const { users } = await c.sdk.call('userList', { entity_id: c.rootEntityId })
    const user = users.find((u: { id: string }) => u.id === created.userId)
    assert.ok(user, 'the new user is listed under its entity')
    assert.equal(user.first_name, 'Lindiwe')
    assert.equal(user.last_name, 'Dlamini', 'a null component leaves the field unchanged')
    assert.equal(user.verified, false)

    const all = await c.sdk.call('userList', { entity_id: null })
    assert.ok(all.users.some((u: { id: string }) => u.id === created.userId),
      'a null entity_id lists every user')
  })

  test(name('accounts: create, get_by_entity and get_details read as the SDK records, account_type current'), async () => {
    const c = context()
    const opened = await c.sdk.call('accountCreate', { entity_id: c.rootEntityId })
    assert.match(opened.account_id, uuidPattern)
    assert.equal(opened.entity_id, c.rootEntityId)
    assert.equal(opened.account_type, 'current')

    const byEntity = await c.sdk.call('accountsByEntity', { entity_id: c.rootEntityId })
    assert.equal(byEntity.entity_id, c.rootEntityId)
    const summary = byEntity.accounts.find((a: { account_id: string }) => a.account_id
      === opened.account_id)
    assert.ok(summary, 'the new account is listed')
    assert.equal(summary.account_type, 'current')

    const details = await c.sdk.call('accountDetails', { account_id: opened.account_id })
    assert.equal(details.account_number, opened.account_number)
    assert.equal(details.account_type, 'current')
    assert.equal(details.balance, '0')
    assert.equal(details.available_balance, '0')
  })
}

/** TransferApp: an RTC with its payment advice fields, and an EFT. */
function transferFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('TransferApp: get_by_entity, get_details, a funded RTC with payment advice fields, then get_transaction'), async () => {
    const c = context()
    const { accounts } = await c.sdk.call('accountsByEntity', { entity_id: c.rootEntityId })
    const accountId = accounts[0].account_id
    assert.equal(accountId, c.fundedAccountId, 'the first account is the funded pool account')
    const before = await c.sdk.call('accountDetails', { account_id: accountId })

    const values = transferValues(accountId)
    const sent = await c.sdk.callWithHeaders('transferEftRtc', values)
    assert.deepEqual(Object.keys(sent.body).sort(), ['amount', 'tx_id'])
    assert.match(sent.body.tx_id, uuidPattern)
    assert.equal(sent.body.amount, '1000')
    assert.equal(sent.headers['Bank-Tx-Status'], 'Successful',
      'an RTC settles at once; its status is in a header')

    const { transaction } = await c.sdk.call('transactionGet', { tx_id: sent.body.tx_id })
    assert.equal(transaction.tx_id, sent.body.tx_id)
    assert.equal(transaction.amount, '1000')
    assert.equal(transaction.tx_payment_type, 'RTC')
    assert.equal(transaction.status, 'Successful')
    assert.equal(transaction.recipient_name, 'Test Recipient')

    const after = await c.sdk.call('accountDetails', { account_id: accountId })
    assert.ok(BigInt(after.balance) <= BigInt(before.balance) - 1000n,
      'the payment (and any fee) left the account')
  })

  test(name('an EFT (pay_and_clear false) is Pending in header Bank-Tx-Status; the reply stays {tx_id, amount}'), async () => {
    const c = context()
    const sent = await c.sdk.callWithHeaders('transferEftRtc', transferValues(c.fundedAccountId,
      { pay_and_clear: false, amount: 2500 }))
    assert.deepEqual(Object.keys(sent.body).sort(), ['amount', 'tx_id'])
    assert.equal(sent.body.amount, '2500')
    assert.equal(sent.headers['Bank-Tx-Status'], 'Pending')
  })
}

/** transfer_internal, and the transaction list. */
function internalAndListFlows(name: TitleOf, context: () => FlowContext): void {
  test(name('transfer_internal pays another account of this bank by account_number, both sides at once'), async () => {
    const c = context()
    const target = await c.sdk.call('accountCreate', { entity_id: c.rootEntityId })
    const values = {
      account_id: c.fundedAccountId,
      clientTxId: randomUUID(),
      amount: 5000,
      ref: 'Internal move',
      own_ref: 'sdk internal 1',
      account_number: target.account_number,
      name: 'Own second account',
      notification_email: null,
      notification_name: null,
      beneficiary_id: null,
      beneficiary_version: 0,
    }
    const sent = await c.sdk.call('transferInternal', values)
    assert.deepEqual(Object.keys(sent).sort(), ['amount', 'tx_id'])
    assert.equal(sent.amount, '5000')

    const { transaction } = await c.sdk.call('transactionGet', { tx_id: sent.tx_id })
    assert.equal(transaction.tx_payment_type, 'INTERNAL')
    assert.equal(transaction.status, 'Successful')
    const credited = await c.sdk.call('accountDetails', { account_id: target.account_id })
    assert.equal(credited.balance, '5000')
    assert.equal(credited.available_balance, '5000')
  })

  test(name('transaction list with filter_user_ids {} and null: the same rows, newest first, no next_cursor'), async () => {
    const c = context()
    const withEmpty = await c.sdk.call('transactionList', { account_id: c.fundedAccountId,
      filter_user_ids: {} })
    const withNull = await c.sdk.call('transactionList', { account_id: c.fundedAccountId,
      filter_user_ids: null })
    assert.equal(withEmpty.account_id, c.fundedAccountId)
    assert.ok(withEmpty.transactions.length >= 1, 'the funding deposit at least')
    assert.deepEqual(withNull.transactions, withEmpty.transactions)
    assert.equal('next_cursor' in withEmpty, false)
    const dates = withEmpty.transactions.map((t: { date: string }) => Date.parse(t.date))
    assert.deepEqual(dates, [...dates].sort((a, b) => b - a), 'newest first')
    const deposit = withEmpty.transactions.find((t: { tx_type: string }) => t.tx_type === 'deposit')
    assert.ok(deposit, 'the funding deposit is listed')
    assert.equal(deposit.amount, String(funded_amount))
  })
}

/** An approved partner whose root entity's first account is funded: what every flow starts from. */
export async function prepareFlows(tb: TestBank, codec: Codec): Promise<FlowContext> {
  const partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  const fundedAccountId = accounts[0]?.account_id
  assert.ok(fundedAccountId, 'an approved root entity has its pool account')
  await tb.operator.accounts.deposit({ account_id: fundedAccountId, amount: funded_amount,
    ref: 'compat funding' })
  return { tb, sdk: new ReferenceSdk(tb, partner, codec), rootEntityId: partner.rootEntityId,
    fundedAccountId }
}
