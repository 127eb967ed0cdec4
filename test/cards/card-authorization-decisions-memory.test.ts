import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import {
  onboardPartner,
  useSecondInstance,
  storage,
  useTestBank,
  type TestPartner,
} from '../support/harness.ts'
import { cardSetup, issueCard, purchase, type CardSetup } from './helpers.ts'

// Each instance remembers which partners serve authorization decisions (card-decisions.ts),
// so that an authorization of a partner that serves none reads nothing more. A partner's
// change reaches that memory at once on the instance that made it and, by a broadcast, on
// every other.

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

/** A decision service on a new subject that approves and counts what it is asked. */
async function decisionService() {
  const subject = `decisions.${randomUUID().slice(0, 8)}`
  let asked = 0
  const sub = tb.nc.subscribe(subject, {
    callback: (_error, msg) => {
      asked++
      msg.respond(JSON.stringify({ approve: true }))
    },
  })
  await tb.nc.flush()
  return { subject, asked: () => asked, stop: () => sub.unsubscribe() }
}

test('card authorization decisions - a subject set, changed and removed takes effect on the next authorization', async () => {
  const service = await decisionService()
  // Remembered: nobody decides.
  assert.equal((await tb.operator.cardNetwork.authorize(purchase(cardId, 100))).approved, true)
  await p.client.cards.setAuthorizationDecisions({ subject: service.subject })
  await tb.operator.cardNetwork.authorize(purchase(cardId, 100))
  assert.equal(service.asked(), 1, 'asked at once after the subject was set')
  await p.client.cards.setAuthorizationDecisions({})
  await tb.operator.cardNetwork.authorize(purchase(cardId, 100))
  assert.equal(service.asked(), 1, 'not asked once it was removed')
  service.stop()
})

test('card authorization decisions - a change is broadcast to the other instances', async () => {
  const heard: string[] = []
  const sub = tb.nc.subscribe('bank.internal.card.decisions.changed', {
    callback: (_error, msg) => {
      heard.push(msg.subject)
    },
  })
  await tb.nc.flush()
  await p.client.cards.setAuthorizationDecisions({})
  await tb.nc.flush()
  sub.unsubscribe()
  assert.equal(heard.length, 1)
})

if (storage === 'postgres') {
  describe('two instances sharing one PostgreSQL', () => {
    const second = useSecondInstance(tb)

    test('card authorization decisions - a subject set through one instance is asked by the other', async () => {
      const service = await decisionService()
      const network = second().services.cardNetwork
      const operator = 'test-operator'
      // The second instance remembers that nobody decides.
      assert.equal((await network.authorize(purchase(cardId, 100), operator)).approved, true)
      await tb.bank.services.cardDecisions.set(p.partnerId, { subject: service.subject })
      // The broadcast reaches it within moments (the memory's age bounds a lost one).
      while (service.asked() === 0) await network.authorize(purchase(cardId, 100), operator)
      assert.equal(service.asked(), 1)
      service.stop()
      await tb.bank.services.cardDecisions.set(p.partnerId, {})
    })
  })
}
