import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { CardNetworkClient } from '../../src/client/index.ts'
import { credsAccount } from '../../src/nats-identity/nats-init.ts'
import { authorityRow, partnerOfAccountKey } from '../../src/nats-identity/nats-identity-store.ts'
import { expectRefusal } from '../support/assertions.ts'
import {
  onboardPartner, rawRequest, test_request_timeout_ms, useTestBank, type TestPartner,
} from '../support/harness.ts'
import { cardSetup, issueCard, purchase, type CardSetup } from '../cards/helpers.ts'

// The card network on NATS as production runs it (the bank the NATS authority, `bank nats
// init`'s configuration, TLS, BANK_SANDBOX=false): the network connects as the user `bank
// nats init` wrote into card-network.creds, in an account of its own that reaches
// `net.card.>` and nothing else, and calls with its own credential. A partner's account
// cannot reach `net.card.>` at all, whatever token it sends; the network's user cannot
// publish anywhere else nor subscribe to anything but its inbox.

const tb = useTestBank({ natsAuthority: true,
  env: { BANK_SANDBOX: 'false', BANK_DUAL_CONTROL_CENTS: '0' } })
let p: TestPartner
let s: CardSetup
let cardId: string
let network: { id: string; token: string }
let networkNc: NatsConnection
let net: CardNetworkClient

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  s = await cardSetup(tb, p)
  cardId = await issueCard(p, s, { name: 'Network card' })
  network = await tb.operator.credentials.createCardNetwork({ label: 'Visa gateway' })
  const creds = fs.readFileSync(path.join(tb.authority!.dir, 'card-network.creds'), 'utf8')
  networkNc = await tb.partnerConnection(creds)
  net = new CardNetworkClient({ connection: networkNc, token: network.token,
    timeoutMs: test_request_timeout_ms })
})

const name = (behaviour: string) => `card network on NATS - ${behaviour}`

async function auditRows(): Promise<number> {
  const row = await tb.bank.database.db.selectFrom('audit_log')
    .select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

function tokenHeaders(token: string) {
  const h = natsHeaders()
  h.set('token', token)
  return { headers: h, timeout: 10_000 }
}

async function expectNoResponders(call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: Error) => /no responders/i.test(error.message)
    || (error as { code?: number }).code === 503)
}

/** Subscribes as asked and resolves once the server refused the subscription. */
async function expectRefusedSubscription(nc: NatsConnection, subject: string): Promise<void> {
  const sub = nc.subscribe(subject)
  const closed = sub.closed
  await nc.flush()
  const outcome = await closed
  assert.ok(outcome instanceof Error, `subscribing to ${subject} should be refused`)
  assert.match(outcome.message, /permissions violation/i)
}

test(name('card-network.creds is a user of the card network\'s own account, apart from the bank\'s, the operators\' and every partner\'s'), async () => {
  const db = tb.bank.database.db
  const authority = await authorityRow(db)
  const account = authority?.card_network_account
  assert.ok(account)
  const creds = fs.readFileSync(path.join(tb.authority!.dir, 'card-network.creds'), 'utf8')
  assert.equal(credsAccount(creds), account)
  assert.notEqual(account, authority.bank_account)
  assert.notEqual(account, authority.operators_account)
  assert.equal(await partnerOfAccountKey(db, account), undefined)
  const user = await db.selectFrom('nats_users').selectAll().where('account', '=', account)
    .executeTakeFirstOrThrow()
  assert.equal(user.role, 'card_network')
  assert.equal(user.partner_id, null)
  assert.equal(fs.statSync(path.join(tb.authority!.dir, 'card-network.creds')).mode & 0o077, 0)
})

test(name('in production, the network authorizes, increments, reverses, clears and refunds through its own account, with no audit row; the simulator is refused'), async () => {
  const auditBefore = await auditRows()
  const held = await net.card.authorize(purchase(cardId, 5_000))
  assert.equal(held.approved, true)
  await net.card.increment({ authorization_id: held.authorization_id, amount: 1_000 })
  await net.card.reverse({ authorization_id: held.authorization_id, amount: 500 })
  const cleared = await net.card.clear({ authorization_id: held.authorization_id, amount: 5_500 })
  assert.equal(cleared.status, 'cleared')
  const refund = await net.card.refund({ card_id: cardId, amount: 250, merchant_name: 'Cafe' })
  assert.ok(refund.tx_id)
  assert.equal(await auditRows(), auditBefore, 'no operator audit row for the network')
  // The sandbox's simulator answers in the sandbox only (an operator's refusal is audited).
  await expectRefusal(tb.operator.cardNetwork.authorize(purchase(cardId, 100)), 403)
})

test(name("a partner's account cannot reach net.card.> at all: no responders, with its own token or the network's"), async () => {
  const body = JSON.stringify(purchase(cardId, 100))
  for (const subject of ['net.card.authorize', 'net.card.clear', 'net.card.refund']) {
    await expectNoResponders(p.nc.request(subject, body, tokenHeaders(p.token)))
    await expectNoResponders(p.nc.request(subject, body, tokenHeaders(network.token)))
  }
  // Nor can it listen for the network's requests.
  await expectRefusedSubscription(p.nc, 'net.card.>')
  // The network is still answered.
  assert.equal((await net.card.authorize(purchase(cardId, 100))).approved, true)
})

test(name("the network's user publishes only on net.card.> and subscribes only to its inbox"), async () => {
  for (const subject of ['net.card.>', 'net.>', 'svc.>', 'ops.>', '$SRV.>', '>']) {
    await expectRefusedSubscription(networkNc, subject)
  }
  for (const subject of [`svc.entity.${p.partnerId}.list-entities`, 'ops.partner.list',
      '$SRV.PING', 'decisions.cards']) {
    await assert.rejects(networkNc.request(subject, '{}', tokenHeaders(network.token)),
      (error: Error) => /permissions violation|no responders/i.test(error.message),
      subject)
  }
  assert.equal((await net.card.authorize(purchase(cardId, 100))).approved, true)
})

test(name("through the network's account only the network's token is good: a partner's or an operator's is refused 401"), async () => {
  const body = JSON.stringify(purchase(cardId, 100))
  for (const token of [p.token, tb.operatorToken]) {
    const reply = await rawRequest(tb, 'net.card.authorize', body, { token }, networkNc)
    assert.equal(reply.code, 401)
  }
  // Its own token is good there.
  const own = await rawRequest(tb, 'net.card.authorize', body, { token: network.token },
    networkNc)
  assert.equal(own.code, 200)
})

test(name('revoked, the network credential is refused 401 through its own account'), async () => {
  const spare = await tb.operator.credentials.createCardNetwork({ label: 'spare' })
  const spareClient = new CardNetworkClient({ connection: networkNc, token: spare.token,
    timeoutMs: test_request_timeout_ms })
  assert.equal((await spareClient.card.authorize(purchase(cardId, 100))).approved, true)
  await tb.operator.credentials.revoke({ credential_id: spare.id })
  await expectRefusal(spareClient.card.authorize(purchase(cardId, 100)), 401)
  assert.equal((await net.card.authorize(purchase(cardId, 100))).approved, true)
})
