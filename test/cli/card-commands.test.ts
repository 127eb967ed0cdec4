import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances, transactionsOf } from '../transfers/helpers.ts'
import { cardSetup, issueCard, type CardSetup } from '../cards/helpers.ts'
import { bankEnv, json, removeTempDirs, runBank } from './run-bank.ts'

// The sandbox card network from the operator CLI (docs/guides/cards.md): `bank sandbox card
// authorize/increment/reverse/clear/refund`, derived from the ops.sandbox.card.* subjects,
// answer the operations' replies as JSON, and money moves as the guide says.

const tb = useTestBank()
let p: TestPartner
let s: CardSetup

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  s = await cardSetup(tb, p)
})
after(() => removeTempDirs())

const bank = (...args: string[]) => runBank(args, bankEnv(tb))

/** `bank sandbox card authorize` of a domestic chip payment at a cafe's till. */
function authorize(cardId: string, amount: number, ...more: string[]) {
  return bank(
    'sandbox', 'card', 'authorize', cardId,
    '--amount', String(amount),
    '--merchant-name', 'Corner Cafe',
    '--mcc', '5812',
    '--merchant-country', 'ZAF',
    '--channel', 'pos',
    '--entry-mode', 'chip',
    ...more,
  )
}

test('cli - sandbox card authorize holds, increment adds, reverse releases part, clear posts', async () => {
  const cardId = await issueCard(p, s, { name: 'CLI spender' })
  const before = await balances(p, s.accountId)
  const run = await authorize(cardId, 10_000)
  assert.equal(run.stderr, '')
  const auth = json(run)
  assert.equal(auth.approved, true)
  assert.equal(auth.status, 'pending')
  assert.equal(auth.held, 10_000)
  assert.equal(auth.card_id, cardId)
  assert.equal(auth.merchant_name, 'Corner Cafe')
  const id = auth.authorization_id

  const more = json(await bank('sandbox', 'card', 'increment', id, '--amount', '2000'))
  assert.deepEqual([more.amount, more.held], [12_000, 12_000])
  const less = json(await bank('sandbox', 'card', 'reverse', id, '--amount', '1000'))
  assert.deepEqual([less.held, less.reversed, less.status], [11_000, 1_000, 'pending'])
  const held = await balances(p, s.accountId)
  assert.equal(BigInt(held.available), BigInt(before.available) - 11_000n)

  const cleared = json(await bank('sandbox', 'card', 'clear', id, '--amount', '11500'))
  assert.deepEqual([cleared.status, cleared.cleared, cleared.held], ['cleared', 11_500, 0])
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(before.balance) - 11_500n)
  assert.equal(after.available, after.balance)
  // The row posts the 10,000 first authorized; its child the 1,500 more.
  const rows = (await transactionsOf(p, s.accountId)).filter((t) => t.tx_type === 'card')
  const first = rows.find((t) => t.tx_id === auth.tx_id)!
  const child = rows.find((t) => t.parent_tx_id === auth.tx_id)!
  const shown = (t: typeof first) => [t.status, t.debit, t.tx_payment_type, t.recipient_name]
  assert.deepEqual(shown(first), ['Successful', '10000', 'CARD', 'Corner Cafe'])
  assert.deepEqual(shown(child), ['Successful', '1500', 'CARD', 'Corner Cafe'])
})

test('cli - sandbox card reverse without --amount releases all; the row is Reversed', async () => {
  const cardId = await issueCard(p, s, { name: 'CLI reversal' })
  const before = await balances(p, s.accountId)
  const auth = json(await authorize(cardId, 7_000))
  const reversed = json(await bank('sandbox', 'card', 'reverse', auth.authorization_id))
  assert.deepEqual([reversed.status, reversed.held, reversed.reversed], ['reversed', 0, 7_000])
  assert.deepEqual(await balances(p, s.accountId), before)
  const row = (await transactionsOf(p, s.accountId)).find((t) => t.tx_id === auth.tx_id)!
  assert.equal(row.status, 'Reversed')
  // No longer pending: clearing it is refused with the bank's 409 on stderr, exit 1.
  const refused = await bank('sandbox', 'card', 'clear', auth.authorization_id, '--amount', '7000')
  assert.equal(refused.code, 1)
  assert.equal(refused.stdout, '')
  assert.match(refused.stderr, /409/)
  assert.match(refused.stderr, /reversed, not pending/)
})

test('cli - sandbox card refund credits the account with a refund row', async () => {
  const cardId = await issueCard(p, s, { name: 'CLI refund' })
  const before = await balances(p, s.accountId)
  const args = ['sandbox', 'card', 'refund', cardId, '--amount', '2500']
  const refund = json(await bank(...args, '--merchant-name', 'Corner Cafe'))
  assert.deepEqual(
    { card_id: refund.card_id, account_id: refund.account_id, amount: refund.amount },
    { card_id: cardId, account_id: s.accountId, amount: 2_500 },
  )
  assert.equal(BigInt((await balances(p, s.accountId)).balance), BigInt(before.balance) + 2_500n)
  const row = (await transactionsOf(p, s.accountId)).find((t) => t.tx_id === refund.tx_id)!
  assert.deepEqual(
    [row.tx_type, row.tx_payment_type, row.status, row.credit, row.recipient_name],
    ['refund', 'CARD', 'Successful', '2500', 'Corner Cafe'],
  )
})

test('cli - sandbox card authorize answers a decline as a reply (exit 0) with its reason', async () => {
  const cardId = await issueCard(p, s, {
    name: 'CLI limited',
    limits: { transaction_enabled: true, transaction: 5_000 },
  })
  const before = await balances(p, s.accountId)
  const declined = json(await authorize(cardId, 5_001))
  assert.equal(declined.approved, false)
  assert.equal(declined.status, 'declined')
  assert.equal(declined.decline_reason, 'limit_exceeded')
  assert.equal(declined.tx_id, null)
  assert.deepEqual(await balances(p, s.accountId), before)
  const withPin = json(await authorize(cardId, 1_000, '--pin', '1234'))
  assert.equal(withPin.decline_reason, 'incorrect_pin', 'no PIN was set: any PIN is wrong')
})

test('cli - sandbox card commands: a missing flag is a usage mistake (exit 2), an unknown card 404', async () => {
  const usage = await bank('sandbox', 'card', 'clear', '6a1f0c5e-2b0e-4d1e-9a57-0d2f7c9b1e42')
  assert.equal(usage.code, 2)
  assert.match(usage.stderr, /--amount/)
  const unknown = await authorize('6a1f0c5e-2b0e-4d1e-9a57-0d2f7c9b1e42', 1_000)
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /404/)
})
