import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { createInbox, type Msg, type NatsConnection, type PublishOptions } from '@nats-io/transport-node'
import { BankApiError, BankClient, type RetryOptions } from '../../src/client/index.ts'
import { subjectFor, type Operation } from '../../src/contract/operation.ts'
import { accountOperations } from '../../src/accounts/account-contract.ts'
import { transferOperations } from '../../src/transfers/transfer-contract.ts'
import { bulkOperations } from '../../src/bulk/bulk-contract.ts'
import { debitOperations } from '../../src/debit/debit-contract.ts'
import { expectApiError } from '../support/assertions.ts'
import { batchBody, payment } from '../bulk/helpers.ts'
import { activeMandate, orderBody } from '../debit/helpers.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  accountNumberOf, balances, fund, internalBody, newAccount, sast, transactionsOf, transferBody,
} from '../transfers/helpers.ts'

// The SDK's `retry` option (src/client/retry.ts, docs/guides/retries-and-idempotency.md)
// against a real bank. A timeout is forced by a connection that passes everything through
// except the reply to the first request on one subject: that request reaches the bank, which
// takes it and answers, but the answer goes to an inbox of the test's, so the SDK hears nothing
// and times out. The retry is held until the bank's answer to the first has arrived, so it
// always repeats a request the bank has taken (no race with the first, and nothing timed).

const eft_fee = 250
const internal_fee = 0

const tb = useTestBank()
let p: TestPartner
const clients: BankClient[] = []

before(async () => {
  await tb.ready
  // A business day's morning: debit orders collect two business days on, RTC at full limits.
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
})
after(async () => {
  await Promise.all(clients.map((client) => client.close()))
})

/**
 * A connection to the test's NATS server whose first request on `subject` is answered to the
 * test (`firstReply`) rather than to the SDK; with `noResponders`, that request goes to a
 * subject nobody serves instead, so NATS answers "no responders". Counts the requests sent on
 * `subject`.
 */
function intercepting(nc: NatsConnection, subject: string, how: 'drop-reply' | 'noResponders') {
  const inbox = createInbox()
  let answered: (msg: Msg) => void = () => {}
  const firstReply = new Promise<Msg>((resolve) => { answered = resolve })
  const subscription = nc.subscribe(inbox, { max: 1, callback: (_error, msg) => answered(msg) })
  let sent = 0
  const publish = (to: string, data: unknown, options?: PublishOptions): void => {
    const pass = () => nc.publish(to, data as string, options)
    if (to !== subject) return pass()
    sent++
    if (sent === 1 && how === 'noResponders') {
      return nc.publish(`nobody.serves.${randomUUID()}`, data as string, options)
    }
    if (sent === 1) return nc.publish(to, data as string, { ...options, reply: inbox })
    // A retry goes out once the bank has answered the first request.
    if (how === 'drop-reply') void firstReply.then(pass)
    else pass()
  }
  const connection = new Proxy(nc, {
    get(target, property) {
      if (property === 'publish') return publish
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    connection,
    /** The bank's answer to the first request, which the SDK never saw. */
    firstReply: () => firstReply.then((msg) => JSON.parse(new TextDecoder().decode(msg.data))),
    sent: () => sent,
    close: () => subscription.unsubscribe(),
  }
}

function client(connection: NatsConnection, timeoutMs: number, retry?: RetryOptions) {
  const made = new BankClient({ connection, token: p.token, partnerId: p.partnerId, timeoutMs,
    ...(retry ? { retry } : {}) })
  clients.push(made)
  return made
}

const subjectOf = (op: Operation) => subjectFor(op, p.partnerId)

test('retry - a transfer whose reply was lost is sent again with its key and answers the original transaction', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const net = intercepting(p.nc, subjectOf(transferOperations.transfer), 'drop-reply')
  // The first attempt times out for sure (its reply never comes); a retry is answered at once.
  const bank = client(net.connection, 2_000, { attempts: 3, backoffMs: 10 })
  const body = transferBody(account, { amount: 10_000 })
  const result = await bank.accounts.transfer(body)
  const original = await net.firstReply() as { tx_id: string; amount: string }
  net.close()

  assert.ok(net.sent() >= 2, 'the SDK sent the transfer again')
  assert.equal(result.tx_id, original.tx_id, 'the answer is the transaction the first attempt made')
  assert.deepEqual(result, { tx_id: original.tx_id, amount: '10000', status: 'Pending' })
  // The money moved once: one hold of amount and fee, one transfer row.
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 10_000 - eft_fee) })
  const transfers = (await transactionsOf(p, account)).filter((t) => t.tx_type === 'transfer')
  assert.deepEqual(transfers.map((t) => t.tx_id), [original.tx_id])

  // The same key with another amount is another payment: refused, whatever the retry option.
  const reused = await expectApiError(bank.accounts.transfer({ ...body, amount: 20_000 }), 409)
  assert.ok(reused.type === 'idempotency_key_reused', reused.message)
  assert.deepEqual(reused.details.map((d) => [d.field, d.tx_id]), [['amount', original.tx_id]])
  assert.equal(reused.attempts, 1, 'a 409 is not retried')
  assert.deepEqual(await balances(p, account),
    { balance: '100000', available: String(100_000 - 10_000 - eft_fee) })
})

test('retry - an internal payment whose reply was lost answers the original payment', async () => {
  const account = await newAccount(p)
  const payee = await newAccount(p)
  await fund(tb, account, 50_000)
  const net = intercepting(p.nc, subjectOf(transferOperations.transferInternal), 'drop-reply')
  const bank = client(net.connection, 2_000, { attempts: 2, backoffMs: 0 })
  const result = await bank.accounts.transferInternal(
    internalBody(account, await accountNumberOf(p, payee), { amount: 7_000 }))
  const original = await net.firstReply() as { tx_id: string }
  net.close()

  assert.deepEqual(result, { tx_id: original.tx_id, amount: '7000', status: 'Successful' })
  assert.equal((await balances(p, account)).balance, String(50_000 - 7_000 - internal_fee))
  assert.equal((await balances(p, payee)).balance, '7000', 'the payee was paid once')
})

test('retry - a debit order whose reply was lost answers the original order, as the bank first answered it', async () => {
  const mandate = await activeMandate(tb, p, p.rootEntityId)
  const net = intercepting(p.nc, subjectFor(debitOperations.create, p.rootEntityId), 'drop-reply')
  const bank = client(net.connection, 2_000, { attempts: 2, backoffMs: 0 })
  const body = orderBody(p.rootEntityId, mandate)
  const result = await bank.debitOrders.create(body)
  const original = await net.firstReply() as { debit_order_id: string }
  net.close()
  assert.deepEqual(result, original)
  const { debit_orders: orders } = await p.client.debitOrders.list({ entity_id: p.rootEntityId })
  assert.deepEqual(orders.filter((o) => o.clientTxId === body.clientTxId)
    .map((o) => o.debit_order_id), [original.debit_order_id], 'one order was made')
})

test('retry - a bulk batch whose reply was lost: the retry\'s duplicate is thrown (its PIN reference cannot be read back)', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const net = intercepting(p.nc, subjectFor(bulkOperations.initiate, p.rootEntityId), 'drop-reply')
  const bank = client(net.connection, 2_000, { attempts: 2, backoffMs: 0 })
  const body = batchBody(p.rootEntityId, [payment(1)], { account_id: account })
  const error = await expectApiError(bank.bulkPayments.initiate(body), 409)
  const original = await net.firstReply() as { bulk_payment_id: string; status: string }
  net.close()
  assert.ok(error.type === 'duplicate', error.message)
  assert.equal(error.attempts, 2)
  assert.equal(error.details[0]?.bulk_payment_id, body.bulk_payment_id)
  assert.deepEqual([original.bulk_payment_id, original.status],
    [body.bulk_payment_id, 'pending_otp'])
  const status = await p.client.bulkPayments.status({ entity_id: p.rootEntityId,
    bulk_payment_id: body.bulk_payment_id })
  assert.equal(status.status, 'pending_otp', 'the batch the first attempt initiated')
})

test('retry - a duplicate on the first attempt is the caller\'s own repeat and still throws', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const bank = client(p.nc, 30_000, { attempts: 3 })
  const body = transferBody(account, { amount: 1_000 })
  const first = await bank.accounts.transfer(body)
  const error = await expectApiError(bank.accounts.transfer(body), 409)
  assert.ok(error.type === 'duplicate', error.message)
  assert.equal(error.originalTxId, first.tx_id)
  assert.equal(error.attempts, 1)
})

test('retry - no bank instance answering (503): a keyed write and a read are sent again', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 50_000)
  const net = intercepting(p.nc, subjectOf(transferOperations.transfer), 'noResponders')
  const bank = client(net.connection, 30_000, { attempts: 2, backoffMs: 0 })
  const result = await bank.accounts.transfer(transferBody(account, { amount: 2_000 }))
  net.close()
  assert.equal(net.sent(), 2)
  assert.equal((await bank.accounts.getTransaction({ tx_id: result.tx_id })).transaction.amount,
    '2000', 'the retry made the payment (the first attempt reached nobody)')
  assert.equal((await balances(p, account)).available, String(50_000 - 2_000 - eft_fee))

  const reads = intercepting(p.nc, subjectFor(accountOperations.getDetails, p.partnerId),
    'noResponders')
  const reader = client(reads.connection, 30_000, { attempts: 2, backoffMs: 0 })
  assert.equal((await reader.accounts.getDetails({ account_id: account })).account_id, account)
  reads.close()
  assert.equal(reads.sent(), 2)
})

test('retry - a write without an idempotency key is never sent again', async () => {
  const net = intercepting(p.nc, subjectFor(accountOperations.create, p.partnerId), 'noResponders')
  const bank = client(net.connection, 30_000, { attempts: 3, backoffMs: 0 })
  const error = await expectApiError(bank.accounts.create({ entity_id: p.rootEntityId }), 503)
  net.close()
  assert.equal(error.type, 'unavailable')
  assert.equal(error.attempts, 1)
  assert.equal(net.sent(), 1)

  const lost = intercepting(p.nc, subjectFor(accountOperations.create, p.partnerId), 'drop-reply')
  const before = (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts
  const timing = client(lost.connection, 1_000, { attempts: 3, backoffMs: 0 })
  const timeout = await expectApiError(timing.accounts.create({ entity_id: p.rootEntityId }), 504)
  assert.equal(timeout.type, 'timeout')
  assert.equal(timeout.attempts, 1)
  const { account_id: opened } = await lost.firstReply() as { account_id: string }
  lost.close()
  assert.equal(lost.sent(), 1)
  const now = (await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })).accounts
  assert.deepEqual(now.map((a) => a.account_id), [...before.map((a) => a.account_id), opened],
    'one account was opened: the one the timed-out request made')
})

test('retry - the option is checked when the client is made', () => {
  const make = (retry: unknown) => () => new BankClient({ connection: p.nc, token: p.token,
    partnerId: p.partnerId, retry: retry as RetryOptions })
  assert.throws(make({ attempts: 0 }), /retry\.attempts is 0; it must be a whole number from 1 to 10/)
  assert.throws(make({ attempts: 2.5 }), /retry\.attempts is 2\.5/)
  assert.throws(make({}), /retry\.attempts is missing/)
  assert.throws(make({ attempts: 2, backoffMs: -1 }), /retry\.backoffMs is -1/)
  assert.throws(make(3), /retry must be an object/)
  assert.ok(make({ attempts: 1 })() instanceof BankClient)
  assert.ok(new BankApiError(504, 'timeout', 'x').attempts === 1)
})
