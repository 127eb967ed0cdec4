import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { expectApiError, expectRefusal, assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import {
  accountNumberOf, balances, fund, internalBody, newAccount, transferBody,
} from '../transfers/helpers.ts'
import { cardOnNewAccount, expectApproved, expectDecline } from '../cards/rule-helpers.ts'
import { purchase } from '../cards/helpers.ts'
import { batchBody, payment } from '../bulk/helpers.ts'

// An account's status end to end (src/account-status/, src/ledger/account-status.ts): what
// each status lets through, operation by operation (payouts, internal payments out and in,
// card authorizations, bulk batches, incoming credits), who may change it (a partner's
// freeze and unfreeze, the bank's freeze that the partner cannot lift, the bank's block and
// reactivation), what a partner sees (the status subject, the Account-Status header, the
// account.status_changed event), and a freeze racing 50 payouts: none is taken after it.

const tb = useTestBank()
let p: TestPartner
let other: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

const db = () => tb.bank.database.db

async function fundedAccount(cents = 1_000_000): Promise<string> {
  const account = await newAccount(p)
  await fund(tb, account, cents)
  return account
}

async function eventsOf(accountId: string) {
  return db().selectFrom('events').select(['type', 'data']).where('resource_id', '=', accountId)
    .where('type', '=', 'account.status_changed').orderBy('seq').execute()
}

test('account status - a partner freezes its account: debits are refused (account_not_active), credits still arrive; the status, header and event say so; unfreezing lets debits through again', async () => {
  const account = await fundedAccount()
  const payee = await fundedAccount(1_000)
  const fresh = await p.client.accounts.status({ account_id: account })
  assert.deepEqual([fresh.status, fresh.reason, fresh.changed_by, fresh.changed_at, fresh.holds],
    ['active', null, null, null, []])

  const frozen = await p.client.accounts.freeze({ account_id: account, reason: 'Fraud report 17' })
  assert.deepEqual([frozen.status, frozen.reason, frozen.changed_by],
    ['frozen', 'Fraud report 17', 'partner'])
  const details = await p.client.accounts.getDetails({ account_id: account })
  assert.equal((details as { status?: string }).status, 'frozen', 'the Account-Status header')

  const before = await balances(p, account)
  const eft = await expectRefusal(p.client.accounts.transfer(transferBody(account)), 422)
  assert.equal(eft.type, 'account_not_active')
  assert.match(eft.message, /frozen/)
  const payeeNumber = await accountNumberOf(p, payee)
  const out = await expectApiError(p.client.accounts.transferInternal(
    internalBody(account, payeeNumber)), 422)
  assert.equal(out.type, 'account_not_active')
  assert.deepEqual(await balances(p, account), before, 'nothing held or moved')

  // Credits arrive: an internal payment in, and another bank's credit.
  await p.client.accounts.transferInternal(internalBody(payee, await accountNumberOf(p, account),
    { amount: 500 }))
  const incoming = await tb.operator.sandbox.incoming({
    account_number: await accountNumberOf(p, account), amount: 700 })
  assert.equal(incoming.status, 'credited')
  assert.deepEqual(await balances(p, account),
    { balance: String(1_000_000 + 500 + 700), available: String(1_000_000 + 500 + 700) })

  // Again: nothing changes, and nothing is announced twice.
  const again = await p.client.accounts.freeze({ account_id: account, reason: 'again' })
  assert.equal(again.reason, 'Fraud report 17')
  const unfrozen = await p.client.accounts.unfreeze({ account_id: account, reason: 'Cleared' })
  assert.equal(unfrozen.status, 'active')
  const paid = await p.client.accounts.transfer(transferBody(account))
  assert.equal(paid.status, 'Pending')
  const events = await eventsOf(account)
  assert.deepEqual(events.map((e) => [e.data.from, e.data.to, e.data.by, e.data.reason]), [
    ['active', 'frozen', 'partner', 'Fraud report 17'],
    ['frozen', 'active', 'partner', 'Cleared'],
  ])
  await assertLedgerClean(tb)
})

test('account status - a frozen account declines card authorizations (account_frozen) and refuses a bulk batch; unfrozen, both go through', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  await p.client.accounts.freeze({ account_id: s.accountId, reason: 'Lost phone' })
  await expectDecline(tb, p, s.accountId, purchase(cardId, 1_000), 'account_frozen')
  await p.client.accounts.unfreeze({ account_id: s.accountId, reason: 'Found it' })
  await expectApproved(tb, purchase(cardId, 1_000))

  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  const pool = accounts[0]!.account_id
  await fund(tb, pool, 100_000)
  await tb.operator.accounts.freeze({ account_id: pool, reason: 'Court order 2026/41' })
  const body = batchBody(p.rootEntityId, [payment(1), payment(2)])
  const refused = await expectApiError(p.client.bulkPayments.initiate(body), 422)
  assert.equal(refused.type, 'account_not_active')
  await tb.operator.accounts.unfreeze({ account_id: pool, reason: 'Order lifted' })
  await p.client.bulkPayments.initiate({ ...body, bulk_payment_id: `${body.bulk_payment_id}-2` })
})

test('account status - the bank\'s freeze cannot be lifted by the partner; a partner\'s freeze the bank repeats becomes the bank\'s', async () => {
  const account = await fundedAccount()
  await tb.operator.accounts.freeze({ account_id: account, reason: 'Subpoena' })
  const refused = await expectApiError(
    p.client.accounts.unfreeze({ account_id: account, reason: 'please' }), 403)
  assert.match(refused.message, /only the bank/)
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'frozen')
  await tb.operator.accounts.unfreeze({ account_id: account, reason: 'Done' })

  await p.client.accounts.freeze({ account_id: account, reason: 'Customer asked' })
  const taken = await tb.operator.accounts.freeze({ account_id: account, reason: 'Bank review' })
  assert.deepEqual([taken.status, taken.changed_by], ['frozen', 'operator'])
  await expectApiError(p.client.accounts.unfreeze({ account_id: account, reason: 'x' }), 403)
})

test('account status - a blocked account sends incoming payments back (AC06) and refuses internal payments to it; reactivated, it takes both', async () => {
  const account = await fundedAccount(10_000)
  const number = await accountNumberOf(p, account)
  const payer = await fundedAccount()
  const blocked = await tb.operator.accounts.block({ account_id: account, reason: 'Deceased' })
  assert.equal(blocked.status, 'blocked')
  const back = await tb.operator.sandbox.incoming({ account_number: number, amount: 900 })
  assert.deepEqual([back.status, back.reason_code, back.tx_id], ['returned', 'AC06', null])
  const refused = await expectApiError(p.client.accounts.transferInternal(
    internalBody(payer, number)), 422)
  assert.equal(refused.type, 'account_not_active')
  assert.doesNotMatch(refused.message, /blocked/, 'a payee\'s status is not told')
  assert.deepEqual(await balances(p, account), { balance: '10000', available: '10000' })
  // A partner cannot unblock, nor freeze what is blocked.
  await expectApiError(p.client.accounts.unfreeze({ account_id: account, reason: 'x' }), 422)
  await expectApiError(p.client.accounts.freeze({ account_id: account, reason: 'x' }), 422)

  await tb.operator.accounts.reactivate({ account_id: account, reason: 'Estate settled' })
  const credited = await tb.operator.sandbox.incoming({ account_number: number, amount: 900 })
  assert.equal(credited.status, 'credited')
  await p.client.accounts.transferInternal(internalBody(payer, number))
  await assertLedgerClean(tb)
})

test('account status - another partner\'s account is not found, and bad input is a 400 naming the field that changes nothing', async () => {
  const account = await fundedAccount()
  await expectApiError(other.client.accounts.status({ account_id: account }), 404)
  await expectApiError(other.client.accounts.freeze({ account_id: account, reason: 'x' }), 404)
  for (const reason of ['', 'x'.repeat(201), 'a\u0000b']) {
    await expectRefusal(p.client.accounts.freeze({ account_id: account, reason }), 400, 'reason')
  }
  await expectRefusal(p.client.accounts.freeze({ account_id: 'nope', reason: 'x' }), 400,
    'account_id')
  await expectRefusal(p.client.accounts.freeze({ account_id: account } as never), 400, 'reason')
  assert.equal((await p.client.accounts.status({ account_id: account })).status, 'active')
  assert.deepEqual(await eventsOf(account), [])
})

test('account status - a freeze racing 50 payouts: each payout is taken before the freeze commits or refused after it, never after', async () => {
  const account = await fundedAccount(10_000_000)
  const payouts = Array.from({ length: 50 }, (_, i) =>
    p.client.accounts.transfer(transferBody(account, { amount: 1_000 + i }))
      .then((r) => ({ ok: true as const, tx_id: r.tx_id }),
        (error: { type?: string }) => ({ ok: false as const, type: error.type })))
  const freeze = p.client.accounts.freeze({ account_id: account, reason: 'Race' })
  const outcomes = await Promise.all(payouts)
  await freeze
  for (const o of outcomes) if (!o.ok) assert.equal(o.type, 'account_not_active')
  const change = await db().selectFrom('account_status_changes').select('account_seq')
    .where('account_id', '=', account).executeTakeFirstOrThrow()
  const rows = await db().selectFrom('transactions').select(['id', 'seq'])
    .where('account_id', '=', account).where('tx_type', '=', 'transfer').execute()
  const taken = outcomes.filter((o) => o.ok).map((o) => o.tx_id)
  assert.deepEqual(rows.map((r) => r.id).sort(), [...taken].sort(), 'every payout taken is booked')
  for (const row of rows) {
    assert.ok(BigInt(row.seq) <= BigInt(change.account_seq),
      `payout ${row.id} (seq ${row.seq}) was written before the freeze (${change.account_seq})`)
  }
  const late = await expectApiError(p.client.accounts.transfer(transferBody(account)), 422)
  assert.equal(late.type, 'account_not_active')
  await assertLedgerClean(tb)
})

test('account status - the daily job makes an account without customer activity for a year dormant (credits arrive, a debit needs an operator to reactivate it); one whose customer paid meanwhile stays active', async () => {
  const idle = await fundedAccount(50_000)
  const busy = await fundedAccount(50_000)
  tb.clock.advance(300 * 86_400_000)
  await p.client.accounts.transfer(transferBody(busy, { amount: 100 }))
  tb.clock.advance(66 * 86_400_000)
  await tb.bank.services.jobRunner.runDue()

  const status = await p.client.accounts.status({ account_id: idle })
  assert.deepEqual([status.status, status.changed_by, status.reason],
    ['dormant', 'system', 'no customer activity for 365 days'])
  assert.equal((await p.client.accounts.status({ account_id: busy })).status, 'active')
  const [event] = await eventsOf(idle)
  assert.deepEqual([event?.data.from, event?.data.to, event?.data.by],
    ['active', 'dormant', 'system'])

  const refused = await expectApiError(p.client.accounts.transfer(transferBody(idle)), 422)
  assert.equal(refused.type, 'account_not_active')
  assert.match(refused.message, /dormant/)
  const credit = await tb.operator.sandbox.incoming({
    account_number: await accountNumberOf(p, idle), amount: 300 })
  assert.equal(credit.status, 'credited')
  await expectApiError(p.client.accounts.unfreeze({ account_id: idle, reason: 'x' }), 422)
  await tb.operator.accounts.reactivate({ account_id: idle, reason: 'Customer came in' })
  assert.equal((await p.client.accounts.transfer(transferBody(idle))).status, 'Pending')
  await assertLedgerClean(tb)
})
