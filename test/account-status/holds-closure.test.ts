import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { OperatorClient } from '../../src/client/index.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  accountNumberOf, balances, fund, internalBody, newAccount, sast, transactionsOf, transferBody,
} from '../transfers/helpers.ts'
import { cardOnNewAccount } from '../cards/rule-helpers.ts'
import { activeMandate, orderBody } from '../debit/helpers.ts'
import { toSast } from '../../src/calendar/sa-calendar.ts'

// Legal holds and closure end to end (src/account-status/legal-hold-service.ts,
// account-closure.ts; src/ledger/legal-holds.ts): a hold lowers the available balance and
// nothing else, `ledger verify` accounts for it, its release waits for a second operator
// above the threshold, an expired one is released by the bank; a closure names every
// obstacle, pays the balance out in the same request, cancels the account's cards and the
// debit orders (and, for the customer's last account, the mandates), and an incoming payment
// to the closed account is sent back.

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
  const issued = await tb.bank.services.credentials.issue(tb.bank.database.db,
    { partnerId: null, permissions: [], label: 'checker' })
  checker = new OperatorClient({ connection: tb.nc, token: issued.token })
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
