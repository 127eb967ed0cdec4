import assert from 'node:assert/strict'
import type { TestBank, TestPartner } from '../support/harness.ts'
import { balances, transactionsOf } from '../transfers/helpers.ts'
import {
  cardSetup,
  issueCard,
  purchase,
  type AuthorizeBody,
  type CardRequestBody,
  type CardSetup,
} from './helpers.ts'

// What the card rule tests (declines, limits, concurrency, isolation) share beside
// helpers.ts: a card on an account of its own, the proof that a decline moved nothing, and
// the card's and the ledger's state read back.

export type Authorization = Awaited<ReturnType<TestBank['operator']['cardNetwork']['authorize']>>
export type CardLimitsBody = NonNullable<CardRequestBody['limits']>

export interface IssuedCard {
  s: CardSetup
  cardId: string
}

/** A new funded account with its holder and approver, and a card issued on it. */
export async function cardOnNewAccount(
  tb: TestBank,
  p: TestPartner,
  overrides: Partial<CardRequestBody> = {},
  funds = 1_000_000,
): Promise<IssuedCard> {
  const s = await cardSetup(tb, p, funds)
  return { s, cardId: await issueCard(p, s, overrides) }
}

/** A limits record with only the given limits on. */
export function limits(on: Partial<CardLimitsBody>): CardLimitsBody {
  return {
    transaction_enabled: on.transaction !== undefined,
    transaction: on.transaction ?? 0,
    daily_enabled: on.daily !== undefined,
    daily: on.daily ?? 0,
    monthly_enabled: on.monthly !== undefined,
    monthly: on.monthly ?? 0,
    yearly_enabled: on.yearly !== undefined,
    yearly: on.yearly ?? 0,
  }
}

/** What a decline must leave as it was: the balances and the account's transactions. */
export async function moneyState(p: TestPartner, accountId: string) {
  return { balances: await balances(p, accountId), rows: await transactionsOf(p, accountId) }
}

/**
 * Authorizes `body` and asserts it is declined for `reason`: no transaction, nothing held,
 * balance and available as before, and the authorization recorded with that reason.
 */
export async function expectDecline(
  tb: TestBank,
  p: TestPartner,
  accountId: string,
  body: AuthorizeBody,
  reason: Authorization['decline_reason'],
): Promise<Authorization> {
  const before = await moneyState(p, accountId)
  const reply = await tb.operator.cardNetwork.authorize(body)
  assert.equal(reply.decline_reason, reason, `declined for ${reason}`)
  assert.equal(reply.approved, false)
  assert.equal(reply.status, 'declined')
  assert.equal(reply.tx_id, null)
  assert.equal(reply.held, 0)
  assert.deepEqual(await moneyState(p, accountId), before, 'a decline moves nothing')
  const row = await authorizationRow(tb, reply.authorization_id)
  assert.equal(row?.status, 'declined')
  assert.equal(row?.decline_reason, reason, 'the decline is recorded with its reason')
  return reply
}

/** Authorizes `body` and asserts it is approved and holds its amount. */
export async function expectApproved(tb: TestBank, body: AuthorizeBody): Promise<Authorization> {
  const reply = await tb.operator.cardNetwork.authorize(body)
  assert.equal(reply.decline_reason, null, `approved, not declined for ${reply.decline_reason}`)
  assert.equal(reply.approved, true)
  assert.equal(reply.status, 'pending')
  assert.equal(reply.held, body.amount)
  assert.ok(reply.tx_id)
  return reply
}

export async function authorizationRow(tb: TestBank, id: string) {
  return tb.bank.database.db
    .selectFrom('card_authorizations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The card as its partner lists it. */
export async function listedCard(p: TestPartner, s: CardSetup, cardId: string) {
  const { cards } = await p.client.cards.list({ entity_id: s.entityId, account_id: s.accountId })
  const card = cards.find((c) => c.id === cardId)
  assert.ok(card, 'the card is listed')
  return card
}

/** The holder acting on their own card (update_status, set_pin, activate, get_details). */
export function holderAction(s: CardSetup, cardId: string) {
  return { account_id: s.accountId, initiator: s.holderId, id: cardId }
}

export async function ledgerClean(tb: TestBank): Promise<void> {
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [], 'ledger verify finds nothing')
}

export { purchase }
