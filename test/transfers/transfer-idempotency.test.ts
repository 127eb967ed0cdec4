import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError, expectRefusal } from '../support/assertions.ts'
import { balances, day_ms, fund, newAccount, snapshot, transactionsOf, transferBody } from './helpers.ts'

// clientTxId (docs/guides/payments.md): a repeat within the window (default 24 hours) of the
// same request is 409 `duplicate` whose details carry the original tx_id; of another request
// (another amount, account, rail, recipient) 409 `idempotency_key_reused` naming each field
// that differs. Neither moves money; after the window the key may be used again. Keys belong
// to a partner.

const eft_fee = 250

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

async function assertDuplicate(call: Promise<unknown>, originalTxId: string): Promise<void> {
  const error = await expectApiError(call, 409)
  assert.equal(error.type, 'duplicate', error.message)
  assert.deepEqual(error.details,
    [{ field: 'clientTxId', message: 'already used', tx_id: originalTxId }])
}

/** A 409 idempotency_key_reused naming exactly `fields`, each with the original tx_id. */
async function assertReused(call: Promise<unknown>, originalTxId: string,
    fields: string[]): Promise<void> {
  const error = await expectApiError(call, 409)
  assert.equal(error.type, 'idempotency_key_reused', error.message)
  assert.deepEqual(error.details.map((d) => d.field), fields)
  for (const detail of error.details) {
    assert.equal(detail.tx_id, originalTxId)
    assert.ok(detail.message.length > 0)
  }
  for (const field of fields) assert.match(error.message, new RegExp(field))
}

test('transfers - the same clientTxId twice is 409 carrying the original tx_id, and moves nothing', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 10_000 })
  const first = await p.client.accounts.transfer(body)
  const before = await snapshot(p, account)
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  assert.deepEqual(await snapshot(p, account), before)
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 10_000 - eft_fee) })
})

test('transfers - a reused clientTxId with another amount, rail or recipient is 409 idempotency_key_reused naming what differs', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const clientTxId = randomUUID()
  const first = await p.client.accounts.transfer(
    transferBody(account, { clientTxId, amount: 1_000 }))
  const before = await snapshot(p, account)
  const changes: Array<[Record<string, unknown>, string[]]> = [
    [{ amount: 2_000 }, ['amount']],
    [{ pay_and_clear: true }, ['pay_and_clear']],
    [{ account_number: '1234567890', name: 'Someone Else' }, ['name', 'account_number']],
    [{ ref: 'Other', own_ref: 'Other own', branch_code: '198765' },
      ['ref', 'own_ref', 'branch_code']],
    [{ amount: 3_000, notification_email: 'a@example.com' }, ['amount']],
  ]
  for (const [change, fields] of changes) {
    await assertReused(p.client.accounts.transfer(
      transferBody(account, { clientTxId, amount: 1_000, ...change })), first.tx_id, fields)
  }
  // The same request again, its payment advice aside, is the duplicate it always was.
  await assertDuplicate(p.client.accounts.transfer(transferBody(account,
    { clientTxId, amount: 1_000, notification_email: 'a@example.com' })), first.tx_id)
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - insufficient funds is 400 insufficient_funds naming amount; the key stays free', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 5_000)
  const body = transferBody(account, { amount: 5_000 })
  const error = await expectRefusal(p.client.accounts.transfer(body), 'insufficient_funds',
    'amount')
  assert.equal(error.code, 400)
  assert.match(error.message, /insufficient funds/)
  await fund(tb, account, eft_fee)
  const paid = await p.client.accounts.transfer(body)
  assert.equal(paid.status, 'Pending')
})

test('transfers - a retry with the same body is 409 duplicate with the original tx_id; another amount is 409 idempotency_key_reused naming amount', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 7_000 })
  const first = await p.client.accounts.transfer(body)
  const retried = await expectRefusal(p.client.accounts.transfer(body), 'duplicate')
  assert.equal(retried.code, 409)
  assert.equal(retried.details[0]!.tx_id, first.tx_id)
  assert.equal(retried.originalTxId, first.tx_id)
  const reused = await expectRefusal(p.client.accounts.transfer({ ...body, amount: 7_001 }),
    'idempotency_key_reused', 'amount')
  assert.equal(reused.code, 409)
  assert.deepEqual(reused.details.map((d) => [d.field, d.tx_id]), [['amount', first.tx_id]])
  assert.match(reused.details[0]!.message, /7000/)
  assert.equal(reused.originalTxId, undefined)
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 7_000 - eft_fee) })
})

test('transfers - a duplicate of an RTC is 409 after it settled', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 5_000, pay_and_clear: true })
  const first = await p.client.accounts.transfer(body)
  assert.equal(first.status, 'Successful')
  const before = await snapshot(p, account)
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - the same clientTxId for a different account of the same partner is 409 idempotency_key_reused naming account_id', async () => {
  const a = await newAccount(p)
  const b = await newAccount(p)
  await fund(tb, a, 50_000)
  await fund(tb, b, 50_000)
  const clientTxId = randomUUID()
  const first = await p.client.accounts.transfer(transferBody(a, { clientTxId }))
  const before = await snapshot(p, b)
  await assertReused(p.client.accounts.transfer(transferBody(b, { clientTxId })), first.tx_id,
    ['account_id'])
  assert.deepEqual(await snapshot(p, b), before)
})

test("transfers - the same clientTxId from another partner is independent", async () => {
  const mine = await newAccount(p)
  const theirs = await newAccount(other)
  await fund(tb, mine, 50_000)
  await fund(tb, theirs, 50_000)
  const clientTxId = randomUUID()
  const first = await p.client.accounts.transfer(transferBody(mine, { clientTxId, amount: 1_000 }))
  const second = await other.client.accounts.transfer(
    transferBody(theirs, { clientTxId, amount: 2_000 }))
  assert.notEqual(second.tx_id, first.tx_id)
  assert.equal(second.status, 'Pending')
  assert.equal((await balances(other, theirs)).available, String(50_000 - 2_000 - eft_fee))
  // And each partner's own repeat is still its own duplicate, answered with its own tx_id.
  await assertDuplicate(other.client.accounts.transfer(
    transferBody(theirs, { clientTxId, amount: 2_000 })), second.tx_id)
  await assertDuplicate(p.client.accounts.transfer(
    transferBody(mine, { clientTxId, amount: 1_000 })), first.tx_id)
})

test("transfers - a 409 reply carries its code in the header and the original tx_id in the body's details", async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const body = transferBody(account)
  const first = await p.client.accounts.transfer(body)
  const reply = await rawRequest(tb, `svc.account.${p.partnerId}.transfer_eft_rtc`,
    JSON.stringify(body), { token: p.token })
  assert.equal(reply.code, 409)
  assert.equal(reply.headers['Nats-Service-Error-Code'], '409')
  assert.equal(reply.body.error.code, 409)
  assert.equal(reply.body.error.type, 'duplicate')
  assert.equal(reply.body.error.details[0].tx_id, first.tx_id)
})

test('transfers - a duplicate sent at once with its original moves money once', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 10_000 })
  const outcomes =
    await Promise.allSettled([1, 2, 3, 4, 5].map(() => p.client.accounts.transfer(body)))
  const accepted = outcomes.filter((o) => o.status === 'fulfilled')
  assert.equal(accepted.length, 1, JSON.stringify(outcomes))
  const txId = (accepted[0] as PromiseFulfilledResult<{ tx_id: string }>).value.tx_id
  for (const o of outcomes) {
    if (o.status === 'rejected') await assertDuplicate(Promise.reject(o.reason), txId)
  }
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 10_000 - eft_fee) })
  assert.equal((await transactionsOf(p, account)).filter((r) => r.tx_type === 'transfer').length, 1)
})

test('transfers - a key refused for funds may be used again, while a key that moved money may not', async () => {
  const account = await newAccount(p)
  const body = transferBody(account, { amount: 1_000 })
  await expectRefusal(p.client.accounts.transfer(body), 'insufficient_funds', 'amount')
  await expectRefusal(p.client.accounts.transfer(body), 'insufficient_funds', 'amount')
  await fund(tb, account, 1_000 + eft_fee)
  const sent = await p.client.accounts.transfer(body)
  await fund(tb, account, 100_000)
  await assertDuplicate(p.client.accounts.transfer(body), sent.tx_id)
})

test('transfers - a key is a duplicate for the whole 24 hour window and usable again 1 ms after it', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 3_000 })
  const first = await p.client.accounts.transfer(body)
  tb.clock.advance(day_ms - 60_000)
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  tb.clock.advance(60_000)
  await assertDuplicate(p.client.accounts.transfer(body), first.tx_id)
  const before = await snapshot(p, account)
  assert.equal(before.details.available_balance, String(100_000 - 3_000 - eft_fee))
  tb.clock.advance(1)
  const again = await p.client.accounts.transfer(body)
  assert.notEqual(again.tx_id, first.tx_id)
  assert.equal(again.status, 'Pending')
  assert.equal((await balances(p, account)).available, String(100_000 - 2 * (3_000 + eft_fee)))
  // The new use starts a new window: a repeat now names the new transaction.
  await assertDuplicate(p.client.accounts.transfer(body), again.tx_id)
})

test('transfers - a clientTxId repeated in upper case is the same key: 409 with the original tx_id', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 1_000 })
  const first = await p.client.accounts.transfer(body)
  const before = await snapshot(p, account)
  await assertDuplicate(
    p.client.accounts.transfer({ ...body, clientTxId: body.clientTxId.toUpperCase() }), first.tx_id)
  assert.deepEqual(await snapshot(p, account), before)
})

test('transfers - one clientTxId sent at once in two letter cases moves money once and fails no other request', async () => {
  // Both spellings are the same key. Sent together with other payments, they may share one
  // grouped ledger batch with other accounts' and other partners' transfers; whatever the
  // batching, those others must not be refused because of them.
  const mine = await newAccount(p)
  const keyed = await newAccount(p)
  const theirs = await newAccount(other)
  const theirsToo = await newAccount(other)
  for (const account of [mine, keyed]) await fund(tb, account, 100_000)
  for (const account of [theirs, theirsToo]) await fund(tb, account, 100_000)
  for (let round = 0; round < 3; round++) {
    const clientTxId = randomUUID()
    const outcomes = await Promise.allSettled([
      p.client.accounts.transfer(transferBody(mine, { amount: 100 })),
      other.client.accounts.transfer(transferBody(theirs, { amount: 100 })),
      p.client.accounts.transfer(transferBody(keyed, { clientTxId, amount: 100 })),
      p.client.accounts.transfer(
        transferBody(keyed, { clientTxId: clientTxId.toUpperCase(), amount: 100 })),
      other.client.accounts.transfer(transferBody(theirsToo, { amount: 100 })),
    ])
    const describe = JSON.stringify(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.status
      : String(o.reason))))
    for (const i of [0, 1, 4]) assert.equal(outcomes[i]!.status, 'fulfilled',
      `round ${round}, unrelated request ${i}: ${describe}`)
    const keyedOutcomes = [outcomes[2]!, outcomes[3]!]
    assert.equal(keyedOutcomes.filter((o) => o.status === 'fulfilled').length, 1,
      `round ${round}: ${describe}`)
    const winner = keyedOutcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{
      tx_id: string }>
    const loser = keyedOutcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
    await assertDuplicate(Promise.reject(loser.reason), winner.value.tx_id)
  }
  assert.equal((await balances(p, keyed)).available, String(100_000 - 3 * (100 + eft_fee)))
})

test('transfers - the ledger verifies clean after duplicates', async () => {
  await assertLedgerClean(tb)
})
