import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { cardOnNewAccount, purchase } from '../cards/rule-helpers.ts'

// Operator actions that the bank writes in groups (card authorizations from the sandbox's
// card network, decided many to one transaction): each still has its own audit row, in
// the same transaction as its change, naming what it made, and the chain stays whole.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const at_once = 24

test(`audit - ${at_once} card authorizations at once: one row each, committed with its authorization`, async () => {
  const cards = await Promise.all([0, 1, 2].map(() => cardOnNewAccount(tb, p, {}, 1_000_000)))
  const replies = await Promise.all(
    Array.from({ length: at_once }, (_, i) =>
      tb.operator.cardNetwork.authorize(purchase(cards[i % cards.length]!.cardId, 1_000)),
    ),
  )
  assert.ok(replies.every((r) => r.approved))
  const db = tb.bank.database.db
  const ids = replies.map((r) => r.authorization_id)
  // xmin: the transaction that wrote a row. An audit row written after its change, in a
  // transaction of its own, would differ from its authorization's.
  const rows = await db
    .selectFrom('card_authorizations as c')
    .innerJoin('audit_log as a', (join) =>
      join.on(sql<boolean>`a.targets @> jsonb_build_array(c.id::text)`),
    )
    .select([
      'c.id',
      'c.tx_id',
      'a.action',
      'a.targets',
      sql<string>`c.xmin::text`.as('change_xid'),
      sql<string>`a.xmin::text`.as('audit_xid'),
    ])
    .where('c.id', 'in', ids)
    .execute()
  assert.equal(rows.length, at_once, 'one audit row per authorization')
  for (const row of rows) {
    assert.equal(row.action, 'sandbox.card.authorize')
    assert.ok(row.targets.includes(row.tx_id!), 'the row names the transaction the hold made')
    assert.equal(row.audit_xid, row.change_xid, 'the row commits with its authorization')
  }
  const groups = new Set(rows.map((row) => row.change_xid))
  assert.ok(groups.size < at_once, 'the authorizations were decided in groups')
  const verify = await tb.operator.ledger.verify()
  assert.equal(verify.ok, true, JSON.stringify(verify.problems))
})
