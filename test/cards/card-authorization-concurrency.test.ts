import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { outcome } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, transactionsOf } from '../transfers/helpers.ts'
import { cardSetup, issueCard } from './helpers.ts'
import {
  cardOnNewAccount,
  ledgerClean,
  limits,
  purchase,
  type Authorization,
} from './rule-helpers.ts'

// Authorizations at once: on one card they never pass its daily limit or the account's
// available balance, on two cards of one account never the available balance; a clearing
// and a reversal of one authorization at once: one wins, the money moves once.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const attempts = 20
const amount = 3_000

/** Authorizes `amount` on each of `cardIds` at once: the approved, the declines' reasons. */
async function allAtOnce(cardIds: string[]) {
  const replies = await Promise.all(
    cardIds.map((cardId) => tb.operator.cardNetwork.authorize(purchase(cardId, amount))),
  )
  const approved = replies.filter((r) => r.approved)
  const reasons = new Set(replies.filter((r) => !r.approved).map((r) => r.decline_reason))
  return { approved, reasons }
}

async function cardRows(accountId: string) {
  return (await transactionsOf(p, accountId)).filter((t) => t.tx_payment_type === 'CARD')
}

test(`card authorization - ${attempts} authorizations at once on one card never pass its daily limit`, async () => {
  const daily = 10_000
  const { s, cardId } = await cardOnNewAccount(tb, p, { limits: limits({ daily }) })
  const before = await balances(p, s.accountId)
  const { approved, reasons } = await allAtOnce(Array.from({ length: attempts }, () => cardId))
  assert.equal(approved.length, Math.floor(daily / amount))
  assert.deepEqual([...reasons], ['limit_exceeded'])
  const after = await balances(p, s.accountId)
  assert.equal(after.balance, before.balance)
  assert.equal(BigInt(after.available), BigInt(before.available) - BigInt(approved.length * amount))
  assert.equal((await cardRows(s.accountId)).length, approved.length)
  await ledgerClean(tb)
})

test(`card authorization - ${attempts} authorizations at once on one card never pass the available balance`, async () => {
  const funds = 10_000
  const { s, cardId } = await cardOnNewAccount(tb, p, {}, funds)
  const { approved, reasons } = await allAtOnce(Array.from({ length: attempts }, () => cardId))
  assert.equal(approved.length, Math.floor(funds / amount))
  assert.deepEqual([...reasons], ['insufficient_funds'])
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(funds))
  assert.equal(BigInt(after.available), BigInt(funds - approved.length * amount))
  assert.equal((await cardRows(s.accountId)).length, approved.length)
  await ledgerClean(tb)
})

test(`card authorization - ${attempts} authorizations at once on two cards of one account never pass its available balance`, async () => {
  const funds = 10_000
  const s = await cardSetup(tb, p, funds)
  const first = await issueCard(p, s, { name: 'First card' })
  const second = await issueCard(p, s, { name: 'Second card' })
  const { approved, reasons } = await allAtOnce(
    Array.from({ length: attempts }, (_, i) => (i % 2 ? first : second)),
  )
  assert.equal(approved.length, Math.floor(funds / amount))
  assert.deepEqual([...reasons], ['insufficient_funds'])
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(funds))
  assert.equal(BigInt(after.available), BigInt(funds - approved.length * amount))
  assert.ok(BigInt(after.available) >= 0n)
  await ledgerClean(tb)
})

/** Clears and reverses `auth` at once; asserts one won and the other was refused (409). */
async function clearAndReverse(auth: Authorization) {
  const id = auth.authorization_id
  const [cleared, reversed] = await Promise.all([
    outcome(tb.operator.cardNetwork.clear({ authorization_id: id, amount: auth.amount })),
    outcome(tb.operator.cardNetwork.reverse({ authorization_id: id })),
  ])
  assert.equal([cleared, reversed].filter((o) => o.ok).length, 1, 'exactly one wins')
  const lost = cleared.ok ? reversed : cleared
  assert.equal(lost.ok ? 0 : lost.error.code, 409)
  return cleared.ok ? 'cleared' : 'reversed'
}

test('card authorization - a clearing and a reversal of one authorization at once: one wins, the money moves once', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  for (let round = 0; round < 6; round++) {
    const before = await balances(p, s.accountId)
    const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 2_000))
    assert.equal(auth.approved, true)
    const winner = await clearAndReverse(auth)
    const after = await balances(p, s.accountId)
    const moved = winner === 'cleared' ? 2_000n : 0n
    assert.equal(BigInt(after.balance), BigInt(before.balance) - moved)
    assert.equal(after.available, after.balance, 'nothing is left held')
    const row = (await transactionsOf(p, s.accountId)).find((t) => t.tx_id === auth.tx_id)
    assert.equal(row?.status, winner === 'cleared' ? 'Successful' : 'Reversed')
  }
  await ledgerClean(tb)
})

test('card authorization - the same clearing twice at once posts once', async () => {
  const { s, cardId } = await cardOnNewAccount(tb, p)
  const before = await balances(p, s.accountId)
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 4_000))
  const body = { authorization_id: auth.authorization_id, amount: 3_500 }
  const replies = await Promise.all([
    tb.operator.cardNetwork.clear(body),
    tb.operator.cardNetwork.clear(body),
  ])
  assert.deepEqual(
    replies.map((r) => [r.status, r.cleared]),
    [
      ['cleared', 3_500],
      ['cleared', 3_500],
    ],
  )
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(before.balance) - 3_500n)
  assert.equal(after.available, after.balance)
  await ledgerClean(tb)
})
