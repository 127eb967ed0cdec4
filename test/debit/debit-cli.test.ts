import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { sast } from '../transfers/helpers.ts'
import { bankEnv, json, removeTempDirs, runBank } from '../cli/run-bank.ts'
import { activeMandate, orderBody } from './helpers.ts'

// `bank debit list --partner P [--entity E] [--status S]`: the operators' view of a
// partner's debit orders (ops.debit.list), each with the entity it belongs to.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '60000' } })
let p: TestPartner
let other: TestPartner
after(() => removeTempDirs())

before(async () => {
  await tb.ready
  await tb.bank.services.jobRunner.stop()
  tb.clock.set(sast('2026-11-23', '10:00'))
  p = await onboardPartner(tb, { approve: true })
  other = await onboardPartner(tb, { approve: true })
})

test('debit - bank debit list --partner P [--status S] lists the partner\'s orders with their entities', async () => {
  const mandate = await activeMandate(tb, p, p.rootEntityId)
  const first = await p.client.debitOrders.create(orderBody(p.rootEntityId, mandate))
  tb.clock.set(sast('2026-11-23', '10:01'))
  const second = await p.client.debitOrders.create(orderBody(p.rootEntityId, mandate))
  await p.client.debitOrders.cancel(
    { entity_id: p.rootEntityId, debit_order_id: first.debit_order_id })
  await other.client.debitOrders.create(orderBody(other.rootEntityId, await activeMandate(tb, other,
    other.rootEntityId)))

  const run = await runBank(['debit', 'list', '--partner', p.partnerId], bankEnv(tb))
  assert.equal(run.code, 0, run.stderr)
  const all = json(run) as { debit_orders: Array<{ debit_order_id: string; entity_id: string;
    status: string }>; total: number }
  assert.equal(all.total, 2)
  assert.deepEqual(all.debit_orders.map((o) => [o.debit_order_id, o.entity_id, o.status]), [
    [second.debit_order_id, p.rootEntityId, 'scheduled'],
    [first.debit_order_id, p.rootEntityId, 'cancelled'],
  ])
  const scheduled = json(await runBank(['debit', 'list', '--partner', p.partnerId, '--status',
    'scheduled'], bankEnv(tb))) as typeof all
  assert.deepEqual(scheduled.debit_orders.map((o) => o.debit_order_id), [second.debit_order_id])
  const byEntity = json(await runBank(['debit', 'list', '--partner', p.partnerId, '--entity',
    other.rootEntityId], bankEnv(tb))) as typeof all
  assert.equal(byEntity.total, 0)
  const bad = await runBank(['debit', 'list', '--partner', p.partnerId, '--status', 'done'],
    bankEnv(tb))
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /status/)
})
