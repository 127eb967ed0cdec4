import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { balances } from '../transfers/helpers.ts'
import { cardSetup, issueCard, purchase, type CardSetup } from './helpers.ts'
import { holderAction } from './rule-helpers.ts'

// Real-time authorization decisions by the partner, on an open NATS server: the bank asks
// the partner's decision subject once its own checks pass and waits at most 1 s; no answer
// is the partner's stand-in choice. (card-authorization-decisions-isolated.test.ts: inside
// the partner's own NATS account.)

const tb = useTestBank()
let p: TestPartner
let s: CardSetup
let cardId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  s = await cardSetup(tb, p)
  cardId = await issueCard(p, s)
})

/** A decision service on `subject` answering `answer` (or nothing, when it returns undefined). */
function serve(subject: string, answer: (request: any) => unknown) {
  const asked: any[] = []
  const sub = tb.nc.subscribe(subject, {
    callback: (_error, msg) => {
      const request = msg.json()
      asked.push(request)
      const reply = answer(request)
      if (reply !== undefined) msg.respond(JSON.stringify(reply))
    },
  })
  return { asked, stop: () => sub.unsubscribe() }
}

test('card authorization - the partner declines with its reason, or approves; it is asked only what its checks passed', async () => {
  const subject = `decisions.${randomUUID().slice(0, 8)}`
  const service = serve(subject, (r) =>
    r.authorization.amount > 5_000
      ? { approve: false, reason: 'over our own budget' }
      : { approve: true },
  )
  await tb.nc.flush()
  const set = await p.client.cards.setAuthorizationDecisions({ subject, stand_in: 'decline' })
  assert.deepEqual(set, { subject, stand_in: 'decline' })
  assert.deepEqual(await p.client.cards.getAuthorizationDecisions({}), set)
  const before = await balances(p, s.accountId)
  const declined = await tb.operator.cardNetwork.authorize(purchase(cardId, 6_000))
  assert.equal(declined.decline_reason, 'partner_declined')
  assert.equal(declined.decline_message, 'over our own budget')
  assert.deepEqual(await balances(p, s.accountId), before, 'a decline moves nothing')
  const approved = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(approved.approved, true)
  assert.equal(service.asked.length, 2)
  assert.equal(service.asked[1].card.id, cardId)
  assert.equal(service.asked[1].authorization.merchant_name, 'Corner Cafe')
  assert.equal(service.asked[1].authorization.pin, undefined, 'the PIN is never sent')
  // The bank's own decline comes first: the partner is not asked.
  const tooMuch = await tb.operator.cardNetwork.authorize(purchase(cardId, 999_999_999))
  assert.equal(tooMuch.decline_reason, 'insufficient_funds')
  assert.equal(service.asked.length, 2)
  service.stop()
})

test('card authorization - no answer within 1 s, no responder, or a malformed answer is the stand-in choice', async () => {
  const subject = `decisions.${randomUUID().slice(0, 8)}`
  const silent = serve(subject, () => undefined)
  await tb.nc.flush()
  await p.client.cards.setAuthorizationDecisions({ subject, stand_in: 'approve' })
  const late = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(late.approved, true, 'stand-in approve')
  assert.equal(silent.asked.length, 1)
  silent.stop()
  await p.client.cards.setAuthorizationDecisions({ subject, stand_in: 'decline' })
  const nobody = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(nobody.decline_reason, 'partner_declined')
  assert.equal(nobody.decline_message, 'the partner did not answer in time')
  const garbled = serve(subject, () => ({ approve: 'yes' }))
  await tb.nc.flush()
  const odd = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(odd.decline_reason, 'partner_declined')
  garbled.stop()
  // Without a subject the bank decides alone again.
  assert.deepEqual(await p.client.cards.setAuthorizationDecisions({}), {
    subject: null,
    stand_in: 'decline',
  })
  assert.equal((await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))).approved, true)
})

test('card authorization - a decision subject outside decisions., or with a wildcard, is refused', async () => {
  for (const subject of ['svc.card.x', 'decisions.>', 'decisions.*', 'decisions', 'decisions..a']) {
    await assert.rejects(
      p.client.cards.setAuthorizationDecisions({ subject }),
      (e: any) => e.code === 400 && /subject/.test(e.message),
      subject,
    )
  }
})

test('card authorization - the checks made before asking decide unless the card changed meanwhile: a card frozen while its partner decides is declined', async () => {
  const subject = `decisions.${randomUUID().slice(0, 8)}`
  const frozenCard = await issueCard(p, s)
  // The partner freezes the card (a fraud alert of its own) before it answers approve.
  const asked: string[] = []
  const sub = tb.nc.subscribe(subject, {
    callback: (_error, msg) => {
      const request = msg.json<{ card: { id: string } }>()
      asked.push(request.card.id)
      const freeze = request.card.id === frozenCard
        ? p.client.cards.updateStatus({ ...holderAction(s, frozenCard), status: 'frozen' })
        : Promise.resolve()
      void freeze.then(() => msg.respond(JSON.stringify({ approve: true })))
    },
  })
  await tb.nc.flush()
  await p.client.cards.setAuthorizationDecisions({ subject, stand_in: 'decline' })
  const before = await balances(p, s.accountId)
  const declined = await tb.operator.cardNetwork.authorize(purchase(frozenCard, 1_000))
  assert.deepEqual(asked, [frozenCard], 'asked: the bank\'s checks had passed')
  assert.equal(declined.approved, false)
  assert.equal(declined.decline_reason, 'card_frozen', 'checked again: the card changed')
  assert.deepEqual(await balances(p, s.accountId), before, 'a decline moves nothing')
  // An unchanged card is approved on the checks made before asking.
  const approved = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(approved.approved, true)
  sub.unsubscribe()
  await p.client.cards.setAuthorizationDecisions({})
})
