import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectRefusal, iso, uuidPattern } from '../support/assertions.ts'
import {
  accountNumberOf,
  balances,
  fund,
  internalBody,
  newAccount,
  sast,
  snapshot,
  transactionsOf,
  transferBody,
  txById,
} from './helpers.ts'

// svc.account.<partner_id>.transfer_internal: a payment to another account of this bank,
// named by its account_number, of any partner. Instant: both sides in one ledger
// transaction, `tx_payment_type` INTERNAL, the same clientTxId keys and funds check as
// transfers, and the RTC limits by SAST time. The default internal fee is 0 (its
// configured fee is tested in transfer-configured.test.ts). The harness clock starts on
// Monday 2026-11-23 at 10:00 SAST.

const eft_fee = 250
const high_max = 500_000_000
const low_max = 25_000_000
const start = '2026-11-23T08:00:00Z'

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

/** A funded payer and an empty payee of partner `payeeOwner`, with the payee's number. */
async function pair(payerFunds: number, payeeOwner: TestPartner = p) {
  const payer = await newAccount(p)
  if (payerFunds > 0) await fund(tb, payer, payerFunds)
  const payee = await newAccount(payeeOwner)
  return { payer, payee, payeeNumber: await accountNumberOf(payeeOwner, payee) }
}

async function assertDuplicate(call: Promise<unknown>, originalTxId: string): Promise<void> {
  const error = await expectRefusal(call, 'duplicate')
  assert.equal(error.details[0]?.tx_id, originalTxId)
}

/** 409 idempotency_key_reused naming exactly `fields`, each with the original tx_id. */
async function assertReused(call: Promise<unknown>, originalTxId: string,
    fields: string[]): Promise<void> {
  const error = await expectRefusal(call, 'idempotency_key_reused')
  assert.deepEqual(error.details.map((d) => [d.field, d.tx_id]),
    fields.map((field) => [field, originalTxId]))
}

test('transfers - an internal payment is Successful at once: payer down, payee up, no fee by default', async () => {
  const { payer, payee, payeeNumber } = await pair(100_000)
  const sent = await p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: 25_000 }))
  assert.match(sent.tx_id, uuidPattern)
  assert.equal(sent.amount, '25000')
  assert.equal(sent.status, 'Successful', 'the SDK reads the status from the Bank-Tx-Status header')
  assert.deepEqual(await balances(p, payer), { balance: '75000', available: '75000' })
  assert.deepEqual(await balances(p, payee), { balance: '25000', available: '25000' })
})

/** The payee's row of the 30000 'Rent Dec' payment: the system's credit, its id and hash given. */
function payeeCreditRow(credit: { tx_id: string; tx_sha: string }, now: string) {
  return {
    tx_id: credit.tx_id,
    parent_tx_id: '',
    date: now,
    amount: '30000',
    ref: 'Rent Dec',
    status: 'Successful',
    tx_sha: credit.tx_sha,
    user_id: '',
    added_by: 'system',
    tx_type: 'transfer',
    tx_payment_type: 'INTERNAL',
    fee: '0',
    recipient_name: '',
    credit: '30000',
    debit: '0',
    running_balance: '30000',
    verified: true,
  }
}

test("transfers - an internal payment's two rows: the payer's debit names the recipient, the payee's credit is the system's", async () => {
  const { payer, payee, payeeNumber } = await pair(100_000)
  const body = internalBody(payer, payeeNumber, { amount: 30_000, ref: 'Rent Dec',
    own_ref: 'Flat 4 rent', name: 'My Landlord' })
  const sent = await p.client.accounts.transferInternal(body)
  const now = iso(tb.clock.now())
  const payerRows = await transactionsOf(p, payer)
  assert.deepEqual(payerRows.map((r) => r.tx_type), ['transfer', 'deposit'])
  assert.deepEqual(payerRows[0], {
    tx_id: sent.tx_id,
    parent_tx_id: '',
    date: now,
    amount: '30000',
    ref: 'Rent Dec',
    status: 'Successful',
    tx_sha: payerRows[0]!.tx_sha,
    user_id: '',
    added_by: p.credentialId,
    tx_type: 'transfer',
    tx_payment_type: 'INTERNAL',
    fee: '0',
    recipient_name: 'My Landlord',
    credit: '0',
    debit: '30000',
    running_balance: '70000',
    verified: true,
  })
  const payeeRows = await transactionsOf(p, payee)
  assert.equal(payeeRows.length, 1)
  const credit = payeeRows[0]!
  assert.match(credit.tx_id, uuidPattern)
  assert.notEqual(credit.tx_id, sent.tx_id)
  assert.deepEqual(credit, payeeCreditRow(credit, now))
  assert.deepEqual(await txById(p, sent.tx_id), payerRows[0])
  assert.deepEqual(await txById(p, credit.tx_id), credit)
})

test("transfers - paying another partner's account: its row shows nothing of the payer's partner", async () => {
  const { payer, payee, payeeNumber } = await pair(50_000, other)
  const body = internalBody(payer, payeeNumber, { amount: 12_345, ref: 'Order 77',
    own_ref: 'secret own reference' })
  const sent = await p.client.accounts.transferInternal(body)
  assert.equal(sent.status, 'Successful')
  assert.deepEqual(await balances(p, payer), { balance: String(50_000 - 12_345),
    available: String(50_000 - 12_345) })
  assert.deepEqual(await balances(other, payee), { balance: '12345', available: '12345' })
  const [credit] = await transactionsOf(other, payee)
  assert.ok(credit)
  assert.equal(credit.ref, 'Order 77')
  assert.equal(credit.added_by, 'system')
  assert.equal(credit.credit, '12345')
  assert.equal(credit.tx_payment_type, 'INTERNAL')
  const shown = JSON.stringify(credit)
  for (const secret of [p.credentialId, p.partnerId, p.rootEntityId, payer, sent.tx_id,
      'secret own reference']) {
    assert.ok(!shown.includes(secret), `the payee's row shows ${secret}: ${shown}`)
  }
  // Each side reads only its own row.
  await expectRefusal(p.client.accounts.getTransaction({ tx_id: credit.tx_id }), 404)
  await expectRefusal(other.client.accounts.getTransaction({ tx_id: sent.tx_id }), 404)
})

test('transfers - an account_number no account of this bank has is 404 and moves nothing', async () => {
  const { payer } = await pair(50_000)
  const before = await snapshot(p, payer)
  const error =
    await expectRefusal(p.client.accounts.transferInternal(internalBody(payer, '62000000001')), 404)
  assert.match(error.message, /no account of this bank has that account_number/)
  assert.deepEqual(await snapshot(p, payer), before)
})

test('transfers - paying the paying account itself is 400 naming account_number and moves nothing', async () => {
  const { payer } = await pair(50_000)
  const before = await snapshot(p, payer)
  const body = internalBody(payer, await accountNumberOf(p, payer))
  await expectRefusal(p.client.accounts.transferInternal(body), 400, 'account_number')
  assert.deepEqual(await snapshot(p, payer), before)
  // The refusal freed nothing that was taken: the key was never claimed, so it works for another
  // payee.
  const { payeeNumber } = await pair(0)
  const sent = await p.client.accounts.transferInternal({ ...body, account_number: payeeNumber })
  assert.equal(sent.status, 'Successful')
})

test("transfers - another partner's account as the payer is 404, whatever the payee, even its own number", async () => {
  const theirs = await newAccount(other)
  await fund(tb, theirs, 50_000)
  const theirNumber = await accountNumberOf(other, theirs)
  const mine = await newAccount(p)
  const before = await snapshot(other, theirs)
  // Its own number too: a 400 "same account" would tell the caller which number the id has.
  for (const payeeNumber of [theirNumber, await accountNumberOf(p, mine)]) {
    const error = await expectRefusal(p.client.accounts.transferInternal(
      internalBody(theirs, payeeNumber)), 404)
    assert.equal(error.message, 'account not found')
  }
  assert.deepEqual(await snapshot(other, theirs), before)
  assert.deepEqual(await transactionsOf(p, mine), [])
})

test('transfers - an internal payment beyond available (amount plus fee) is 400 on amount; the key may be used again', async () => {
  const { payer, payee, payeeNumber } = await pair(10_000)
  const body = internalBody(payer, payeeNumber, { amount: 10_001 })
  const before = await snapshot(p, payer)
  await expectRefusal(p.client.accounts.transferInternal(body), 'insufficient_funds', 'amount')
  assert.deepEqual(await snapshot(p, payer), before)
  assert.deepEqual(await transactionsOf(p, payee), [])
  await fund(tb, payer, 1)
  const sent = await p.client.accounts.transferInternal(body)
  assert.equal(sent.status, 'Successful')
  assert.deepEqual(await balances(p, payer), { balance: '0', available: '0' })
  assert.deepEqual(await balances(p, payee), { balance: '10001', available: '10001' })
})

test('transfers - money held by a pending EFT cannot be paid internally', async () => {
  const { payer, payeeNumber } = await pair(10_000)
  await p.client.accounts.transfer(transferBody(payer, { amount: 5_000 }))
  const left = 10_000 - 5_000 - eft_fee
  await expectRefusal(p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: left + 1 })), 'insufficient_funds', 'amount')
  const sent = await p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: left }))
  assert.equal(sent.status, 'Successful')
  assert.deepEqual(await balances(p, payer), { balance: String(10_000 - left), available: '0' })
})

test('transfers - a payee credited by an internal payment can spend the money at once', async () => {
  const { payer, payee, payeeNumber } = await pair(20_000)
  await p.client.accounts.transferInternal(internalBody(payer, payeeNumber, { amount: 20_000 }))
  const back = await p.client.accounts.transferInternal(
    internalBody(payee, await accountNumberOf(p, payer), { amount: 20_000 }))
  assert.equal(back.status, 'Successful')
  assert.deepEqual(await balances(p, payer), { balance: '20000', available: '20000' })
  assert.deepEqual(await balances(p, payee), { balance: '0', available: '0' })
})

test('transfers - the same clientTxId twice is 409 with the original tx_id and pays once', async () => {
  const { payer, payee, payeeNumber } = await pair(100_000)
  const body = internalBody(payer, payeeNumber, { amount: 1_000 })
  const first = await p.client.accounts.transferInternal(body)
  const before = { payer: await snapshot(p, payer), payee: await snapshot(p, payee) }
  await assertDuplicate(p.client.accounts.transferInternal(body), first.tx_id)
  await assertDuplicate(p.client.accounts.transferInternal(
    { ...body, clientTxId: body.clientTxId.toUpperCase() }), first.tx_id)
  await assertReused(p.client.accounts.transferInternal(
    { ...body, amount: 2_000, clientTxId: body.clientTxId.toUpperCase() }), first.tx_id,
  ['amount'])
  assert.deepEqual({ payer: await snapshot(p, payer), payee: await snapshot(p, payee) }, before)
})

test('transfers - internal payments and transfers share clientTxId keys, both ways', async () => {
  const { payer, payee, payeeNumber } = await pair(100_000)
  const clientTxId = randomUUID()
  const eft = await p.client.accounts.transfer(transferBody(payer, { clientTxId, amount: 1_000 }))
  // The key paid an EFT: an internal payment under it is another request.
  await assertReused(p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { clientTxId, amount: 1_000 })), eft.tx_id,
  ['clientTxId', 'ref', 'own_ref', 'name', 'account_number'])
  const otherKey = randomUUID()
  const internal = await p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { clientTxId: otherKey, amount: 500 }))
  await assertReused(p.client.accounts.transfer(
    transferBody(payer, { clientTxId: otherKey, pay_and_clear: true })), internal.tx_id,
  ['clientTxId', 'amount', 'ref', 'own_ref', 'name', 'account_number'])
  assert.deepEqual(await balances(p, payee), { balance: '500', available: '500' })
})

test('transfers - the same internal payment sent five times at once pays once; the others are 409 with its tx_id', async () => {
  const { payer, payee, payeeNumber } = await pair(100_000)
  const body = internalBody(payer, payeeNumber, { amount: 7_000 })
  const outcomes =
    await Promise.allSettled([1, 2, 3, 4, 5].map(() => p.client.accounts.transferInternal(body)))
  const accepted = outcomes.filter((o) => o.status === 'fulfilled')
  assert.equal(accepted.length, 1, JSON.stringify(outcomes))
  const txId = (accepted[0] as PromiseFulfilledResult<{ tx_id: string }>).value.tx_id
  for (const o of outcomes) {
    if (o.status === 'rejected') await assertDuplicate(Promise.reject(o.reason), txId)
  }
  assert.deepEqual(await balances(p, payer), { balance: '93000', available: '93000' })
  assert.deepEqual(await balances(p, payee), { balance: '7000', available: '7000' })
  assert.equal((await transactionsOf(p, payee)).length, 1)
})

test('transfers - internal payments both ways between two accounts at once all settle, and the sums hold', async () => {
  // Both accounts are locked by every payment; batches lock in id order, so opposite
  // directions at once must neither deadlock nor lose a posting.
  const a = await newAccount(p)
  const b = await newAccount(other)
  await fund(tb, a, 100_000)
  await fund(tb, b, 100_000)
  const [numberA, numberB] = [await accountNumberOf(p, a), await accountNumberOf(other, b)]
  const sends = []
  for (let i = 0; i < 20; i++) {
    sends.push(p.client.accounts.transferInternal(internalBody(a, numberB, { amount: 1_000 + i })))
    sends.push(other.client.accounts.transferInternal(internalBody(b, numberA, { amount: 2_000 })))
  }
  const results = await Promise.all(sends)
  assert.ok(results.every((r) => r.status === 'Successful'))
  const aToB = Array.from({ length: 20 }, (_, i) => 1_000 + i).reduce((x, y) => x + y, 0)
  const bToA = 20 * 2_000
  assert.equal((await balances(p, a)).balance, String(100_000 - aToB + bToA))
  assert.equal((await balances(other, b)).balance, String(100_000 + aToB - bToA))
  assert.equal((await transactionsOf(p, a)).length, 41)
  await assertLedgerClean(tb)
})

test('transfers - an internal payment below 100 cents is 400 on amount', async () => {
  const { payer, payeeNumber } = await pair(10_000)
  await expectRefusal(p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: 99 })), 400, 'amount')
  const sent = await p.client.accounts.transferInternal(internalBody(payer, payeeNumber,
    { amount: 100 }))
  assert.equal(sent.amount, '100')
})

test('transfers - a request without a required field is 400 naming it; an unknown field and branch_code are 400', async () => {
  const { payer, payeeNumber } = await pair(10_000)
  const body = internalBody(payer, payeeNumber) as unknown as Record<string, unknown>
  for (const field of ['account_id', 'clientTxId', 'amount', 'ref', 'own_ref', 'account_number',
      'name']) {
    const copy = { ...body }
    delete copy[field]
    const error = await expectRefusal(p.client.accounts.transferInternal(copy as never), 400, field)
    assert.equal((error.details as Array<{ field: string; message: string }>).find(
      (d) => d.field === field)?.message, 'is required')
  }
  // An internal payment names no branch and no rail: those are a transfer's fields.
  for (const extra of [{ branch_code: '250655' }, { pay_and_clear: true }]) {
    await expectRefusal(p.client.accounts.transferInternal({ ...body, ...extra } as never), 400,
      Object.keys(extra)[0])
  }
})

// Limits: instant, so the RTC's (docs/guides/payments.md).

/** One account rich enough for every limit test; the payee is another of the partner's. */
async function limitPair() {
  const pairOf = await pair(0)
  await fund(tb, pairOf.payer, 2_000_000_000)
  return (amount: number) => p.client.accounts.transferInternal(
    internalBody(pairOf.payer, pairOf.payeeNumber, { amount }))
}

async function assertOverLimit(call: Promise<unknown>, wording: RegExp): Promise<void> {
  const error = await expectRefusal(call, 'limit_exceeded', 'amount')
  assert.match(error.message, wording)
}

test('transfers - internal at R5,000,000 is accepted at 10:00 SAST on a business day; one cent more is 400', async () => {
  const send = await limitPair()
  tb.clock.set(start)
  await assertOverLimit(send(high_max + 1), /an internal payment is at most 500000000 cents/)
  assert.equal((await send(high_max)).status, 'Successful')
})

test('transfers - internal above R250,000 is allowed until 15:59:59.999 SAST and refused from 16:00 SAST', async () => {
  const send = await limitPair()
  tb.clock.set('2026-11-23T13:59:59.999Z')
  assert.equal((await send(low_max + 1)).status, 'Successful')
  for (const hhmm of ['16:00', '23:59']) {
    tb.clock.set(sast('2026-11-23', hhmm))
    await assertOverLimit(send(low_max + 1), /outside business days 00:00-16:00 SAST is at most 25000000 cents/)
    assert.equal((await send(low_max)).status, 'Successful', `R250,000 at ${hhmm}`)
  }
  tb.clock.set(sast('2026-11-24', '00:00'))
  assert.equal((await send(low_max + 1)).status, 'Successful',
    'the high limit returns at 00:00 SAST on a business day')
})

test('transfers - internal above R250,000 on a weekend or a public holiday is 400; R250,000 is allowed', async () => {
  const send = await limitPair()
  // Friday 22:30 UTC is Saturday 00:30 SAST; 2026-12-16 is the Day of Reconciliation.
  for (const at of ['2026-11-27T22:30:00Z', sast('2026-11-29', '10:00'),
      sast('2026-12-16', '10:00')]) {
    tb.clock.set(at)
    await assertOverLimit(send(low_max + 1), /outside business days/)
    assert.equal((await send(low_max)).status, 'Successful', at)
  }
  tb.clock.set(sast('2026-12-17', '10:00'))
  assert.equal((await send(low_max + 1)).status, 'Successful')
})

test('transfers - a refused internal payment over the limit claims no key and moves nothing', async () => {
  const { payer, payee, payeeNumber } = await pair(0)
  await fund(tb, payer, 30_000_000)
  tb.clock.set(sast('2026-12-19', '10:00'))
  const body = internalBody(payer, payeeNumber, { amount: low_max + 1 })
  const before = await snapshot(p, payer)
  await expectRefusal(p.client.accounts.transferInternal(body), 'limit_exceeded', 'amount')
  assert.deepEqual(await snapshot(p, payer), before)
  assert.deepEqual(await transactionsOf(p, payee), [])
  tb.clock.set(sast('2026-12-21', '10:00'))
  assert.equal((await p.client.accounts.transferInternal(body)).status, 'Successful',
    'the same key on Monday')
})

test('transfers - the internal reply on the wire is exactly {tx_id, amount}; Bank-Tx-Status carries Successful', async () => {
  tb.clock.set(start)
  const { payer, payeeNumber } = await pair(10_000)
  const body = internalBody(payer, payeeNumber, { amount: 4_000 })
  const reply = await rawRequest(tb, `svc.account.${p.partnerId}.transfer_internal`,
    JSON.stringify(body), { token: p.token })
  assert.equal(reply.code, 200)
  assert.deepEqual(Object.keys(reply.body).sort(), ['amount', 'tx_id'])
  assert.equal(reply.body.amount, '4000')
  assert.equal(reply.headers['Bank-Tx-Status'], 'Successful')
})

test('transfers - a duplicate internal payment is refused on the wire with the original tx_id in details', async () => {
  const { payer, payeeNumber } = await pair(10_000)
  const body = internalBody(payer, payeeNumber)
  const subject = `svc.account.${p.partnerId}.transfer_internal`
  const first = await rawRequest(tb, subject, JSON.stringify(body), { token: p.token })
  const again = await rawRequest(tb, subject, JSON.stringify(body), { token: p.token })
  assert.equal(again.code, 409)
  assert.equal(again.body.error.details[0].tx_id, first.body.tx_id)
  assert.equal(again.headers['Bank-Tx-Status'], undefined,
    'an error reply carries no payment status')
})

test('transfers - a credential without the payments permission cannot pay internally', async () => {
  const { payer, payeeNumber } = await pair(10_000)
  const reader = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const reply = await rawRequest(tb, `svc.account.${p.partnerId}.transfer_internal`,
      JSON.stringify(internalBody(payer, payeeNumber)), {
    token: reader.token,
  })
  assert.equal(reply.code, 403)
  assert.deepEqual(await balances(p, payer), { balance: '10000', available: '10000' })
})

test('transfers - the ledger verifies clean after internal payments', async () => {
  const report = await assertLedgerClean(tb)
  assert.ok(report.transactions_checked > 0)
})
