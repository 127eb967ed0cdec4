import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { OperatorClient } from '../../src/client/index.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner, secondOperator } from '../support/harness.ts'
import {
  accountNumberOf, balances, fund, internalBody, magic, newAccount, sast, transactionsOf,
  transferBody, txById,
} from '../transfers/helpers.ts'
import { batchBody, otpOf, payment } from '../bulk/helpers.ts'
import { cardOnNewAccount } from '../cards/rule-helpers.ts'
import { activeMandate, orderBody } from '../debit/helpers.ts'
import { toSast } from '../../src/calendar/sa-calendar.ts'

// Legal holds and closure end to end (src/account-status/legal-hold-service.ts,
// account-closure.ts; src/ledger/legal-holds.ts): a hold lowers the available balance and
// nothing else, `ledger verify` accounts for it, its release waits for a second operator
// above the threshold, an expired one is released by the bank; a closure names every
// obstacle, pays the balance out in the same request, cancels the account's cards and the
// debit orders (and, for the customer's last account, the mandates), and an incoming payment
// to the closed account is sent back. A verified bulk batch not yet completed keeps the
// account open; money that comes back after the close (a returned payout, a failed closing
// EFT) is the bank's unclaimed funds, never the closed account's, until an operator pays it
// to another account of the customer.

const threshold = 500_000
const tb = useTestBank({ env: { BANK_DUAL_CONTROL_CENTS: String(threshold),
  BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let other: TestPartner
let checker: OperatorClient

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  checker = (await secondOperator(tb)).client
})

/** An account funded by deposits each within the dual-control threshold. */
async function fundedAccount(cents = 1_000_000): Promise<string> {
  const account = await newAccount(p)
  for (let left = cents; left > 0; left -= threshold) {
    await fund(tb, account, Math.min(left, threshold))
  }
  return account
}

async function eventTypes(accountId: string): Promise<string[]> {
  const rows = await tb.bank.database.db.selectFrom('events').select('type')
    .where('resource_id', '=', accountId).orderBy('seq').execute()
  return rows.map((r) => r.type)
}

test('legal holds - a hold lowers the available balance only; payouts cannot touch it; the status lists it; ledger verify agrees; a release gives it back', async () => {
  const account = await fundedAccount(100_000)
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 60_000,
    reference: 'Garnishee 2026/118' })
  assert.deepEqual([hold.amount, hold.reference, hold.released_at], ['60000', 'Garnishee 2026/118',
    null])
  assert.deepEqual(await balances(p, account), { balance: '100000', available: '40000' })
  const status = await p.client.accounts.status({ account_id: account })
  assert.deepEqual(status.holds.map((h) => [h.hold_id, h.amount, h.reference]),
    [[hold.hold_id, '60000', 'Garnishee 2026/118']])
  assert.equal(status.status, 'active', 'a hold is not a status')
  const today = toSast(tb.clock.now()).date
  const statement = await p.client.accounts.statement({ account_id: account, from: today,
    to: today, format: 'camt053' })
  assert.equal(statement.totals?.held_at_end, '60000', 'a statement counts the hold as held')
  await assertLedgerClean(tb)

  // 50,000 + fee is more than the 40,000 available: refused, nothing held.
  const refused = await expectApiError(p.client.accounts.transfer(transferBody(account,
    { amount: 50_000 })), 400)
  assert.match(refused.message, /insufficient/i)
  // A hold beyond what is available is refused and changes nothing.
  const beyond = await expectApiError(tb.operator.accounts.placeHold({ account_id: account,
    amount: 40_001, reference: 'Too much' }), 422)
  assert.match(beyond.message, /40000 cents available/)
  assert.deepEqual(await balances(p, account), { balance: '100000', available: '40000' })

  const released = await tb.operator.accounts.releaseHold({ hold_id: hold.hold_id,
    reason: 'Order withdrawn' })
  assert.equal(released.status, 'released')
  assert.equal(released.hold.release_reason, 'Order withdrawn')
  assert.deepEqual(await balances(p, account), { balance: '100000', available: '100000' })
  assert.deepEqual((await p.client.accounts.status({ account_id: account })).holds, [])
  const all = await tb.operator.accounts.holds({ account_id: account, all: true })
  assert.equal(all.holds.length, 1)
  assert.deepEqual((await tb.operator.accounts.holds({ account_id: account })).holds, [])
  const again = await tb.operator.accounts.releaseHold({ hold_id: hold.hold_id, reason: 'again' })
  assert.deepEqual([again.status, again.hold.release_reason, again.hold.released_at],
    ['released', 'Order withdrawn', released.hold.released_at], 'a retry changes nothing')
  const types = await eventTypes(account)
  assert.deepEqual(types.filter((t) => t.startsWith('account.hold')),
    ['account.hold_placed', 'account.hold_released'])
  await assertLedgerClean(tb)
})

test('legal holds - above the threshold a release waits for a second operator; the requester cannot approve it; on approval the money is available', async () => {
  const account = await fundedAccount(1_500_000)
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 600_000,
    reference: 'Court order 55' })
  const asked = await tb.operator.accounts.releaseHold({ hold_id: hold.hold_id,
    reason: 'Paid' })
  assert.equal(asked.status, 'pending_approval')
  assert.ok(asked.approval_id)
  assert.deepEqual(await balances(p, account), { balance: '1500000', available: '900000' })
  await expectApiError(tb.operator.approvals.approve({ approval_id: asked.approval_id! }), 403)
  const approved = await checker.approvals.approve({ approval_id: asked.approval_id! })
  assert.deepEqual([approved.kind, approved.state, approved.tx_id],
    ['hold_release', 'approved', null])
  assert.deepEqual(await balances(p, account), { balance: '1500000', available: '1500000' })
  const [row] = (await tb.operator.accounts.holds({ account_id: account, all: true })).holds
  assert.equal(row?.release_reason, 'Paid')
  await assertLedgerClean(tb)
})

test('legal holds - a hold past its expiry is released by the bank within the hour; bad input is a 400 and another partner cannot see holds', async () => {
  const account = await fundedAccount(10_000)
  const expires = new Date(tb.clock.now().getTime() + 30 * 60_000).toISOString()
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 10_000,
    reference: 'Preservation order', expires_at: expires })
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '0' })
  await tb.bank.services.jobRunner.runDue()
  assert.equal((await tb.operator.accounts.holds({ account_id: account })).holds.length, 1)
  tb.clock.advance(90 * 60_000)
  await tb.bank.services.jobRunner.runDue()
  const [row] = (await tb.operator.accounts.holds({ account_id: account, all: true })).holds
  assert.deepEqual([row?.hold_id, row?.released_by, row?.release_reason],
    [hold.hold_id, 'system', 'expired'])
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '10000' })

  for (const bad of [{ amount: 0 }, { amount: 1.5 }, { amount: '100' }, { reference: '' },
    { expires_at: '2020-01-01T00:00:00Z' }, { expires_at: 'tomorrow' }, { extra: 1 }]) {
    await expectApiError(tb.operator.accounts.placeHold({ account_id: account, amount: 100,
      reference: 'x', ...bad } as never), 400)
  }
  await expectApiError(tb.operator.accounts.placeHold({ account_id: crypto.randomUUID(),
    amount: 100, reference: 'x' }), 404)
  assert.deepEqual((await other.client.accounts.status({ account_id: account })
    .catch((e: { code: number }) => e.code)), 404)
  await assertLedgerClean(tb)
})

test('closure - refused while anything stands in the way, naming each obstacle; nothing changes', async () => {
  const account = await fundedAccount(300_000)
  await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  const hold = await tb.operator.accounts.placeHold({ account_id: account, amount: 1_000,
    reference: 'Order 9' })
  const refused = await expectApiError(p.client.accounts.close({ account_id: account,
    reason: 'Customer leaves' }), 422)
  assert.equal(refused.type, 'account_not_closable')
  const obstacles = (refused.details as Array<{ obstacle: string }>).map((d) => d.obstacle)
  assert.deepEqual(obstacles, ['pending_transactions', 'legal_holds', 'payout_missing'])
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')

  // Paying to another partner's account, or to itself, is refused too.
  const elsewhere = await newAccountOf(other)
  for (const to of [elsewhere, account]) {
    const wrong = await expectApiError(tb.operator.accounts.close({ account_id: account,
      reason: 'x', pay_to_account_id: to }), 422)
    assert.ok((wrong.details as Array<{ obstacle: string }>).some((d) =>
      d.obstacle === 'payout_refused'))
  }
  await expectApiError(p.client.accounts.close({ account_id: account, reason: 'x',
    pay_to_account_id: elsewhere, pay_by_eft: { account_number: '123456789', branch_code:
      '250655', name: 'A', ref: 'B' } }), 400)
  await expectApiError(other.client.accounts.close({ account_id: account, reason: 'x' }), 404)
  await tb.operator.accounts.releaseHold({ hold_id: hold.hold_id, reason: 'done' })
  await assertLedgerClean(tb)
})

async function newAccountOf(partner: TestPartner): Promise<string> {
  return (await partner.client.accounts.create({ entity_id: partner.rootEntityId })).account_id
}

test('closure - the balance goes to another account of the customer in the same request; the cards are cancelled; credits to it are sent back (AC04); a second close answers the same', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, {}, 250_000)
  const keep = await newAccount(p)
  const closed = await p.client.accounts.close({ account_id: s.accountId,
    reason: 'Customer leaves', pay_to_account_id: keep })
  assert.equal(closed.status, 'closed')
  assert.deepEqual([closed.payout?.amount, closed.payout?.payment_type, closed.payout?.status],
    ['250000', 'INTERNAL', 'Successful'])
  assert.deepEqual(await balances(p, s.accountId), { balance: '0', available: '0' })
  assert.deepEqual(await balances(p, keep), { balance: '250000', available: '250000' })
  const [paid] = await transactionsOf(p, s.accountId)
  assert.equal(paid?.fee, '0', 'a closure pays out without a fee')

  const { cards } = await p.client.cards.list({ entity_id: s.entityId, account_id: s.accountId })
  assert.deepEqual(cards.map((c) => [c.id, c.status]), [[cardId, 'cancelled']])

  const number = await accountNumberOf(p, s.accountId)
  const incoming = await tb.operator.sandbox.incoming({ account_number: number, amount: 500 })
  assert.equal(incoming.status, 'returned')
  const internalIn = await expectApiError(p.client.accounts.transferInternal(
    internalBody(keep, number, { amount: 500 })), 422)
  assert.equal(internalIn.type, 'account_not_active')
  const out = await expectApiError(p.client.accounts.transfer(transferBody(s.accountId)), 422)
  assert.equal(out.type, 'account_not_active')
  const deposit = await expectApiError(tb.operator.accounts.deposit({ account_id: s.accountId,
    amount: 100 }), 422)
  assert.equal(deposit.type, 'account_not_active')
  const again = await p.client.accounts.close({ account_id: s.accountId, reason: 'again' })
  assert.deepEqual([again.status, again.reason, again.payout], ['closed', 'Customer leaves', null])
  await expectApiError(tb.operator.accounts.reactivate({ account_id: s.accountId,
    reason: 'x' }), 422)
  await expectApiError(tb.operator.accounts.placeHold({ account_id: s.accountId, amount: 1,
    reference: 'x' }), 422)
  const changes = (await eventTypes(s.accountId)).filter((t) => t === 'account.status_changed')
  assert.equal(changes.length, 1)
  await assertLedgerClean(tb)
})

test('closure - a partner cannot close an account the bank froze or blocked; the bank can, by EFT, and the customer\'s last open account takes its debit orders and mandates with it', async () => {
  const q = await onboardPartner(tb, { approve: true })
  const { accounts } = await q.client.accounts.getByEntity({ entity_id: q.rootEntityId })
  const pool = accounts[0]!.account_id
  await fund(tb, pool, 80_000)
  const mandate = await activeMandate(tb, q, q.rootEntityId)
  const order = await q.client.debitOrders.create(orderBody(q.rootEntityId, mandate))
  await tb.operator.accounts.freeze({ account_id: pool, reason: 'Court order' })
  await expectApiError(q.client.accounts.close({ account_id: pool, reason: 'x',
    pay_by_eft: { account_number: '123456789', branch_code: '250655', name: 'Ann',
      ref: 'Closing' } }), 403)

  const closed = await tb.operator.accounts.close({ account_id: pool, reason: 'Deceased',
    pay_by_eft: { account_number: '123456789', branch_code: '250655', name: 'Estate late A',
      ref: 'Closing' } })
  assert.deepEqual([closed.status, closed.payout?.payment_type, closed.payout?.status,
    closed.payout?.amount], ['closed', 'EFT', 'Pending', '80000'])
  assert.deepEqual(await balances(q, pool), { balance: '80000', available: '0' },
    'the EFT holds the balance until it clears')
  const status = await q.client.debitOrders.status({ entity_id: q.rootEntityId,
    debit_order_id: order.debit_order_id })
  assert.equal(status.status, 'cancelled')
  const mandates = await q.client.mandates.list({ entity_id: q.rootEntityId })
  assert.deepEqual(mandates.mandates.map((m) => m.status), ['cancelled'])
  await assertLedgerClean(tb)
})

const runJobs = () => tb.bank.services.jobRunner.runDue()

/** Obstacles a refused close names. */
function obstaclesOf(error: { details: unknown[] }): string[] {
  return (error.details as Array<{ obstacle: string }>).map((d) => d.obstacle)
}

test('closure - a verified bulk batch not yet paid is a pending transaction: the close is refused until it completes; its refund then comes back to the open account', async () => {
  const account = await fundedAccount(100_000)
  const keep = await newAccount(p)
  const fees = tb.config.fees
  const payments = [payment(1, { real_time: true, amount: 2_000 }),
    payment(2, { real_time: true, amount: 3_000, account_number: magic.failed })]
  const body = batchBody(p.rootEntityId, payments, { account_id: account })
  await p.client.bulkPayments.initiate(body)
  const ref = { entity_id: p.rootEntityId, bulk_payment_id: body.bulk_payment_id }
  const verified = await p.client.bulkPayments.verify({ ...ref,
    otp: await otpOf(tb, p, body.bulk_payment_id) })
  assert.equal(verified.status, 'processing')
  // Verified: its funding row is Successful, and no payment has a row yet (its job has not run).
  const pending = (await transactionsOf(p, account)).filter((t) => t.status === 'Pending')
  assert.deepEqual(pending, [])
  const funded = 100_000 - 5_000 - 2 * Number(fees.RTC)
  assert.deepEqual(await balances(p, account), { balance: String(funded),
    available: String(funded) })
  const refused = await expectApiError(p.client.accounts.close({ account_id: account,
    reason: 'Customer leaves', pay_to_account_id: keep }), 422)
  assert.equal(refused.type, 'account_not_closable')
  assert.deepEqual(obstaclesOf(refused), ['pending_transactions'])
  assert.match(refused.message, /1 verified bulk batch not yet paid/)
  const byOperator = await expectApiError(tb.operator.accounts.close({ account_id: account,
    reason: 'Bank closes it', pay_to_account_id: keep }), 422)
  assert.deepEqual(obstaclesOf(byOperator), ['pending_transactions'])
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')

  // The job pays the batch: the second payment fails and is refunded, amount and fee, to the
  // account while it is still open; then the close is taken with everything it has.
  await runJobs()
  const status = await p.client.bulkPayments.status(ref)
  assert.equal(status.status, 'completed')
  const refund = (await transactionsOf(p, account)).find((t) => t.tx_type === 'refund')
  assert.equal(refund?.credit, String(3_000 + Number(fees.RTC)))
  const left = funded + 3_000 + Number(fees.RTC)
  const closed = await p.client.accounts.close({ account_id: account, reason: 'Customer leaves',
    pay_to_account_id: keep })
  assert.deepEqual([closed.status, closed.payout?.amount], ['closed', String(left)])
  assert.deepEqual(await balances(p, keep), { balance: String(left), available: String(left) })
  await assertLedgerClean(tb)
})

test('closure - a payout returned after the account closed does not touch it: the payout is Reversed, the money is the bank\'s unclaimed funds until an operator pays it to another account of the customer', async () => {
  const account = await fundedAccount(100_000)
  const keep = await newAccount(p)
  const fee = Number(tb.config.fees.RTC)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 30_000,
    pay_and_clear: true, account_number: magic.returned }))
  assert.equal(sent.status, 'Successful')
  const left = 100_000 - 30_000 - fee
  // A successful payout that may still be returned is no obstacle.
  const closed = await p.client.accounts.close({ account_id: account, reason: 'Customer leaves',
    pay_to_account_id: keep })
  assert.deepEqual([closed.status, closed.payout?.amount], ['closed', String(left)])
  const rowsBefore = await transactionsOf(p, account)

  // The recipient's bank sends it back with the next clearing run.
  const report = await tb.operator.clearing.run({})
  assert.equal(report.returned, 1)
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  const rows = await transactionsOf(p, account)
  assert.equal(rows.length, rowsBefore.length, 'no row is added to the closed account')
  const payout = rows.find((t) => t.tx_id === sent.tx_id)!
  assert.equal(payout.status, 'Reversed')
  const { status_reason } = await tb.bank.database.db.selectFrom('transactions')
    .select('status_reason').where('id', '=', sent.tx_id).executeTakeFirstOrThrow()
  assert.match(status_reason ?? '', /account is closed.*unclaimed funds/)
  assert.deepEqual(await balances(p, keep), { balance: String(left), available: String(left) },
    'the closure\'s payee gets nothing by itself')
  const report1 = await assertLedgerClean(tb)
  assert.ok(BigInt(report1.internal_balances.unclaimed_funds ?? '0') >= 30_000n)

  const { unclaimed } = await tb.operator.accounts.unclaimed({ account_id: account })
  assert.deepEqual(unclaimed.map((u) => [u.tx_id, u.account_id, u.entity_id, u.amount,
    u.payment_type]), [[sent.tx_id, account, p.rootEntityId, '30000', 'RTC']])
  const all = await tb.operator.accounts.unclaimed({})
  assert.ok(all.unclaimed.some((u) => u.tx_id === sent.tx_id))

  await payUnclaimed(sent.tx_id, account, keep, left)
})

/**
 * An operator pays the unclaimed 30,000 of `txId` (of the closed `account`) to `keep`, which
 * had `had`: only to another account of the same customer, once.
 */
async function payUnclaimed(txId: string, account: string, keep: string,
    had: number): Promise<void> {
  const elsewhere = await newAccountOf(other)
  for (const to of [elsewhere, account]) {
    await expectApiError(tb.operator.accounts.payUnclaimed({ tx_id: txId,
      pay_to_account_id: to, reason: 'x' }), 400)
  }
  const paid = await tb.operator.accounts.payUnclaimed({ tx_id: txId,
    pay_to_account_id: keep, reason: 'Customer asked, ticket 77' })
  assert.deepEqual([paid.status, paid.approval_id, paid.amount, paid.pay_to_account_id,
    paid.paid.tx_id], ['paid', null, '30000', keep, txId])
  const total = had + 30_000
  assert.deepEqual(await balances(p, keep), { balance: String(total), available: String(total) })
  const credit = (await transactionsOf(p, keep)).find((t) => t.tx_id === paid.tx_id)!
  assert.deepEqual([credit.tx_type, credit.parent_tx_id, credit.credit, credit.status],
    ['reversal', txId, '30000', 'Successful'])
  assert.deepEqual((await tb.operator.accounts.unclaimed({ account_id: account })).unclaimed, [])
  await expectApiError(tb.operator.accounts.payUnclaimed({ tx_id: txId,
    pay_to_account_id: keep, reason: 'again' }), 404)
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  await assertLedgerClean(tb)
}

test('closure - the EFT of the closing balance fails: the money goes to unclaimed funds and the closed account is back at 0; a card refund to it is refused', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p, {}, 40_000)
  const closed = await tb.operator.accounts.close({ account_id: s.accountId, reason: 'Deceased',
    pay_by_eft: { account_number: magic.failed, branch_code: '250655', name: 'Estate late B',
      ref: 'Closing' } })
  assert.deepEqual([closed.payout?.payment_type, closed.payout?.status], ['EFT', 'Pending'])
  await tb.operator.clearing.run({})
  assert.deepEqual(await balances(p, s.accountId), { balance: '0', available: '0' })
  const rows = await transactionsOf(p, s.accountId)
  assert.equal(rows.find((t) => t.tx_id === closed.payout!.tx_id)?.status, 'Failed')
  const moved = rows.find((t) => t.parent_tx_id === closed.payout!.tx_id)!
  assert.deepEqual([moved.debit, moved.status], ['40000', 'Successful'])
  const { unclaimed } = await tb.operator.accounts.unclaimed({ account_id: s.accountId })
  assert.deepEqual(unclaimed.map((u) => [u.tx_id, u.amount]), [[closed.payout!.tx_id, '40000']])

  const refund = await expectApiError(tb.operator.cardNetwork.refund({ card_id: cardId,
    amount: 500, merchant_name: 'Late Shop' }), 422)
  assert.equal(refund.type, 'account_not_active')
  assert.deepEqual(await balances(p, s.accountId), { balance: '0', available: '0' })
  await assertLedgerClean(tb)
})

test('closure - a blocked account takes back its own returned payout (nothing leaves it while blocked); incoming payments to it are still sent back (AC06)', async () => {
  const account = await fundedAccount(50_000)
  const fee = Number(tb.config.fees.RTC)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 10_000,
    pay_and_clear: true, account_number: magic.returned }))
  await tb.operator.accounts.block({ account_id: account, reason: 'Fraud review' })
  await tb.operator.clearing.run({})
  assert.equal((await txById(p, sent.tx_id)).status, 'Reversed')
  assert.deepEqual(await balances(p, account), { balance: String(50_000 - fee),
    available: String(50_000 - fee) })
  const incoming = await tb.operator.sandbox.incoming({
    account_number: await accountNumberOf(p, account), amount: 500 })
  assert.equal(incoming.status, 'returned')
  assert.deepEqual((await tb.operator.accounts.unclaimed({ account_id: account })).unclaimed, [])
  await assertLedgerClean(tb)
})

test('closure - above the dual-control threshold unclaimed funds are paid only once a second operator approves; the requester cannot', async () => {
  const account = await fundedAccount(1_000_000)
  const keep = await newAccount(p)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 600_000,
    pay_and_clear: true, account_number: magic.returned }))
  const left = 1_000_000 - 600_000 - Number(tb.config.fees.RTC)
  await p.client.accounts.close({ account_id: account, reason: 'Customer leaves',
    pay_to_account_id: keep })
  assert.equal((await tb.operator.clearing.run({})).returned, 1)

  const asked = await tb.operator.accounts.payUnclaimed({ tx_id: sent.tx_id,
    pay_to_account_id: keep, reason: 'Customer asked, ticket 78' })
  assert.deepEqual([asked.status, asked.tx_id, asked.amount], ['pending_approval', null, '600000'])
  assert.ok(asked.approval_id)
  assert.deepEqual(await balances(p, keep), { balance: String(left), available: String(left) },
    'nothing moves before the approval')
  assert.equal((await tb.operator.accounts.unclaimed({ account_id: account })).unclaimed.length, 1)
  await expectApiError(tb.operator.approvals.approve({ approval_id: asked.approval_id! }), 403)

  const approved = await checker.approvals.approve({ approval_id: asked.approval_id! })
  assert.deepEqual([approved.kind, approved.state], ['unclaimed_pay', 'approved'])
  const total = left + 600_000
  assert.deepEqual(await balances(p, keep), { balance: String(total), available: String(total) })
  const credit = (await transactionsOf(p, keep)).find((t) => t.tx_id === approved.tx_id)!
  assert.deepEqual([credit.tx_type, credit.parent_tx_id, credit.credit],
    ['reversal', sent.tx_id, '600000'])
  assert.deepEqual((await tb.operator.accounts.unclaimed({ account_id: account })).unclaimed, [])
  await assertLedgerClean(tb)
})
