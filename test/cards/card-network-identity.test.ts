import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { hashToken } from '../../src/auth/credential-store.ts'
import { CardNetworkClient } from '../../src/client/index.ts'
import { allOperations, scopeOf, subjectFor, type Operation } from '../../src/contract/index.ts'
import { expectRefusal, uuidPattern } from '../support/assertions.ts'
import {
  onboardPartner, rawRequest, test_request_timeout_ms, useTestBank, type TestPartner,
} from '../support/harness.ts'
import { bankEnv, json, removeTempDirs, runBank } from '../cli/run-bank.ts'
import { balances } from '../transfers/helpers.ts'
import { cardSetup, issueCard, purchase, type CardSetup } from './helpers.ts'

// The card network's own identity (issue 41): a credential kind of its own (`cnk_…`), issued
// by an operator, on subjects of its own (`net.card.*`) that only it may use, and calls that
// write no operator audit row, while the sandbox's simulator (`ops.sandbox.card.*`, an
// operator playing the network) keeps auditing every call.

const tb = useTestBank()
let p: TestPartner
let s: CardSetup
let cardId: string
let network: { id: string; token: string }
let net: CardNetworkClient

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  s = await cardSetup(tb, p)
  cardId = await issueCard(p, s, { name: 'Network card' })
  network = await tb.operator.credentials.createCardNetwork({ label: 'Visa gateway' })
  net = new CardNetworkClient({ connection: tb.nc, token: network.token,
    timeoutMs: test_request_timeout_ms })
})

const name = (behaviour: string) => `card network identity - ${behaviour}`

async function auditRows(): Promise<number> {
  const row = await tb.bank.database.db.selectFrom('audit_log')
    .select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The operation's subject, on the partner's own id or root entity where it names one. */
const subjectOf = (op: Operation) =>
  subjectFor(op, scopeOf(op) === 'entity' ? p.rootEntityId : p.partnerId)

test(name('an operator issues it once, shown once: cnk_, stored only as its hash, listed apart from partners\''), async () => {
  const issued = await tb.operator.credentials.createCardNetwork({ label: 'Mastercard gateway',
    expires_in_seconds: 3600 })
  assert.deepEqual(Object.keys(issued).sort(), ['id', 'token'])
  assert.match(issued.id, uuidPattern)
  assert.match(issued.token, /^cnk_[A-Za-z0-9_-]{43}$/)
  const row = await tb.bank.database.db.selectFrom('credentials').selectAll()
    .where('id', '=', issued.id).executeTakeFirstOrThrow()
  assert.equal(row.role, 'card_network')
  assert.equal(row.partner_id, null)
  assert.equal(row.permissions, '')
  assert.equal(row.token_hash, hashToken(issued.token))
  assert.ok(!JSON.stringify(row).includes(issued.token), 'the token itself is not stored')
  const { credentials } = await tb.operator.credentials.listCardNetworks()
  const listed = credentials.find((c) => c.id === issued.id)
  assert.deepEqual(listed && { ...listed, created_at: '', expires_at: typeof listed.expires_at }, {
    id: issued.id, partner_id: null, permissions: [], label: 'Mastercard gateway',
    created_at: '', expires_at: 'string', revoked_at: null,
  })
  assert.ok(!JSON.stringify(credentials).includes(issued.token), 'the list shows no token')
  assert.ok(credentials.some((c) => c.id === network.id))
  const partners = await tb.operator.credentials.list({ partner_id: p.partnerId })
  assert.ok(!partners.credentials.some((c) => c.id === issued.id))
  await expectRefusal(tb.operator.credentials.createCardNetwork({ label: '' }), 400, 'label')
  await expectRefusal(tb.operator.credentials.createCardNetwork({ label: 'x',
    expires_in_seconds: 59 }), 400, 'expires_in_seconds')
  // Only an operator issues one.
  const byPartner = await rawRequest(tb, 'ops.credential.create_card_network', '{"label":"x"}',
    { token: p.token })
  assert.equal(byPartner.code, 403)
})

test(name('authorize, increment, reverse, clear and refund through net.card.*, with no audit row'), async () => {
  const auditBefore = await auditRows()
  const before = await balances(p, s.accountId)
  const held = await net.card.authorize(purchase(cardId, 10_000))
  assert.equal(held.approved, true)
  assert.equal(held.status, 'pending')
  const more = await net.card.increment({ authorization_id: held.authorization_id, amount: 2_000 })
  assert.equal(more.held, 12_000)
  const less = await net.card.reverse({ authorization_id: held.authorization_id, amount: 1_000 })
  assert.equal(less.held, 11_000)
  const cleared = await net.card.clear({ authorization_id: held.authorization_id, amount: 11_000 })
  assert.equal(cleared.status, 'cleared')
  const refund = await net.card.refund({ card_id: cardId, amount: 500,
    merchant_name: 'Corner Cafe' })
  assert.match(refund.tx_id, uuidPattern)
  const whole = await net.card.authorize(purchase(cardId, 700))
  const released = await net.card.reverse({ authorization_id: whole.authorization_id })
  assert.equal(released.status, 'reversed')
  const declined = await net.card.authorize(purchase(cardId, 2_000_000_000))
  assert.equal(declined.approved, false)
  assert.equal(declined.decline_reason, 'insufficient_funds')
  const after = await balances(p, s.accountId)
  assert.equal(BigInt(after.balance), BigInt(before.balance) - 11_000n + 500n)
  assert.equal(await auditRows(), auditBefore, 'the card network wrote no operator audit row')
  const report = await tb.operator.ledger.verify({})
  assert.deepEqual(report.problems, [])
})

test(name('the sandbox simulator still audits each operator call, with the same bodies and replies'), async () => {
  const auditBefore = await auditRows()
  const simulated = await tb.operator.cardNetwork.authorize(purchase(cardId, 300))
  const real = await net.card.authorize(purchase(cardId, 300))
  assert.deepEqual(Object.keys(real).sort(), Object.keys(simulated).sort())
  assert.equal(real.approved, simulated.approved)
  assert.equal(await auditRows(), auditBefore + 1)
  const { entries } = await tb.operator.audit.list({ target: simulated.authorization_id })
  assert.deepEqual(entries.map((e) => e.action), ['sandbox.card.authorize'])
  assert.deepEqual((await tb.operator.audit.list({ target: real.authorization_id })).entries, [])
})

test(name('a partner credential and an operator credential get 403 on every net.card. subject'), async () => {
  const everything = await tb.operator.credentials.create({ partner_id: p.partnerId,
    permissions: ['read', 'write', 'payments', 'card_details'] })
  const networkOperations = allOperations().filter((op) => op.permission === 'card_network')
  assert.equal(networkOperations.length, 5)
  for (const op of networkOperations) {
    assert.match(op.subject, /^net\.card\./)
    for (const token of [p.token, everything.token, tb.operatorToken]) {
      const reply = await rawRequest(tb, subjectFor(op), JSON.stringify(purchase(cardId, 100)),
        { token })
      assert.equal(reply.code, 403, `${op.subject} with ${token.slice(0, 4)}`)
      assert.equal(reply.body.error.type, 'forbidden')
    }
  }
})

test(name('a card network credential gets 403 on every svc. and ops. subject'), async () => {
  const others = allOperations().filter((op) => op.permission !== 'card_network')
  assert.ok(others.some((op) => op.subject.startsWith('svc.')))
  for (const op of others) {
    const reply = await rawRequest(tb, subjectOf(op), '{}', { token: network.token })
    assert.equal(reply.code, 403, op.subject)
    assert.equal(reply.body.error.type, 'forbidden', op.subject)
  }
})

test(name('revoked, the network credential is refused 401 at once; an issued one keeps working'), async () => {
  const spare = await tb.operator.credentials.createCardNetwork({ label: 'spare gateway' })
  const spareClient = new CardNetworkClient({ connection: tb.nc, token: spare.token,
    timeoutMs: test_request_timeout_ms })
  const pending = await spareClient.card.authorize(purchase(cardId, 100))
  const revoked = await tb.operator.credentials.revoke({ credential_id: spare.id })
  assert.equal(revoked.id, spare.id)
  assert.equal(revoked.partner_id, null)
  assert.ok(revoked.revoked_at)
  await expectRefusal(spareClient.card.authorize(purchase(cardId, 100)), 401)
  await expectRefusal(spareClient.card.clear({ authorization_id: pending.authorization_id,
    amount: 100 }), 401)
  // Another network credential is untouched, and clears what the revoked one authorized.
  const cleared = await net.card.clear({ authorization_id: pending.authorization_id, amount: 100 })
  assert.equal(cleared.status, 'cleared')
  const { credentials } = await tb.operator.credentials.listCardNetworks()
  assert.ok(credentials.find((c) => c.id === spare.id)?.revoked_at)
})

test(name('the CLI issues and lists it: bank credential create-card-network, list-card-networks'), async () => {
  const env = bankEnv(tb)
  const issued = json(await runBank(['credential', 'create-card-network', '--label',
    'Amex gateway', '--expires-in', '30d'], env))
  assert.match(issued.token, /^cnk_/)
  const listed = json(await runBank(['credential', 'list-card-networks'], env))
  const row = listed.credentials.find((c: { id: string }) => c.id === issued.id)
  assert.equal(row.label, 'Amex gateway')
  assert.equal(JSON.stringify(listed).includes(issued.token), false)
  const missing = await runBank(['credential', 'create-card-network'], env)
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /--label is required/)
  removeTempDirs()
})
