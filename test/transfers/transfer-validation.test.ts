import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { clientFor, onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, expectRefusal } from '../support/assertions.ts'
import { balances, fund, newAccount, snapshot, transferBody, type TransferBody } from './helpers.ts'

// The rules of a single transfer (docs/guides/payments.md). Every refusal is a 400 naming
// the field and moves nothing.

const eft_fee = 250

const tb = useTestBank()
let p: TestPartner
/** Funded well beyond every amount below, so that only the rule under test can refuse. */
let account: string
let subject: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  account = await newAccount(p)
  await fund(tb, account, 1_000_000_000)
  subject = `svc.account.${p.partnerId}.transfer_eft_rtc`
})

const asBody = (body: Record<string, unknown>) => body as unknown as TransferBody

function without(body: TransferBody, field: string): TransferBody {
  const copy: Record<string, unknown> = { ...body }
  delete copy[field]
  return asBody(copy)
}

async function assertRefused(body: TransferBody, field: string, label: string,
    type = 'invalid_request'): Promise<void> {
  const before = await snapshot(p, account)
  const error = await expectApiError(p.client.accounts.transfer(body), 400, field)
  assert.equal(error.type, type, label)
  assert.deepEqual(await snapshot(p, account), before, `${label}: nothing moved`)
}

const badValues: Array<[string, string, unknown]> = [
  ['amount', 'below the minimum (99)', 99],
  ['amount', 'zero', 0],
  ['amount', 'negative', -100],
  ['amount', 'a fraction (100.5)', 100.5],
  ['amount', 'a string', '15000'],
  ['amount', 'null', null],
  ['amount', 'a boolean', true],
  ['own_ref', 'one character', 'a'],
  ['own_ref', 'one character padded with spaces', '  a  '],
  ['own_ref', '51 characters', 'x'.repeat(51)],
  ['own_ref', 'a number', 12345],
  ['clientTxId', 'not a UUID', 'order-42'],
  ['clientTxId', 'an empty string', ''],
  ['clientTxId', 'a UUID missing a digit', '123e4567-e89b-42d3-a456-42661417400'],
  ['branch_code', 'five digits', '12345'],
  ['branch_code', 'seven digits', '1234567'],
  ['branch_code', 'letters', '25065a'],
  ['branch_code', 'a number', 250655],
  ['account_id', 'not a UUID', 'my-account'],
  ['account_number', 'letters', 'ABC1234567'],
  ['name', 'empty', ''],
  ['name', 'only spaces', '   '],
  ['ref', 'empty', ''],
  ['ref', 'only spaces', '  '],
  ['pay_and_clear', 'a string', 'yes'],
]
test('transfers - amount an EFT over R5,000,000 (500,000,001) is 400 limit_exceeded naming amount and moves nothing', async () => {
  await assertRefused(asBody({ ...transferBody(account), amount: 500_000_001 }), 'amount',
    'an EFT over R5,000,000', 'limit_exceeded')
})

for (const [field, label, value] of badValues) {
  test(`transfers - ${field} ${label} is 400 naming ${field} and moves nothing`, async () => {
    await assertRefused(asBody({ ...transferBody(account), [field]: value }), field,
      `${field} ${label}`)
  })
}

const required = ['account_id', 'clientTxId', 'amount', 'ref', 'own_ref', 'account_number',
  'branch_code', 'name']
for (const field of required) {
  test(`transfers - a request without ${field} is 400 naming ${field} as required`, async () => {
    const before = await snapshot(p, account)
    const error = await expectApiError(
      p.client.accounts.transfer(without(transferBody(account), field)), 400, field)
    const detail = (error.details as Array<{ field: string; message: string }>).find(
      (d) => d.field === field)
    assert.equal(detail?.message, 'is required')
    assert.deepEqual(await snapshot(p, account), before)
  })
}

test('transfers - a request with every field missing names each required field', async () => {
  const error = await expectApiError(p.client.accounts.transfer(asBody({})), 400)
  const fields = (error.details as Array<{ field: string }>).map((d) => d.field).sort()
  assert.deepEqual(fields, [...required].sort())
})

test('transfers - an unknown field is 400 naming it and moves nothing', async () => {
  await assertRefused(asBody({ ...transferBody(account), currency: 'ZAR' }), 'currency',
    'unknown field')
})

test('transfers - own_ref of exactly 2 and exactly 50 characters is accepted', async () => {
  for (const ownRef of ['ab', 'y'.repeat(50)]) {
    const sent = await p.client.accounts.transfer(transferBody(account, { own_ref: ownRef }))
    assert.equal(sent.status, 'Pending')
  }
})

test('transfers - amount of 2^53 and above sent as raw JSON is 400 naming amount and moves nothing', async () => {
  const before = await snapshot(p, account)
  const body = JSON.stringify(transferBody(account, { amount: 424242 }))
  for (const literal of ['9007199254740992', '9007199254740993', '18446744073709551616', '1e300',
      '-9007199254740993']) {
    const reply = await rawRequest(tb, subject, body.replace('424242', literal), { token: p.token })
    assert.equal(reply.code, 400, literal)
    assert.equal(reply.body.error.type, 'invalid_request', literal)
    assert.ok(
      reply.body.error.details.some((d: { field: string }) => d.field === 'amount'),
      `${literal}: ${JSON.stringify(reply.body)}`,
    )
  }
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - amount of exactly 2^53-1 is refused by the EFT limit, not by a crash', async () => {
  const before = await snapshot(p, account)
  const body = JSON.stringify(transferBody(account, { amount: 424242 })).replace('424242',
    '9007199254740991')
  const reply = await rawRequest(tb, subject, body, { token: p.token })
  assert.equal(reply.code, 400)
  assert.deepEqual(reply.body.error.details.map((d: { field: string }) => d.field), ['amount'])
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - an RTC over R5,000,000 is 400 limit_exceeded naming amount, even in business hours', async () => {
  assert.equal(tb.clock.now().toISOString(), '2026-11-23T08:00:00.000Z')
  await assertRefused(transferBody(account, { amount: 500_000_001, pay_and_clear: true }), 'amount',
    'RTC over the limit', 'limit_exceeded')
})

test('transfers - malformed JSON and non-object bodies are 400 and move nothing', async () => {
  const before = await snapshot(p, account)
  const good = JSON.stringify(transferBody(account))
  const cases: Array<[string, string]> = [
    [good.slice(0, -1), 'invalid_json'],
    ['{"amount": 100,}', 'invalid_json'],
    ["{'amount': 100}", 'invalid_json'],
    [`[${good}]`, 'invalid_request'],
    ['null', 'invalid_request'],
    ['15000', 'invalid_request'],
    ['"transfer"', 'invalid_request'],
  ]
  for (const [data, type] of cases) {
    const reply = await rawRequest(tb, subject, data, { token: p.token })
    assert.equal(reply.code, 400, data)
    assert.equal(reply.body.error.type, type, data)
    assert.equal(reply.headers['Nats-Service-Error-Code'], '400', data)
  }
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - a refused request does not use up its clientTxId', async () => {
  const clientTxId = randomUUID()
  await expectApiError(
    p.client.accounts.transfer(transferBody(account, { clientTxId, amount: 99 })), 400, 'amount')
  await expectApiError(p.client.accounts.transfer(
    transferBody(account, { clientTxId, amount: 500_000_001 })), 400, 'amount')
  const sent = await p.client.accounts.transfer(transferBody(account, { clientTxId, amount: 100 }))
  assert.equal(sent.status, 'Pending')
})

test('transfers - a credential without the payments permission is 403 and moves nothing', async () => {
  const issued = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read', 'write'] })
  const reader = clientFor(tb, p.partnerId, issued.token)
  const before = await snapshot(p, account)
  const clientTxId = randomUUID()
  const error =
    await expectApiError(reader.accounts.transfer(transferBody(account, { clientTxId })), 403)
  assert.equal(error.type, 'forbidden')
  assert.deepEqual(await snapshot(p, account), before)
  // The refusal claimed nothing: the key still works for a credential that may pay.
  assert.equal((await p.client.accounts.transfer(transferBody(account, { clientTxId }))).status,
    'Pending')
})

// Funds ---------------------------------------------------------------------------------

test('transfers - an empty account is refused for funds with 400 naming amount', async () => {
  const empty = await newAccount(p)
  const before = await snapshot(p, empty)
  const error = await expectApiError(
    p.client.accounts.transfer(transferBody(empty, { amount: 100 })), 400, 'amount')
  assert.equal(error.type, 'insufficient_funds')
  assert.match(error.message, /insufficient funds/)
  assert.deepEqual(await snapshot(p, empty), before)
  assert.deepEqual(before.transactions, [])
})

test('transfers - amount plus fee one cent over available is 400; after funding the same clientTxId goes through', async () => {
  const short = await newAccount(p)
  await fund(tb, short, 10_000 + eft_fee - 1)
  const body = transferBody(short, { amount: 10_000 })
  const before = await snapshot(p, short)
  await expectRefusal(p.client.accounts.transfer(body), 'insufficient_funds', 'amount')
  assert.deepEqual(await snapshot(p, short), before, 'nothing moved')
  await fund(tb, short, 1)
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending')
  assert.deepEqual(await balances(p, short), { balance: String(10_000 + eft_fee), available: '0' })
})

test('transfers - an RTC short of its fee is refused and moves nothing', async () => {
  const short = await newAccount(p)
  await fund(tb, short, 10_000 + 699)
  const before = await snapshot(p, short)
  await expectRefusal(p.client.accounts.transfer(
    transferBody(short, { amount: 10_000, pay_and_clear: true })), 'insufficient_funds', 'amount')
  assert.deepEqual(await snapshot(p, short), before)
  // An EFT of the same amount is cheaper and fits.
  assert.equal((await p.client.accounts.transfer(transferBody(short, { amount: 10_000 }))).status,
    'Pending')
})

test('transfers - money held by a pending EFT cannot be spent again', async () => {
  const held = await newAccount(p)
  await fund(tb, held, 20_000)
  await p.client.accounts.transfer(transferBody(held, { amount: 15_000 }))
  const before = await snapshot(p, held)
  assert.equal(before.details.balance, '20000')
  await expectRefusal(p.client.accounts.transfer(transferBody(held, { amount: 5_000 })),
    'insufficient_funds', 'amount')
  await expectRefusal(p.client.accounts.transfer(
    transferBody(held, { amount: 5_000, pay_and_clear: true })), 'insufficient_funds', 'amount')
  assert.deepEqual(await snapshot(p, held), before)
  const sent = await p.client.accounts.transfer(
    transferBody(held, { amount: 20_000 - 15_000 - 2 * eft_fee }))
  assert.equal(sent.status, 'Pending')
  assert.equal((await balances(p, held)).available, '0')
})

test('transfers - the ledger verifies clean after refusals', async () => {
  await assertLedgerClean(tb)
})

test('transfers - an account_id written in upper case names the same account, as it does for get_details', async () => {
  // A UUID is case-insensitive (RFC 4122 §3); the contract accepts the upper-case form and
  // get_details finds the account by it, so a transfer must too.
  const upper = account.toUpperCase()
  assert.equal((await p.client.accounts.getDetails({ account_id: upper })).account_id, account)
  for (const pay_and_clear of [false, true]) {
    const sent = await p.client.accounts.transfer(
      transferBody(upper, { amount: 100, pay_and_clear }))
    assert.equal(sent.status, pay_and_clear ? 'Successful' : 'Pending')
  }
})
