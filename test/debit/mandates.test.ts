import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { contract, subjectFor } from '../../src/contract/index.ts'
import { createLogger } from '../../src/logger.ts'
import { JobRunner } from '../../src/jobs/job-runner.ts'
import { MandateService } from '../../src/debit/mandate-service.ts'
import type { MandateAuthenticator, MandateDecision, MandateToAuthenticate } from '../../src/debit/mandate-authenticator.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError, expectRefusal } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { assertErrorReply } from '../transport/error-reply.ts'
import { day_ms, sast } from '../transfers/helpers.ts'
import { activeMandate, mandateBody, orderBody } from './helpers.ts'

// Mandates (docs/guides/debit-orders.md): create answers pending_authentication; the debtor's
// bank (the MandateAuthenticator, asked by a job) makes it active or rejected, with its
// event in the same transaction; a bank that has not decided is asked again later. A
// reference is unique per entity; cancel ends the mandate and its scheduled orders.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let other: TestPartner

const monday = sast('2026-11-23', '10:00')

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(monday)
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

const entity = () => p.rootEntityId
const mandates = () => p.client.mandates
const runJobs = () => tb.bank.services.jobRunner.runDue()

async function eventsOf(resourceId: string) {
  return tb.bank.database.db.selectFrom('events').selectAll().where('resource_id', '=', resourceId)
    .orderBy('seq').execute()
}

async function mandateRow(reference: string, entityId = entity()) {
  return tb.bank.database.db.selectFrom('debit_mandates').selectAll().where('entity_id', '=',
    entityId).where('mandate_reference', '=', reference).executeTakeFirstOrThrow()
}

test('mandate - create answers pending_authentication; the authentication job makes it active with a mandate.active event', async () => {
  tb.clock.set(monday)
  const body = mandateBody(entity(), { first_collection_date: '2026-12-01',
    debtor_email: 'thandi@example.com' })
  const created = await mandates().create(body)
  assert.equal(created.status, 'pending_authentication')
  assert.equal(created.mandate_reference, body.mandate_reference)
  assert.equal(created.max_amount, '50000')
  assert.equal(created.first_collection_date, '2026-12-01')
  assert.equal(created.debtor_email, 'thandi@example.com')
  assert.equal(created.authenticated_at, null)
  assert.equal(created.created_at, '2026-11-23T08:00:00Z')
  const row = await mandateRow(body.mandate_reference)
  assert.deepEqual(await eventsOf(row.id), [])
  tb.clock.set(new Date(Date.parse(monday) + 5_000))
  await runJobs()
  const got =
    await mandates().get({ entity_id: entity(), mandate_reference: body.mandate_reference })
  assert.equal(got.status, 'active')
  assert.equal(got.authenticated_at, '2026-11-23T08:00:05Z')
  const events = await eventsOf(row.id)
  assert.deepEqual(events.map((e) => e.type), ['mandate.active'])
  assert.equal(events[0]!.partner_id, p.partnerId)
  assert.deepEqual(events[0]!.data, { ...got, entity_id: entity() })
  // Running the jobs again changes nothing and announces nothing twice.
  await runJobs()
  assert.equal((await eventsOf(row.id)).length, 1)
})

test('mandate - a reference is unique per entity (409); another entity may use it', async () => {
  tb.clock.set(monday)
  const body = mandateBody(entity())
  await mandates().create(body)
  const error = await expectApiError(mandates().create({ ...body, max_amount: 100 }), 409,
    'mandate_reference')
  assert.equal(error.type, 'conflict')
  const results = await Promise.allSettled(
    [0, 1, 2].map(() => mandates().create(mandateBody(entity(), { mandate_reference: 'RACE-1' }))))
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
  const second = (await p.client.entities.create(businessEntity())).id
  assert.equal((await mandates().create({ ...body, entity_id: second })).status,
    'pending_authentication')
  assert.equal((await other.client.mandates.create(
    { ...body, entity_id: other.rootEntityId })).status, 'pending_authentication')
})

test('mandate - get of an unknown reference or another entity\'s is a 404', async () => {
  tb.clock.set(monday)
  await expectRefusal(mandates().get({ entity_id: entity(), mandate_reference: 'NOPE' }), 404)
  const reference = await activeMandate(tb, other, other.rootEntityId)
  await expectRefusal(mandates().get({ entity_id: entity(), mandate_reference: reference }), 404)
  const foreign = await rawRequest(tb, subjectFor(contract.debit.mandateGet, other.rootEntityId),
    JSON.stringify({ mandate_reference: reference }), { token: p.token })
  assertErrorReply(foreign, 403, 'forbidden', 'another partner\'s entity')
})

test('mandate - list: newest first, status filter, limit/offset/total', async () => {
  tb.clock.set(monday)
  const owner = (await p.client.entities.create(businessEntity())).id
  const refs: string[] = []
  for (let i = 0; i < 4; i++) {
    tb.clock.set(new Date(Date.parse(monday) + i * 1000))
    const body = mandateBody(owner)
    await mandates().create(body)
    refs.push(body.mandate_reference)
  }
  await runJobs()
  await mandates().cancel({ entity_id: owner, mandate_reference: refs[0]! })
  const all = await mandates().list({ entity_id: owner })
  assert.deepEqual(all.mandates.map((m) => m.mandate_reference), [...refs].reverse())
  assert.equal(all.total, 4)
  assert.equal(all.limit, 100)
  const page = await mandates().list({ entity_id: owner, limit: 2, offset: 1 })
  assert.deepEqual(page.mandates.map((m) => m.mandate_reference), [refs[2], refs[1]])
  assert.equal(page.total, 4)
  assert.equal((await mandates().list({ entity_id: owner, status: 'active' })).total, 3)
  assert.deepEqual((await mandates().list({ entity_id: owner, status: 'cancelled' })).mandates.map(
    (m) => m.mandate_reference), [refs[0]])
  for (const [field, value] of [['limit', 0], ['limit', 1001], ['offset', -1],
      ['status', 'approved']] as const) {
    await expectRefusal(mandates().list({ entity_id: owner, [field]: value } as never), 400, field)
  }
})

test('mandate - cancel: cancelled with its scheduled orders (each with debit_order.cancelled); again a 400; unknown a 404', async () => {
  tb.clock.set(monday)
  const reference = await activeMandate(tb, p, entity())
  const orders = [
    await p.client.debitOrders.create(orderBody(entity(), reference,
      { collection_date: '2026-11-25' })),
    await p.client.debitOrders.create(orderBody(entity(), reference,
      { collection_date: '2026-12-10' })),
  ]
  const kept = await p.client.debitOrders.create(orderBody(entity(), reference,
    { collection_date: '2026-12-11' }))
  await p.client.debitOrders.cancel({ entity_id: entity(), debit_order_id: kept.debit_order_id })
  tb.clock.set(new Date(Date.parse(monday) + 60_000))
  const cancelled = await mandates().cancel({ entity_id: entity(), mandate_reference: reference,
    reason: 'debtor revoked' })
  assert.equal(cancelled.status, 'cancelled')
  assert.equal(cancelled.cancelled_at, '2026-11-23T08:01:00Z')
  for (const order of orders) {
    // Even inside the 24-hour window: without a mandate nothing may be collected.
    const status = await p.client.debitOrders.status(
      { entity_id: entity(), debit_order_id: order.debit_order_id })
    assert.equal(status.status, 'cancelled')
    assert.match(status.status_history.at(-1)!.description,
      new RegExp(`mandate ${reference} was cancelled`))
    assert.deepEqual((await eventsOf(order.debit_order_id)).map((e) => e.type),
      ['debit_order.cancelled'])
  }
  // The order cancelled before is not cancelled twice.
  assert.equal((await eventsOf(kept.debit_order_id)).length, 1)
  await expectRefusal(mandates().cancel({ entity_id: entity(), mandate_reference: reference }), 400,
    'mandate_reference', 'invalid_state')
  await expectRefusal(mandates().cancel({ entity_id: entity(), mandate_reference: 'NOPE' }), 404)
})

test('mandate - a pending mandate may be cancelled; its authentication then does nothing', async () => {
  tb.clock.set(monday)
  const body = mandateBody(entity())
  await mandates().create(body)
  await mandates().cancel({ entity_id: entity(), mandate_reference: body.mandate_reference })
  await runJobs()
  const row = await mandateRow(body.mandate_reference)
  assert.equal(row.status, 'cancelled')
  assert.deepEqual(await eventsOf(row.id), [])
})

test('mandate - bad input on every field is a 400 naming it, and stores nothing', async () => {
  tb.clock.set(monday)
  const count = async () => (await tb.bank.database.db.selectFrom('debit_mandates').select(
    (eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n
  const before = await count()
  const cases: Array<[string, unknown]> = [
    ['mandate_reference', ''], ['mandate_reference', 'has space'],
      ['mandate_reference', 'x'.repeat(36)], ['mandate_reference', 5],
    ['account_holder_name', ''], ['account_holder_name', 'x'.repeat(101)],
    ['account_number', '12345'], ['account_number', 'abcdefgh'],
    ['account_type', 'current'], ['branch_code', '12345'],
    ['max_amount', 99], ['max_amount', 1.5], ['max_amount', '50000'], ['max_amount', 2 ** 53],
    ['frequency', 'fortnightly'], ['first_collection_date', '2026-02-30'],
      ['first_collection_date', 'soon'],
    ['debtor_email', 'nobody'],
  ]
  for (const [field, value] of cases) await expectRefusal(
    mandates().create(mandateBody(entity(), { [field]: value })), 400, field)
  for (const field of ['mandate_reference', 'account_holder_name', 'account_number', 'account_type',
      'branch_code', 'max_amount', 'frequency']) {
    const body = mandateBody(entity()) as Record<string, unknown>
    delete body[field]
    await expectRefusal(mandates().create(body as never), 400, field)
  }
  assert.equal(await count(), before)
})

test('mandate - another partner\'s entity in the subject is a 403 on every mandate operation', async () => {
  for (const op of [contract.debit.mandateCreate, contract.debit.mandateGet,
      contract.debit.mandateList, contract.debit.mandateCancel]) {
    const reply = await rawRequest(tb, subjectFor(op, other.rootEntityId),
      JSON.stringify({ mandate_reference: 'X' }), { token: p.token })
    assertErrorReply(reply, 403, 'forbidden', op.name)
  }
  const readOnly = await tb.operator.credentials.create(
    { partner_id: p.partnerId, permissions: ['read'] })
  const reply = await rawRequest(tb, subjectFor(contract.debit.mandateCreate, entity()),
    JSON.stringify(mandateBody(entity())), { token: readOnly.token })
  assertErrorReply(reply, 403, 'forbidden', 'create without payments')
})

/** The debtor's bank as a test scripts it: an answer per attempt, and what it was asked. */
class ScriptedBank implements MandateAuthenticator {
  readonly asked: MandateToAuthenticate[] = []
  constructor(private readonly answer: (m: MandateToAuthenticate) => MandateDecision) {}
  async authenticateMandate(mandate: MandateToAuthenticate): Promise<MandateDecision> {
    this.asked.push(mandate)
    return this.answer(mandate)
  }
}

function withBank(bank: ScriptedBank) {
  const runner = new JobRunner(tb.bank.database.db, tb.clock, createLogger('silent'),
    { poll_ms: 60_000, concurrency_max: 1 })
  return { service: new MandateService(tb.bank.database.db, tb.clock, runner, bank), runner }
}

test('mandate - rejected by the debtor\'s bank: rejected with its reason and a mandate.rejected event', async () => {
  tb.clock.set(monday)
  const bank =
    new ScriptedBank(() => ({ outcome: 'rejected', reason: 'debtor declined on the banking app' }))
  const { service, runner } = withBank(bank)
  const body = mandateBody(entity())
  const caller = { partnerId: p.partnerId, credentialId: p.credentialId } as never
  await service.create(caller, entity(), { ...body, entity_id: undefined } as never)
  await runner.runDue()
  assert.equal(bank.asked.length, 1)
  assert.equal(bank.asked[0]!.account_number, body.account_number)
  assert.equal(bank.asked[0]!.max_amount, 50_000n)
  const got =
    await mandates().get({ entity_id: entity(), mandate_reference: body.mandate_reference })
  assert.equal(got.status, 'rejected')
  assert.equal(got.rejection_reason, 'debtor declined on the banking app')
  const row = await mandateRow(body.mandate_reference)
  assert.deepEqual((await eventsOf(row.id)).map((e) => e.type), ['mandate.rejected'])
  await expectRefusal(p.client.debitOrders.create(orderBody(entity(), body.mandate_reference)), 400,
    'mandate_reference')
  await expectRefusal(mandates().cancel(
    { entity_id: entity(), mandate_reference: body.mandate_reference }), 400, 'mandate_reference',
    'invalid_state')
})

test('mandate - a bank that has not decided is asked again when it says, on the bank\'s clock', async () => {
  tb.clock.set(monday)
  const bank = new ScriptedBank((m) => (m.attempt === 1 ? { outcome: 'pending',
    ask_again_at: new Date(m.created_at.getTime() + day_ms) } : { outcome: 'active' }))
  const { service, runner } = withBank(bank)
  const body = mandateBody(entity())
  await service.create({ partnerId: p.partnerId, credentialId: p.credentialId } as never, entity(),
    { ...body, entity_id: undefined } as never)
  await runner.runDue()
  assert.equal((await mandateRow(body.mandate_reference)).status, 'pending_authentication')
  assert.equal((await mandateRow(body.mandate_reference)).authentication_due_at?.toISOString(),
    new Date(Date.parse(monday) + day_ms).toISOString())
  tb.clock.set(new Date(Date.parse(monday) + day_ms - 1))
  await runner.runDue()
  assert.equal(bank.asked.length, 1)
  tb.clock.set(new Date(Date.parse(monday) + day_ms))
  await runner.runDue()
  assert.deepEqual(bank.asked.map((m) => m.attempt), [1, 2])
  const row = await mandateRow(body.mandate_reference)
  assert.equal(row.status, 'active')
  assert.deepEqual((await eventsOf(row.id)).map((e) => e.type), ['mandate.active'])
})

test('mandate - get and cancel name a bad mandate_reference in a 400', async () => {
  for (const bad of ['', 'a b', 'x'.repeat(36), 7]) {
    await expectRefusal(mandates().get({ entity_id: entity(), mandate_reference: bad as never }),
      400, 'mandate_reference')
    await expectRefusal(mandates().cancel({ entity_id: entity(), mandate_reference: bad as never }),
      400, 'mandate_reference')
  }
  await expectRefusal(mandates().cancel({ entity_id: entity(), mandate_reference: 'NOPE',
    reason: '' }), 400, 'reason')
})
