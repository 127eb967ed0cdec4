import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import type { BankApiError } from '../../src/client/index.ts'
import { contract, subjectFor } from '../../src/contract/index.ts'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { expectApiError, expectRefusal } from '../support/assertions.ts'
import { businessEntity } from '../support/fixtures.ts'
import { assertErrorReply } from '../transport/error-reply.ts'
import { day_ms, sast } from '../transfers/helpers.ts'
import { activeMandate, debtor, mandateBody, orderBody } from './helpers.ts'

// Debit orders (docs/guides/debit-orders.md): create under an active mandate with the lead time,
// the move to a business day, end_date, tracking_days, reference and metadata limits, the
// mandate's 400s and 422s, the 30-day clientTxId window; cancel up to 24 hours before 00:00
// SAST of the collection date; status with its history; list with filters and paging; and
// tenancy. The job loop is stopped: mandates are authenticated when a test runs the jobs.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let other: TestPartner
let monthly: string

const monday = sast('2026-11-23', '10:00')

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(monday)
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
  monthly = await activeMandate(tb, p, p.rootEntityId, { max_amount: 50_000 })
})

const entity = () => p.rootEntityId
const debit = () => p.client.debitOrders
const create = (overrides: Record<string, unknown> = {}, mandate = monthly) => debit().create(
  orderBody(entity(), mandate, overrides))

test('debit - create answers scheduled with the collection date, the amount as a string and the reference', async () => {
  tb.clock.set(monday)
  const body = orderBody(entity(), monthly)
  const reply = await debit().create(body)
  assert.deepEqual(Object.keys(reply).sort(), ['amount', 'collection_date', 'debit_order_id',
    'reference', 'status'])
  assert.equal(reply.status, 'scheduled')
  assert.equal(reply.collection_date, '2026-12-01')
  assert.equal(reply.amount, '15000')
  assert.equal(reply.reference, 'Gym November')
  const status = await debit().status({ entity_id: entity(), debit_order_id: reply.debit_order_id })
  assert.equal(status.status, 'scheduled')
  assert.equal(status.amount, 15_000)
  assert.equal(status.collection_date, '2026-12-01')
  assert.equal(status.processed_date, null)
  assert.equal(status.bank_charges, '0')
  assert.equal(status.net_amount, '0')
  assert.equal(status.status_history.length, 1)
  assert.equal(status.status_history[0]!.status, 'scheduled')
  assert.equal(status.status_history[0]!.timestamp, '2026-11-23T08:00:00Z')
  assert.match(status.status_history[0]!.description, /first collection on 2026-12-01/)
  assert.equal('bank_reference' in status.status_history[0]!, false)
})

test('debit - the order credits the entity\'s oldest account, chosen and kept at create', async () => {
  tb.clock.set(monday)
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: entity() })
  await p.client.accounts.create({ entity_id: entity() })
  const reply = await create()
  const row = await tb.bank.database.db.selectFrom('debit_orders').selectAll().where('id', '=',
    reply.debit_order_id).executeTakeFirstOrThrow()
  assert.equal(row.account_id, accounts[0]!.account_id)
  assert.equal(row.tracking_days, 10)
  assert.equal(row.next_collection_date, '2026-12-01')
})

test('debit - lead time: on a Monday the earliest collection date is Wednesday; Tuesday is a 400', async () => {
  tb.clock.set(sast('2026-11-23', '00:00'))
  const refused = await expectRefusal(create({ collection_date: '2026-11-24' }), 400,
    'collection_date')
  assert.match(refused.message, /2026-11-25/)
  tb.clock.set(sast('2026-11-23', '23:59'))
  assert.equal((await create({ collection_date: '2026-11-25' })).collection_date, '2026-11-25')
  // 00:00 SAST on Tuesday is Monday 22:00 UTC: the SAST date decides, so Wednesday is too early
  // now.
  tb.clock.set(sast('2026-11-24', '00:00'))
  await expectRefusal(create({ collection_date: '2026-11-25' }), 400, 'collection_date')
  assert.equal((await create({ collection_date: '2026-11-26' })).collection_date, '2026-11-26')
  await expectRefusal(create({ collection_date: '2026-11-01' }), 400, 'collection_date')
})

test('debit - lead time across a weekend: created on a Friday the earliest is Tuesday', async () => {
  tb.clock.set(sast('2026-11-27', '12:00'))
  await expectRefusal(create({ collection_date: '2026-11-30' }), 400, 'collection_date')
  assert.equal((await create({ collection_date: '2026-12-01' })).collection_date, '2026-12-01')
  // Created on a Saturday: Monday and Tuesday are the two business days, so Tuesday is the
  // earliest.
  tb.clock.set(sast('2026-11-28', '12:00'))
  await expectRefusal(create({ collection_date: '2026-11-30' }), 400, 'collection_date')
  assert.equal((await create({ collection_date: '2026-12-01' })).collection_date, '2026-12-01')
})

test('debit - lead time across public holidays: 16 December, and Christmas with the Day of Goodwill', async () => {
  // Monday 14 December: Tuesday 15 is one business day, Wednesday 16 a holiday, Thursday 17 the
  // second.
  tb.clock.set(sast('2026-12-14', '09:00'))
  await expectRefusal(create({ collection_date: '2026-12-15', end_date: '2027-12-31' }), 400,
    'collection_date')
  assert.equal(
    (await create({ collection_date: '2026-12-16', end_date: '2027-12-31' })).collection_date,
    '2026-12-17')
  // Wednesday 23 December: Thursday 24 is one, 25 and 26 are holidays, then the weekend: Monday 28.
  tb.clock.set(sast('2026-12-23', '09:00'))
  await expectRefusal(create({ collection_date: '2026-12-24', end_date: '2027-12-31' }), 400,
    'collection_date')
  assert.equal(
    (await create({ collection_date: '2026-12-25', end_date: '2027-12-31' })).collection_date,
    '2026-12-28')
})

test('debit - a date that is not a business day moves forward, shown in create, status and list', async () => {
  tb.clock.set(monday)
  // Saturday 5 December → Monday 7 December.
  const reply = await create({ collection_date: '2026-12-05' })
  assert.equal(reply.collection_date, '2026-12-07')
  const status = await debit().status({ entity_id: entity(), debit_order_id: reply.debit_order_id })
  assert.equal(status.collection_date, '2026-12-07')
  assert.match(status.status_history[0]!.description, /asked for 2026-12-05/)
  const list = await debit().list({ entity_id: entity(), from_date: '2026-12-07',
    to_date: '2026-12-07' })
  const item = list.debit_orders.find((o) => o.debit_order_id === reply.debit_order_id)
  assert.equal(item?.collection_date, '2026-12-07')
  assert.equal(item?.next_collection_date, '2026-12-07')
  // A Sunday public holiday moves to the Monday (Public Holidays Act): 21 March 2027 is a
  // Sunday, so Monday 22 March is a holiday too and the order moves to Tuesday 23 March.
  assert.equal(
    (await create({ collection_date: '2027-03-21', end_date: '2027-12-31' })).collection_date,
    '2027-03-23')
})

test('debit - end_date: required for recurring orders, not before the (moved) collection date', async () => {
  tb.clock.set(monday)
  for (const frequency of ['weekly', 'monthly', 'annually'] as const) {
    const mandate = frequency === 'monthly' ? monthly : await activeMandate(tb, p, entity(),
      { frequency })
    const refused = await expectRefusal(create({ frequency, end_date: undefined }, mandate), 400,
      'end_date')
    assert.match(refused.message, /required/)
  }
  await expectRefusal(create({ collection_date: '2026-12-05', end_date: '2026-12-06' }), 400,
    'end_date')
  assert.equal(
    (await create({ collection_date: '2026-12-05', end_date: '2026-12-07' })).collection_date,
    '2026-12-07')
  const onceOff = await activeMandate(tb, p, entity(), { frequency: 'once_off' })
  assert.equal((await create({ frequency: 'once_off', end_date: undefined }, onceOff)).status,
    'scheduled')
})

test('debit - tracking_days 0 to 30 (default 10); reference at most 20; metadata at most 1 KB', async () => {
  tb.clock.set(monday)
  for (const days of [0, 30]) {
    const { debit_order_id } = await create({ tracking_days: days })
    const row = await tb.bank.database.db.selectFrom('debit_orders').select('tracking_days').where(
      'id', '=', debit_order_id).executeTakeFirstOrThrow()
    assert.equal(row.tracking_days, days)
  }
  for (const days of [-1, 31, 1.5]) await expectRefusal(create({ tracking_days: days }), 400,
    'tracking_days')
  assert.equal((await create({ reference: 'x'.repeat(20) })).reference, 'x'.repeat(20))
  await expectRefusal(create({ reference: 'x'.repeat(21) }), 400, 'reference')
  await expectRefusal(create({ reference: '' }), 400, 'reference')
  // {"k":"…"} is 8 bytes of JSON around the value.
  const at = { k: 'v'.repeat(1024 - 8) }
  assert.equal(Buffer.byteLength(JSON.stringify(at)), 1024)
  const { debit_order_id } = await create({ metadata: at })
  const row = await tb.bank.database.db.selectFrom('debit_orders').select('metadata').where('id',
    '=', debit_order_id).executeTakeFirstOrThrow()
  assert.deepEqual(row.metadata, at)
  await expectRefusal(create({ metadata: { k: 'v'.repeat(1024 - 7) } }), 400, 'metadata')
  await expectRefusal(create({ metadata: 'gold' }), 400, 'metadata')
})

test('debit - bad input on every field is a 400 naming it, and stores nothing', async () => {
  tb.clock.set(monday)
  const count = async () => (await tb.bank.database.db.selectFrom('debit_orders').select(
    (eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n
  const before = await count()
  const cases: Array<[string, unknown]> = [
    ['clientTxId', ''], ['clientTxId', 'has space'], ['clientTxId', 'x'.repeat(65)],
      ['clientTxId', 42],
    ['mandate_reference', ''], ['mandate_reference', 'a b'], ['mandate_reference', 'x'.repeat(36)],
    ['amount', 99], ['amount', 0], ['amount', -100], ['amount', 100.5], ['amount', '15000'],
      ['amount', 2 ** 53],
    ['collection_date', '2026-12-32'], ['collection_date', '2026-02-29'],
      ['collection_date', '01/12/2026'],
    ['collection_date', '2026-12-01T00:00:00Z'], ['collection_date', 20261201],
    ['account_holder_name', ''], ['account_holder_name', 'x'.repeat(101)],
    ['account_number', '12345'], ['account_number', '12345678901234567'],
      ['account_number', '12345678a0'],
    ['account_type', 'current'], ['account_type', 'Cheque'],
    ['branch_code', '25065'], ['branch_code', '2506551'], ['branch_code', 'abcdef'],
    ['reference', 'x'.repeat(21)], ['reference', 7],
    ['frequency', 'daily'], ['frequency', 'Monthly'],
    ['end_date', '2027-13-01'], ['end_date', 'never'],
    ['tracking_days', '10'], ['tracking_days', 31],
    ['notification_email', 'not-an-email'], ['notification_email', 'x'.repeat(250) + '@a.co'],
    ['metadata', [1, 2]], ['metadata', 'x'],
  ]
  for (const [field, value] of cases) {
    const error = await expectApiError(create({ [field]: value }), 400, field)
    assert.equal(error.type, 'invalid_request', `${field} = ${JSON.stringify(value)}`)
  }
  for (const field of ['clientTxId', 'mandate_reference', 'amount', 'collection_date',
      'account_holder_name', 'account_number', 'account_type', 'branch_code', 'reference',
      'frequency']) {
    const body = orderBody(entity(), monthly) as Record<string, unknown>
    delete body[field]
    await expectRefusal(debit().create(body as never), 400, field)
  }
  const raw = await rawRequest(tb, subjectFor(contract.debit.create, entity()),
    JSON.stringify({ ...orderBody(entity(), monthly), surprise: 1 }), { token: p.token })
  assertErrorReply(raw, 400, 'invalid_request', 'unknown field')
  assert.equal(await count(), before)
})

test('debit - mandate checks: unknown or inactive mandate 400; over max_amount, other account details or frequency 422', async () => {
  tb.clock.set(monday)
  await expectRefusal(create({}, 'NO-SUCH-MANDATE'), 400, 'mandate_reference')
  const overMax = await expectApiError(create({ amount: 50_001 }), 422, 'amount')
  assert.equal(overMax.type, 'unprocessable')
  assert.equal((await create({ amount: 50_000 })).amount, '50000')
  for (const [field, value] of [['account_number', '1234567891'], ['branch_code', '198765'],
      ['account_type', 'savings'], ['account_holder_name', 'Sipho Nkosi']] as const) {
    await expectApiError(create({ [field]: value }), 422, field)
  }
  // The holder's name is the same name whatever its case and spacing.
  assert.equal((await create({ account_holder_name: '  thandi   NKOSI ' })).status, 'scheduled')
  await expectApiError(create({ frequency: 'weekly' }), 422, 'frequency')
  // Another entity's mandate of the same reference is not this entity's.
  const second = (await p.client.entities.create(businessEntity())).id
  await expectRefusal(p.client.debitOrders.create(orderBody(second, monthly)), 400,
    'mandate_reference')
})

test('debit - a mandate pending authentication, rejected or cancelled serves no order (400)', async () => {
  tb.clock.set(monday)
  const pending = mandateBody(entity())
  await p.client.mandates.create(pending)
  const refused = await expectRefusal(create({}, pending.mandate_reference), 400,
    'mandate_reference')
  assert.match(refused.message, /pending_authentication/)
  await tb.bank.services.jobRunner.runDue()
  assert.equal((await create({}, pending.mandate_reference)).status, 'scheduled')
  await p.client.mandates.cancel(
    { entity_id: entity(), mandate_reference: pending.mandate_reference })
  await expectRefusal(create({}, pending.mandate_reference), 400, 'mandate_reference')
})

test('debit - a once_off mandate serves one order only (422), and a second order racing for it loses', async () => {
  tb.clock.set(monday)
  const onceOff = await activeMandate(tb, p, entity(), { frequency: 'once_off' })
  const bodies = [0, 1, 2].map(() => orderBody(entity(), onceOff,
    { frequency: 'once_off', end_date: undefined }))
  const results = await Promise.allSettled(bodies.map((b) => debit().create(b)))
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
  for (const r of results) if (r.status === 'rejected') assert.equal(
    (r.reason as { code: number }).code, 422)
  await expectApiError(create({ frequency: 'once_off', end_date: undefined }, onceOff), 422,
    'mandate_reference')
})

test('debit - clientTxId: within 30 days the same order is 409 duplicate and another 409 idempotency_key_reused, both naming the original order; after 30 days it is new', async () => {
  tb.clock.set(monday)
  const body = orderBody(entity(), monthly, { collection_date: '2027-01-05',
    end_date: '2027-12-31' })
  const first = await debit().create(body)
  const duplicate = await expectRefusal(debit().create(body), 'duplicate', 'clientTxId')
  assert.equal(duplicate.details[0]!.debit_order_id, first.debit_order_id)
  const reused = await expectRefusal(debit().create({ ...body, amount: 20_000 }),
    'idempotency_key_reused', 'amount')
  assert.deepEqual(reused.details.map((d) => [d.field, d.debit_order_id]),
    [['amount', first.debit_order_id]])
  // Another partner may use the same key.
  const theirs = await activeMandate(tb, other, other.rootEntityId)
  assert.equal(
    (await other.client.debitOrders.create(orderBody(other.rootEntityId, theirs,
    { clientTxId: body.clientTxId, collection_date: '2027-01-05',
    end_date: '2027-12-31' }))).status, 'scheduled')
  tb.clock.set(new Date(Date.parse(monday) + 30 * day_ms - 1))
  await expectApiError(debit().create(body), 409, 'clientTxId')
  tb.clock.set(new Date(Date.parse(monday) + 30 * day_ms))
  const again = await debit().create(body)
  assert.notEqual(again.debit_order_id, first.debit_order_id)
  await expectApiError(debit().create(body), 409, 'clientTxId')
})

test('debit - a refused request does not use up its clientTxId', async () => {
  tb.clock.set(monday)
  const body = orderBody(entity(), monthly, { amount: 99_999 })
  await expectApiError(debit().create(body), 422, 'amount')
  await expectRefusal(debit().create({ ...body, amount: 15_000, collection_date: '2026-11-24' }),
    400, 'collection_date')
  assert.equal((await debit().create({ ...body, amount: 15_000 })).status, 'scheduled')
})

test('debit - two creates with one clientTxId at once: one order, the other a 409', async () => {
  tb.clock.set(monday)
  const body = orderBody(entity(), monthly)
  const results = await Promise.allSettled([debit().create(body), debit().create(body),
    debit().create(body)])
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
  const rows = await tb.bank.database.db.selectFrom('debit_orders').select('id').where(
    'client_tx_id', '=', body.clientTxId).execute()
  assert.equal(rows.length, 1)
  for (const r of results) {
    if (r.status === 'fulfilled') continue
    const error = r.reason as BankApiError
    assert.deepEqual([error.code, error.type, error.details[0]?.debit_order_id],
      [409, 'duplicate', rows[0]!.id])
  }
})

test('debit - cancel up to 24 hours before 00:00 SAST of the collection date: 24 h + 1 s ok, 24 h − 1 s a 400', async () => {
  tb.clock.set(monday)
  const early = await create({ collection_date: '2026-12-03' })
  const late = await create({ collection_date: '2026-12-03' })
  const exact = await create({ collection_date: '2026-12-03' })
  // 00:00 SAST on 3 December is 2 December 22:00 UTC; the deadline is 1 December 22:00 UTC.
  const deadline = Date.parse('2026-12-01T22:00:00Z')
  tb.clock.set(new Date(deadline - 1000))
  const cancelled = await debit().cancel(
    { entity_id: entity(), debit_order_id: early.debit_order_id, reason: 'customer left' })
  assert.deepEqual(cancelled, { debit_order_id: early.debit_order_id, status: 'cancelled',
    cancelled_at: '2026-12-01T21:59:59Z' })
  tb.clock.set(new Date(deadline))
  assert.equal((await debit().cancel(
    { entity_id: entity(), debit_order_id: exact.debit_order_id })).status, 'cancelled')
  tb.clock.set(new Date(deadline + 1000))
  const refused = await expectRefusal(debit().cancel(
    { entity_id: entity(), debit_order_id: late.debit_order_id }), 400, 'debit_order_id',
    'invalid_state')
  assert.match(refused.message, /too late/)
  assert.equal((await debit().status(
    { entity_id: entity(), debit_order_id: late.debit_order_id })).status, 'scheduled')
  const status = await debit().status({ entity_id: entity(), debit_order_id: early.debit_order_id })
  assert.equal(status.status, 'cancelled')
  assert.deepEqual(status.status_history.map((h) => h.status), ['scheduled', 'cancelled'])
  assert.match(status.status_history[1]!.description, /customer left/)
  const event = await tb.bank.database.db.selectFrom('events').selectAll().where('resource_id', '=',
    early.debit_order_id).executeTakeFirstOrThrow()
  assert.equal(event.type, 'debit_order.cancelled')
  assert.equal(event.partner_id, p.partnerId)
  assert.equal((event.data as { status: string }).status, 'cancelled')
  assert.equal((event.data as { entity_id: string }).entity_id, entity())
})

test('debit - cancel of an order not scheduled is a 400; of an unknown, another entity\'s or another partner\'s order a 404', async () => {
  tb.clock.set(monday)
  const order = await create()
  await debit().cancel({ entity_id: entity(), debit_order_id: order.debit_order_id })
  await expectRefusal(debit().cancel({ entity_id: entity(), debit_order_id: order.debit_order_id }),
    400, 'debit_order_id', 'invalid_state')
  await expectRefusal(debit().cancel({ entity_id: entity(), debit_order_id: randomUUID() }), 404)
  await expectRefusal(debit().cancel({ entity_id: entity(), debit_order_id: 'not-a-uuid' }), 400,
    'debit_order_id')
  const theirs = await other.client.debitOrders.create(
    orderBody(other.rootEntityId, await activeMandate(tb, other, other.rootEntityId)))
  const foreign = await rawRequest(tb, subjectFor(contract.debit.cancel, entity()),
    JSON.stringify({ debit_order_id: theirs.debit_order_id }), { token: p.token })
  const unknown = await rawRequest(tb, subjectFor(contract.debit.cancel, entity()),
    JSON.stringify({ debit_order_id: randomUUID() }), { token: p.token })
  assertErrorReply(foreign, 404, 'not_found', 'foreign cancel')
  assert.deepEqual(foreign, unknown)
  const foreignStatus = await rawRequest(tb, subjectFor(contract.debit.status, entity()),
    JSON.stringify({ debit_order_id: theirs.debit_order_id }), { token: p.token })
  assertErrorReply(foreignStatus, 404, 'not_found', 'foreign status')
  assert.equal((await other.client.debitOrders.status({ entity_id: other.rootEntityId,
    debit_order_id: theirs.debit_order_id })).status, 'scheduled')
})

test('debit - tenancy: another partner\'s entity in the subject is a 403; an entity_id in the body must be the subject\'s', async () => {
  tb.clock.set(monday)
  for (const op of [contract.debit.create, contract.debit.list, contract.debit.status,
      contract.debit.cancel, contract.debit.mandateCreate, contract.debit.mandateList]) {
    const reply = await rawRequest(tb, subjectFor(op, other.rootEntityId), JSON.stringify({}),
      { token: p.token })
    assertErrorReply(reply, 403, 'forbidden', op.name)
  }
  const mismatch = await rawRequest(tb, subjectFor(contract.debit.list, entity()),
    JSON.stringify({ entity_id: other.rootEntityId }), { token: p.token })
  assertErrorReply(mismatch, 400, 'invalid_request', 'entity_id mismatch')
})

test('debit - list: newest first with ties by id, filters by status and collection date, limit/offset/total', async () => {
  tb.clock.set(sast('2026-11-23', '11:00'))
  const second = (await p.client.entities.create(businessEntity())).id
  await tb.operator.entities.review({ entity_id: second, decision: 'approve' })
  const mandate = await activeMandate(tb, p, second)
  const made: string[] = []
  for (let i = 0; i < 5; i++) {
    // Two at each instant: the id decides between them.
    tb.clock.set(new Date(Date.parse(sast('2026-11-23', '11:00')) + Math.floor(i / 2) * 1000))
    made.push((await p.client.debitOrders.create(orderBody(second, mandate,
      { collection_date: `2026-12-0${i + 1}`, end_date: '2027-01-31' }))).debit_order_id)
  }
  await p.client.debitOrders.cancel({ entity_id: second, debit_order_id: made[4]! })
  const all = await p.client.debitOrders.list({ entity_id: second })
  assert.equal(all.total, 5)
  assert.equal(all.limit, 100)
  assert.equal(all.offset, 0)
  const expected = made.map((id, i) => ({ id, t: Math.floor(i / 2) })).sort((a, b) => b.t - a.t
    || (a.id < b.id ? 1 : -1)).map((x) => x.id)
  assert.deepEqual(all.debit_orders.map((o) => o.debit_order_id), expected)
  const item = all.debit_orders.find((o) => o.debit_order_id === made[0])!
  assert.deepEqual(Object.keys(item).sort(), ['account_holder_name', 'amount', 'clientTxId',
    'collection_date', 'created_at', 'debit_order_id', 'frequency', 'mandate_reference',
    'next_collection_date', 'processed_date', 'reference', 'status'])
  assert.equal(item.amount, 15_000)
  assert.equal(item.mandate_reference, mandate)
  const page = await p.client.debitOrders.list({ entity_id: second, limit: 2, offset: 1 })
  assert.deepEqual(page.debit_orders.map((o) => o.debit_order_id), expected.slice(1, 3))
  assert.equal(page.total, 5)
  const scheduled = await p.client.debitOrders.list({ entity_id: second, status: 'scheduled' })
  assert.equal(scheduled.total, 4)
  const cancelled = await p.client.debitOrders.list({ entity_id: second, status: 'cancelled' })
  assert.deepEqual(cancelled.debit_orders.map((o) => o.debit_order_id), [made[4]])
  assert.equal(cancelled.debit_orders[0]!.next_collection_date, null)
  const dated = await p.client.debitOrders.list({ entity_id: second, from_date: '2026-12-02',
    to_date: '2026-12-03' })
  assert.deepEqual(dated.debit_orders.map((o) => o.collection_date).sort(),
    ['2026-12-02', '2026-12-03'])
  assert.equal((await p.client.debitOrders.list({ entity_id: second, status: 'successful' })).total,
    0)
  await assertListLimits(second, 5)
  // The other partner sees none of them.
  assert.equal(
    (await other.client.debitOrders.list({ entity_id: other.rootEntityId })).debit_orders.some(
    (o) => made.includes(o.debit_order_id)), false)
})

/**
 * Limits and filters of the list of an entity with `orders` debit orders: each bad value a 400
 * naming its field; a limit of 1000 is taken; a date range that ends before it starts is not.
 */
async function assertListLimits(entityId: string, orders: number): Promise<void> {
  for (const [field, value] of [['limit', 0], ['limit', 1001], ['offset', -1], ['status', 'done'],
      ['from_date', '2026-12'], ['to_date', 'x']] as const) {
    await expectRefusal(p.client.debitOrders.list({ entity_id: entityId, [field]: value } as never),
      400, field)
  }
  assert.equal(
    (await p.client.debitOrders.list({ entity_id: entityId, limit: 1000 })).debit_orders.length,
    orders)
  await expectRefusal(p.client.debitOrders.list({ entity_id: entityId, from_date: '2026-12-03',
    to_date: '2026-12-02' }), 400, 'to_date')
}

test('debit - the debtor account of an order must be the mandate\'s, field by field', async () => {
  tb.clock.set(monday)
  const error =
    await expectApiError(create({ account_number: '9999999999', branch_code: '111111' }), 422)
  const fields = (error.details as Array<{ field: string }>).map((d) => d.field).sort()
  assert.deepEqual(fields, ['account_number', 'branch_code'])
  assert.equal(debtor.account_type, 'cheque')
})

test('debit - a recurring order between collections is cancelled against its next collection date', async () => {
  tb.clock.set(monday)
  const order = await create({ collection_date: '2026-12-01' })
  // As a collection run leaves it after its first collection: scheduled again, next date a month
  // on.
  await tb.bank.database.db.updateTable('debit_orders').set({ next_collection_date: '2027-01-04' })
    .where('id', '=', order.debit_order_id).execute()
  tb.clock.set(sast('2026-12-20', '12:00'))
  const cancelled =
    await debit().cancel({ entity_id: entity(), debit_order_id: order.debit_order_id })
  assert.equal(cancelled.status, 'cancelled')
  const listed = await debit().list({ entity_id: entity(), status: 'cancelled',
    from_date: '2026-12-01', to_date: '2026-12-01' })
  assert.equal(listed.debit_orders.find((o) => o.debit_order_id === order.debit_order_id)
    ?.next_collection_date, null)
})

test('debit - status and cancel name a bad debit_order_id in a 400; an unknown one is a 404', async () => {
  for (const bad of ['', 'not-a-uuid', 42]) {
    await expectRefusal(debit().status({ entity_id: entity(), debit_order_id: bad as never }), 400,
      'debit_order_id')
    await expectRefusal(debit().cancel({ entity_id: entity(), debit_order_id: bad as never }), 400,
      'debit_order_id')
  }
  await expectRefusal(debit().status({ entity_id: entity(), debit_order_id: randomUUID() }), 404)
  await expectRefusal(debit().cancel({ entity_id: entity(), debit_order_id: randomUUID(),
    reason: 'x'.repeat(201) }), 400, 'reason')
})
