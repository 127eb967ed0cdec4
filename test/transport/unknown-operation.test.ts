import assert from 'node:assert/strict'
import fs from 'node:fs'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { allOperations, subjectFor, subscriptionSubject } from '../../src/contract/index.ts'
import { ServedSubjects } from '../../src/transport/nats/micro.ts'
import { ManualClock } from '../../src/clock.ts'
import { businessEntity } from '../support/fixtures.ts'
import { onboardPartner, rawRequest, useTestBank, type RawReply, type TestPartner } from '../support/harness.ts'

// A request on a subject of the bank's that no operation serves is answered 404 `not_found`
// at once, after the same checks as an operation's: no credential 401, another partner's id
// 403. Before, a partner calling through its own NATS account waited for its timeout: the
// request crossed the import into the bank's account, where nothing subscribed and the server
// cannot say "no responders". The catch-all subscriptions share the endpoints' queue group, so
// a real operation is still answered exactly once.
//
// `natsAuthority: 'bank'`: the bank is the NATS authority; `tb.nc` is a user of the bank's own
// account (as every client is on an open server: no import crossed), each partner's `nc` its
// own account's.

// The request budgets' clock (the bank's wall clock) stands still: nothing refills by itself.
const tb = useTestBank({ natsAuthority: 'bank',
  wallClock: new ManualClock('2026-12-07T08:00:00Z') })
let a: TestPartner
let b: TestPartner
let aEntity: string
let bEntity: string
let operatorsNc: NatsConnection

/** How long replies to a batch of requests are collected after the last expected one arrived. */
const reply_window_ms = 300
/** How long a batch waits for replies that may never come (a request dropped). */
const replies_bound_ms = 20_000

before(async () => {
  await tb.ready
  ;[a, b] = await Promise.all([onboardPartner(tb), onboardPartner(tb)])
  aEntity = (await a.client.entities.create(businessEntity())).id
  bEntity = (await b.client.entities.create(businessEntity())).id
  operatorsNc = await tb.partnerConnection(fs.readFileSync(tb.authority!.operatorCredsFile,
    'utf8'))
})

const name = (behaviour: string) => `unknown operation - ${behaviour}`

function expectNotFound(reply: RawReply, subject: string): void {
  assert.equal(reply.code, 404, `${subject}: ${JSON.stringify(reply.body)}`)
  assert.equal(reply.headers['Nats-Service-Error-Code'], '404')
  const { error } = reply.body as { error: Record<string, unknown> }
  assert.deepEqual(Object.keys(error).sort(), ['code', 'details', 'message', 'type'])
  assert.equal(error.code, 404)
  assert.equal(error.type, 'not_found')
  assert.deepEqual(error.details, [])
  assert.equal(error.message, `no operation answers on ${subject}: the subject is unknown ` +
    '(the operations and their subjects are listed in docs/reference/subjects.md)')
}

function expectRefused(reply: RawReply, code: number, subject: string): void {
  assert.equal(reply.code, code, `${subject}: ${JSON.stringify(reply.body)}`)
  assert.equal((reply.body as { error: { type: string } }).error.type,
    code === 401 ? 'unauthorized' : 'forbidden')
}

const unknownOfA = () => [`svc.account.${a.partnerId}.no_such_thing`,
  `svc.nothing.${a.partnerId}.x`, `svc.entity.${a.partnerId}.list-entities.more`,
  `svc.account.${a.partnerId}`, `svc.debit.${aEntity}.no_such_thing`, 'svc.nothing']

test(name("a partner's unknown subject is answered 404 not_found, naming it and the reference"), async () => {
  for (const subject of unknownOfA()) {
    expectNotFound(await rawRequest(tb, subject, '{}', { token: a.token }), subject)
  }
  // The bearer form of the credential too, and a body that is no JSON at all: no body is read.
  const subject = `svc.account.${a.partnerId}.no_such_thing`
  expectNotFound(await rawRequest(tb, subject, 'not json',
    { authorization: `Bearer ${a.token}` }), subject)
})

test(name('without a good credential it is 401, before anything else'), async () => {
  for (const subject of [...unknownOfA(), `svc.nothing.${b.partnerId}.x`, 'ops.nothing']) {
    expectRefused(await rawRequest(tb, subject, '{}'), 401, subject)
    expectRefused(await rawRequest(tb, subject, '{}', { token: 'bnk_not_a_token' }), 401,
      subject)
  }
})

test(name('an unknown subject spends the request budget as an operation does: over it, 429'), async () => {
  const c = await onboardPartner(tb)
  await tb.operator.partners.limits({ partner_id: c.partnerId, requests_per_second: 1, burst: 2 })
  const subject = `svc.nothing.${c.partnerId}.x`
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await rawRequest(tb, subject, '{}',
    { token: c.token })).code)
  assert.deepEqual(codes, [404, 404, 429])
  const refused = await rawRequest(tb, subject, '{}', { token: c.token })
  assert.equal(refused.body.error.type, 'rate_limited')
  assert.ok(Number(refused.headers['Retry-After-Ms']) > 0)
})

test(name("another partner's id or entity is 403, the same refusal whether it exists or not"), async () => {
  const refusals = []
  for (const subject of [`svc.account.${b.partnerId}.no_such_thing`,
      `svc.nothing.${b.partnerId}.x`, `svc.debit.${bEntity}.no_such_thing`,
      `svc.nothing.${randomUUID()}.x`, `svc.debit.${randomUUID()}.no_such_thing`,
      'svc.nothing.not-an-id.x']) {
    const reply = await rawRequest(tb, subject, '{}', { token: a.token })
    expectRefused(reply, 403, subject)
    refusals.push(reply.body)
  }
  // One body for all: nothing tells B's ids from ids that name no one.
  for (const body of refusals) assert.deepEqual(body, refusals[0])
  // As an operation on B's subject is refused.
  expectRefused(await rawRequest(tb, `svc.entity.${b.partnerId}.list-entities`, '{}',
    { token: a.token }), 403, 'list-entities')
})

test(name("an operator's unknown ops. subject is 404; a partner's token there, or an operator's on svc., is 403"), async () => {
  for (const subject of ['ops.nothing', 'ops.account.no_such_thing', 'ops.sandbox.x.y.z']) {
    expectNotFound(await rawRequest(tb, subject, '{}', { token: tb.operatorToken }), subject)
    expectRefused(await rawRequest(tb, subject, '{}', { token: a.token }), 403, subject)
  }
  for (const subject of ['net.card.no_such_thing', `svc.nothing.${a.partnerId}.x`]) {
    expectRefused(await rawRequest(tb, subject, '{}', { token: tb.operatorToken }), 403, subject)
  }
})

/**
 * Sends `count` requests on `subject` with one inbox of its own as their reply subject and
 * collects every reply until `reply_window_ms` after the last expected one: a request answered
 * twice shows as more replies than requests, one never answered as fewer.
 */
async function repliesTo(nc: NatsConnection, subject: string, token: string,
    count: number): Promise<Msg[]> {
  const inbox = createInbox()
  const replies: Msg[] = []
  let allIn: () => void = () => {}
  const arrived = new Promise<void>((resolve) => (allIn = resolve))
  const sub = nc.subscribe(inbox, {
    callback: (error, msg) => {
      if (error) return
      replies.push(msg)
      if (replies.length === count) allIn()
    },
  })
  await nc.flush()
  const h = natsHeaders()
  h.set('token', token)
  for (let i = 0; i < count; i++) nc.publish(subject, '{}', { reply: inbox, headers: h })
  await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, replies_bound_ms))])
  await new Promise((resolve) => setTimeout(resolve, reply_window_ms))
  sub.unsubscribe()
  return replies
}

/** Each reply a success listing `entityId`, one reply per request. */
function expectServedOnce(replies: Msg[], count: number, entityId: string, what: string): void {
  assert.equal(replies.length, count, `${what}: ${replies.length} replies to ${count} requests`)
  for (const reply of replies) {
    assert.equal(reply.headers?.get('Nats-Service-Error-Code') ?? '', '', reply.string())
    assert.ok((reply.json() as { entities: Array<{ id: string }> }).entities.some(
      (e) => e.id === entityId), what)
  }
}

test(name("the catch-all's lookup finds each operation's own endpoint for its concrete subjects, and none for unknown ones"), () => {
  const operations = allOperations()
  const served = new ServedSubjects(operations.map((op) => ({ op,
    subject: subscriptionSubject(op) })))
  for (const op of operations) {
    const subject = subjectFor(op, op.permission === 'operator' ? undefined : randomUUID())
    assert.equal(served.of(subject)?.op, op, subject)
  }
  for (const subject of [...unknownOfA(), 'svc.account.x.bulk_payment', 'ops.account',
      'svc.sandbox.x.clock.advance.more', 'ops.summary.x', 'net.card', 'svc.>', '']) {
    assert.equal(served.of(subject), undefined, subject)
  }
})

// The catch-all and the operation's own subscription both match a served subject; in one
// queue group the server gives each request to one of them (at random: 40 requests reach
// both), and the catch-all serves a served subject as the operation does.
test(name('a real operation is answered exactly once, by the operation'), async () => {
  const subject = `svc.entity.${a.partnerId}.list-entities`
  expectServedOnce(await repliesTo(tb.nc, subject, a.token, 40), 40, aEntity, 'bank account')
})

test(name("through the partner's own NATS account: 404, 401 and 403 as above, a real operation answered once"), async () => {
  for (const subject of [`svc.account.${a.partnerId}.no_such_thing`,
      `svc.nothing.${a.partnerId}.x`, `svc.entity.${a.partnerId}.list-entities.more`]) {
    expectNotFound(await rawRequest(tb, subject, '{}', { token: a.token }, a.nc), subject)
    expectRefused(await rawRequest(tb, subject, '{}', {}, a.nc), 401, subject)
    // B's token through A's account is refused as on a real operation.
    expectRefused(await rawRequest(tb, subject, '{}', { token: b.token }, a.nc), 401, subject)
  }
  const subject = `svc.entity.${a.partnerId}.list-entities`
  expectServedOnce(await repliesTo(a.nc, subject, a.token, 40), 40, aEntity, "partner's account")
})

test(name("an operator's unknown subject through the operators' account is 404"), async () => {
  for (const subject of ['ops.nothing', 'ops.account.no_such_thing']) {
    expectNotFound(await rawRequest(tb, subject, '{}', { token: tb.operatorToken }, operatorsNc),
      subject)
  }
})

async function expectNoResponders(nc: NatsConnection, subject: string, token: string) {
  const h = natsHeaders()
  h.set('token', token)
  await assert.rejects(nc.request(subject, '{}', { headers: h, timeout: 10_000 }),
    (error: Error) => /no responders/i.test(error.message), subject)
}

// Isolation: a partner's account imports only its own subjects (`svc.*.<partner_id>.>` and the
// entity-scoped operations' exact patterns), so the catch-all opens nothing of anyone else's.
test(name("attack: through A's account, B's subjects (known or not) and subjects outside A's imports have no responders at all"), async () => {
  for (const subject of [`svc.nothing.${b.partnerId}.x`, `svc.account.${b.partnerId}.no_such`,
      `svc.entity.${b.partnerId}.list-entities`, `svc.debit.${bEntity}.no_such_thing`,
      `svc.debit.${aEntity}.no_such_thing`, `svc.account.${a.partnerId}`, 'svc.nothing',
      'ops.nothing', 'net.card.nothing']) {
    await expectNoResponders(a.nc, subject, a.token)
    await expectNoResponders(a.nc, subject, b.token)
  }
  // B is still served, through its own account.
  expectServedOnce(await repliesTo(b.nc, `svc.entity.${b.partnerId}.list-entities`, b.token, 1),
    1, bEntity, 'B')
})
