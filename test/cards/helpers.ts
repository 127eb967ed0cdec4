import assert from 'node:assert/strict'
import type { BankClient } from '../../src/client/index.ts'
import type { TestBank, TestPartner } from '../support/harness.ts'
import { userRequest } from '../support/fixtures.ts'
import { fund, newAccount } from '../transfers/helpers.ts'

// What the card tests share: a business with two KYC-approved users (a holder and an
// approver, four eyes), a funded account, and a card issued on it.

export type CardRequestBody = Parameters<BankClient['cards']['request']>[0]
export type AuthorizeBody = Parameters<TestBank['operator']['cardNetwork']['authorize']>[0]

export interface CardSetup {
  accountId: string
  entityId: string
  holderId: string
  approverId: string
}

export const holderAddress = {
  address_line_1: '1 Long Street',
  city: 'Cape Town',
  postcode: '8001',
  country: 'ZAF',
}

/** Two approved users of the partner's root entity, and a new account under it with `funds`. */
export async function cardSetup(
  tb: TestBank,
  p: TestPartner,
  funds = 1_000_000,
): Promise<CardSetup> {
  const accountId = await newAccount(p)
  if (funds > 0) await fund(tb, accountId, funds)
  const user = async (email: string) =>
    (
      await p.client.users.create(
        userRequest(p.rootEntityId, { email, verified: true, address: holderAddress }) as never,
      )
    ).userId
  return {
    accountId,
    entityId: p.rootEntityId,
    holderId: await user('holder@acme.example'),
    approverId: await user('approver@acme.example'),
  }
}

export function cardRequest(
  s: CardSetup,
  overrides: Partial<CardRequestBody> = {},
): CardRequestBody {
  return {
    account_id: s.accountId,
    user_id: s.holderId,
    name: 'Travel card',
    type: 0,
    use_type: 0,
    ...overrides,
  }
}

/** Requests a card and has the approver approve it; resolves with the card's id. */
export async function issueCard(
  p: TestPartner,
  s: CardSetup,
  overrides: Partial<CardRequestBody> = {},
): Promise<string> {
  const { id } = await p.client.cards.request(cardRequest(s, overrides))
  await p.client.cards.respondToRequest({
    entity_id: s.entityId,
    account_id: s.accountId,
    initiator: s.approverId,
    request_id: id,
    approved: true,
  })
  const { cards } = await p.client.cards.list({ entity_id: s.entityId, account_id: s.accountId })
  const card = cards.find(
    (c) => c.user_id === s.holderId && c.name === (overrides.name ?? 'Travel card'),
  )
  assert.ok(card, 'the approved request issued a card')
  return card.id
}

/** A domestic chip payment at a till, without a PIN. */
export function purchase(
  cardId: string,
  amount: number,
  overrides: Partial<AuthorizeBody> = {},
): AuthorizeBody {
  return {
    card_id: cardId,
    amount,
    merchant_name: 'Corner Cafe',
    mcc: '5812',
    merchant_country: 'ZAF',
    channel: 'pos',
    entry_mode: 'chip',
    ...overrides,
  }
}
