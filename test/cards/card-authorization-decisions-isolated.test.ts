import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { cardSetup, issueCard, purchase } from './helpers.ts'

// Real-time authorization decisions with NATS set up for production: the bank is the NATS
// authority and asks each partner inside the partner's own account, where only the
// partner's users (with the creds the bank issued them) serve `decisions.>`. Another
// partner serving the same subject in its own account never hears a word of it.

const tb = useTestBank({ natsAuthority: true })
let a: TestPartner
let b: TestPartner

before(async () => {
  await tb.ready
  a = await onboardPartner(tb, { approve: true })
  b = await onboardPartner(tb, { approve: true })
})

test("card authorization decisions - the bank asks the partner in its own account; another partner's service hears nothing", async () => {
  const heard = { a: 0, b: 0 }
  const subject = 'decisions.cards'
  const subA = a.nc.subscribe(subject, {
    callback: (_e, msg) => {
      heard.a++
      msg.respond(JSON.stringify({ approve: false, reason: 'declined by A' }))
    },
  })
  const subB = b.nc.subscribe(subject, {
    callback: (_e, msg) => {
      heard.b++
      msg.respond(JSON.stringify({ approve: true }))
    },
  })
  await Promise.all([a.nc.flush(), b.nc.flush()])
  await a.client.cards.setAuthorizationDecisions({ subject })
  const s = await cardSetup(tb, a)
  const cardId = await issueCard(a, s)
  const auth = await tb.operator.cardNetwork.authorize(purchase(cardId, 1_000))
  assert.equal(auth.decline_reason, 'partner_declined')
  assert.equal(auth.decline_message, 'declined by A')
  assert.deepEqual(heard, { a: 1, b: 0 })
  subA.unsubscribe()
  subB.unsubscribe()
})

test("card authorization decisions - a partner's user may serve decisions.> but not subscribe to other subjects", async () => {
  const denied = b.nc.subscribe('svc.>')
  // The server refuses the subscription: it ends with a permissions error.
  await assert.rejects(
    (async () => {
      for await (const _ of denied) break
    })(),
    /permission/i,
  )
})
