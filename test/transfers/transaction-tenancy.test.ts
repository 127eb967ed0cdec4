import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { clientFor, onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, errorBody, expectApiError } from '../support/assertions.ts'
import { fund, newAccount, snapshot, transferBody } from './helpers.ts'

// Tenancy: a resource looked up by id that belongs to another partner is
// answered exactly as if it did not exist (404); no operation reveals another partner's
// data. Here: transfer from, and list, another partner's account; get another partner's
// transaction.

const tb = useTestBank()
let p: TestPartner
let other: TestPartner
let theirAccount: string
let theirTxId: string
let theirAccountNumber: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  const created = await other.client.accounts.create({ entity_id: other.rootEntityId })
  theirAccount = created.account_id
  theirAccountNumber = created.account_number
  await fund(tb, theirAccount, 1_000_000)
  theirTxId =
    (await other.client.accounts.transfer(transferBody(theirAccount, { amount: 5_000 }))).tx_id
})

function mustNotLeak(text: string): void {
  for (const secret of [theirAccount, theirTxId, theirAccountNumber, other.partnerId,
      other.rootEntityId]) {
    assert.ok(!text.includes(secret), `${text} leaks ${secret}`)
  }
}

async function rawPair(operation: string, theirs: Record<string, unknown>, missing: Record<string,
    unknown>) {
  const subject = `svc.account.${p.partnerId}.${operation}`
  const a = await rawRequest(tb, subject, JSON.stringify(theirs), { token: p.token })
  const b = await rawRequest(tb, subject, JSON.stringify(missing), { token: p.token })
  return { theirs: a, missing: b }
}

test("transactions - listing another partner's account is 404 exactly like a random id", async () => {
  const missing =
    await expectApiError(p.client.accounts.listTransactions({ account_id: randomUUID() }), 404)
  const theirs =
    await expectApiError(p.client.accounts.listTransactions({ account_id: theirAccount }), 404)
  assert.equal(missing.type, 'not_found')
  assert.deepEqual(errorBody(theirs), errorBody(missing))
  mustNotLeak(JSON.stringify(errorBody(theirs)))
  const raw = await rawPair('list', { account_id: theirAccount, limit: 5 },
    { account_id: randomUUID(), limit: 5 })
  assert.equal(raw.theirs.code, 404)
  assert.deepEqual(raw.theirs.body, raw.missing.body)
  assert.deepEqual(raw.theirs.headers, raw.missing.headers)
})

test("transactions - get_transaction of another partner's transaction is 404 exactly like a random id", async () => {
  const missing = await expectApiError(p.client.accounts.getTransaction({ tx_id: randomUUID() }),
    404)
  const theirs = await expectApiError(p.client.accounts.getTransaction({ tx_id: theirTxId }), 404)
  assert.deepEqual(errorBody(theirs), errorBody(missing))
  mustNotLeak(JSON.stringify(errorBody(theirs)))
  const raw = await rawPair('get_transaction', { tx_id: theirTxId }, { tx_id: randomUUID() })
  assert.deepEqual(raw.theirs.body, raw.missing.body)
  assert.deepEqual(raw.theirs.headers, raw.missing.headers)
  // The owner still reads it.
  assert.equal((await other.client.accounts.getTransaction({ tx_id: theirTxId })).transaction.tx_id,
    theirTxId)
})

test("transactions - a transfer out of another partner's account is 404 exactly like a random id and moves nothing", async () => {
  const theirsBefore = await snapshot(other, theirAccount)
  const missing = await expectApiError(p.client.accounts.transfer(transferBody(randomUUID())), 404)
  assert.equal(missing.type, 'not_found')
  for (const pay_and_clear of [false, true]) {
    const theirs = await expectApiError(
      p.client.accounts.transfer(transferBody(theirAccount, { pay_and_clear })), 404)
    assert.deepEqual(errorBody(theirs), errorBody(missing))
    mustNotLeak(JSON.stringify(errorBody(theirs)))
  }
  const raw = await rawPair(
    'transfer_eft_rtc',
    transferBody(theirAccount) as unknown as Record<string, unknown>,
    transferBody(randomUUID()) as unknown as Record<string, unknown>,
  )
  assert.equal(raw.theirs.code, 404)
  assert.deepEqual(raw.theirs.body, raw.missing.body)
  assert.deepEqual(raw.theirs.headers, raw.missing.headers)
  assert.deepEqual(await snapshot(other, theirAccount), theirsBefore)
})

test("transactions - a refused transfer out of another partner's account does not claim the clientTxId", async () => {
  const clientTxId = randomUUID()
  await expectApiError(p.client.accounts.transfer(transferBody(theirAccount, { clientTxId })), 404)
  const mine = await newAccount(p)
  await fund(tb, mine, 50_000)
  assert.equal((await p.client.accounts.transfer(transferBody(mine, { clientTxId }))).status,
    'Pending')
})

test("transactions - a transfer subject naming another partner is 403 and moves nothing", async () => {
  const theirsBefore = await snapshot(other, theirAccount)
  const intruder = clientFor(tb, other.partnerId, p.token)
  const error = await expectApiError(intruder.accounts.transfer(transferBody(theirAccount)), 403)
  mustNotLeak(JSON.stringify(errorBody(error)))
  await expectApiError(intruder.accounts.listTransactions({ account_id: theirAccount }), 403)
  await expectApiError(intruder.accounts.getTransaction({ tx_id: theirTxId }), 403)
  assert.deepEqual(await snapshot(other, theirAccount), theirsBefore)
})

test('transactions - a read-only credential may list and get transactions', async () => {
  const issued = await tb.operator.credentials.create({ partner_id: other.partnerId,
    permissions: ['read'] })
  const reader = clientFor(tb, other.partnerId, issued.token)
  const listed = await reader.accounts.listTransactions({ account_id: theirAccount })
  assert.deepEqual(listed, await other.client.accounts.listTransactions(
    { account_id: theirAccount }))
  assert.equal((await reader.accounts.getTransaction({ tx_id: theirTxId })).transaction.tx_id,
    theirTxId)
})

test('transactions - a payments-only credential may not read transactions', async () => {
  const issued = await tb.operator.credentials.create({ partner_id: other.partnerId,
    permissions: ['payments'] })
  const payer = clientFor(tb, other.partnerId, issued.token)
  await expectApiError(payer.accounts.listTransactions({ account_id: theirAccount }), 403)
  await expectApiError(payer.accounts.getTransaction({ tx_id: theirTxId }), 403)
  // It may pay, and its credential id is recorded as added_by.
  const sent = await payer.accounts.transfer(transferBody(theirAccount, { amount: 100 }))
  const row = (await other.client.accounts.getTransaction({ tx_id: sent.tx_id })).transaction
  assert.equal(row.added_by, issued.id)
  assert.notEqual(row.added_by, other.credentialId)
})

test('transactions - the ledger verifies clean after the tenancy tests', async () => {
  await assertLedgerClean(tb)
})
