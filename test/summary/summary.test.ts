import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, rawRequest, useTestBank, type TestPartner } from '../support/harness.ts'
import { uuidv7Floor } from '../../src/summary/summary-store.ts'
import { newRowId } from '../../src/ledger/row-id.ts'

// ops.summary, the operators' overview: money totals and holds, payments per minute over the
// last hour (by the bank's clock), the job queue, webhooks and the clearing schedule, from
// indexed aggregates.

const tb = useTestBank()
let partner: TestPartner
let poolAccountId: string

before(async () => {
  await tb.ready
  partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await tb.operator.accounts.list({ entity_id: partner.rootEntityId })
  poolAccountId = accounts[0]!.account_id
})

test('summary - money totals and payments per minute follow the deposits, by the bank clock', async () => {
  const before = await tb.operator.summary.get()
  await tb.operator.accounts.deposit({ account_id: poolAccountId, amount: 123_45 })
  await tb.operator.accounts.deposit({ account_id: poolAccountId, amount: 100 })
  const after = await tb.operator.summary.get()
  assert.equal(BigInt(after.money.balance_total) - BigInt(before.money.balance_total), 12_445n)
  assert.equal(after.money.held_total, '0')
  assert.equal(after.money.available_total, after.money.balance_total)
  assert.equal(after.payments.per_minute.length, 60)
  assert.equal(after.payments.last_hour - before.payments.last_hour, 2)
  assert.equal(after.payments.per_minute.at(-1)! - before.payments.per_minute.at(-1)!, 2)
  assert.equal(after.now, tb.clock.now().toISOString().replace('.000Z', 'Z'))
  // An hour later by the bank's clock, they have left the window.
  tb.clock.advance(61 * 60_000)
  const later = await tb.operator.summary.get()
  assert.equal(later.payments.last_hour, 0)
  assert.equal(later.money.balance_total, after.money.balance_total)
})

test('summary - the clearing schedule lists the next cycles on business days, in order', async () => {
  const s = await tb.operator.summary.get()
  assert.ok(s.clearing.cycles_sast.length > 0)
  assert.equal(s.clearing.next_cycles.length, 3)
  const times = s.clearing.next_cycles.map((t) => Date.parse(t))
  assert.ok(times[0]! > Date.parse(s.now))
  assert.deepEqual(
    [...times].sort((a, b) => a - b),
    times,
  )
  await tb.operator.clearing.run({})
  const ran = await tb.operator.summary.get()
  assert.equal(ran.clearing.last_run?.state, 'done')
  assert.match(ran.clearing.last_run!.cycle, /^manual:/)
  assert.equal(ran.webhooks.window, 100)
  assert.ok(ran.webhooks.failure_rate >= 0 && ran.webhooks.failure_rate <= 1)
})

test('summary - unknown fields are a 400; a partner credential is refused', async () => {
  const reply = await rawRequest(tb, 'ops.summary', JSON.stringify({ nope: 1 }), {
    token: tb.operatorToken,
  })
  assert.equal(reply.code, 400)
  const partnerReply = await rawRequest(tb, 'ops.summary', '{}', { token: partner.token })
  assert.equal(partnerReply.code, 403)
})

test('summary - the id floor is the smallest UUIDv7 of its millisecond', () => {
  const at = Date.parse('2026-11-23T08:00:00Z')
  const floor = uuidv7Floor(at)
  assert.match(floor, /^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-000000000000$/)
  assert.ok(newRowId(at) >= floor, 'an id of the same millisecond sorts at or after it')
  assert.ok(newRowId(at - 1) < floor, 'an id of the millisecond before sorts before it')
})
