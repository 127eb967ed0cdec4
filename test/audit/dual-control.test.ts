import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { OperatorClient } from '../../src/client/index.ts'
import { onboardPartner, useTestBank, type TestPartner, secondOperator } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'
import { operatorCredentialId } from '../kyc/helpers.ts'
import { balances, newAccount, transactionsOf, txById } from '../transfers/helpers.ts'

// Dual control: above BANK_DUAL_CONTROL_CENTS a deposit or reversal waits for a second
// operator, moves nothing before, and nothing at all when rejected or expired.

const threshold = 100_000
const tb = useTestBank({ env: { BANK_DUAL_CONTROL_CENTS: String(threshold) } })
let p: TestPartner
let maker: string
let checker: OperatorClient
let checkerId: string

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
  maker = await operatorCredentialId(tb)
  const second = await secondOperator(tb)
  checker = second.client
  checkerId = second.id
})

test('dual control - at the threshold a deposit moves at once; above it, it waits and nothing moves', async () => {
  const account = await newAccount(p)
  const at = await tb.operator.accounts.deposit({ account_id: account, amount: threshold })
  assert.equal(at.status, 'Successful')
  const above = await tb.operator.accounts.deposit({ account_id: account, amount: threshold + 1,
    ref: 'Big one' })
  assert.equal(above.status, 'pending_approval')
  assert.equal(above.tx_id, null)
  assert.ok(above.approval_id)
  assert.equal(above.balance, String(threshold))
  assert.deepEqual(await balances(p, account), { balance: String(threshold),
    available: String(threshold) })
  assert.equal((await transactionsOf(p, account)).length, 1)
  const waiting = (await checker.approvals.list({})).approvals.find(
    (a) => a.approval_id === above.approval_id)
  assert.equal(waiting?.state, 'pending_approval')
  assert.equal(waiting?.kind, 'deposit')
  assert.equal(waiting?.requested_by, maker)
  assert.equal(waiting?.requested_by_name, 'bootstrap')
  assert.deepEqual(waiting?.request, { ref: 'Big one' })
})

test('dual control - the requester cannot approve their own request; another operator can, and the money moves then', async () => {
  const account = await newAccount(p)
  const asked = await tb.operator.accounts.deposit({ account_id: account, amount: 250_000,
    ref: 'Seed' })
  await expectApiError(tb.operator.approvals.approve({ approval_id: asked.approval_id! }), 403)
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  const approved = await checker.approvals.approve({ approval_id: asked.approval_id! })
  assert.equal(approved.state, 'approved')
  assert.equal(approved.decided_by, checkerId)
  assert.equal(approved.decided_by_name, 'checker')
  assert.ok(approved.tx_id)
  assert.deepEqual(await balances(p, account), { balance: '250000', available: '250000' })
  const tx = await txById(p, approved.tx_id!)
  assert.equal(tx.tx_type, 'deposit')
  assert.equal(tx.ref, 'Seed')
  assert.equal(tx.added_by, maker, 'the money is attributed to the operator who asked for it')
  // Once decided, it cannot be decided again.
  await expectApiError(checker.approvals.approve({ approval_id: asked.approval_id! }), 409)
  await expectApiError(
    checker.approvals.reject({ approval_id: asked.approval_id!, reason: 'late' }), 409)
  // The trail: asked by one operator, approved by the other, the self-approval refused.
  const trail = (await tb.operator.audit.list({ target: asked.approval_id! })).entries.map(
    (e) => [e.action, e.actor, e.result.slice(0, 3)])
  assert.deepEqual(trail, [
    ['approvals.reject', checkerId, '409'],
    ['approvals.approve', checkerId, '409'],
    ['approvals.approve', checkerId, 'ok'],
    ['approvals.approve', maker, '403'],
    ['account.deposit', maker, 'ok'],
  ])
  assert.deepEqual((await tb.operator.ledger.verify({})).problems, [])
})

test('dual control - a rejected request moves nothing', async () => {
  const account = await newAccount(p)
  const asked = await tb.operator.accounts.deposit({ account_id: account, amount: 500_000 })
  const rejected = await checker.approvals.reject({ approval_id: asked.approval_id!,
    reason: 'no matching inbound payment' })
  assert.equal(rejected.state, 'rejected')
  assert.equal(rejected.reason, 'no matching inbound payment')
  assert.equal(rejected.tx_id, null)
  await expectApiError(checker.approvals.approve({ approval_id: asked.approval_id! }), 409)
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  assert.equal((await transactionsOf(p, account)).length, 0)
  assert.ok((await checker.approvals.list({ state: 'rejected' })).approvals.some(
    (a) => a.approval_id === asked.approval_id))
})

test('dual control - after 24 hours a request is expired: it cannot be approved and nothing moves', async () => {
  const account = await newAccount(p)
  const asked = await tb.operator.accounts.deposit({ account_id: account, amount: 300_000 })
  const start = tb.clock.now()
  tb.clock.set(new Date(start.getTime() + 24 * 3600_000))
  try {
    await expectApiError(checker.approvals.approve({ approval_id: asked.approval_id! }), 409)
    assert.ok(!(await checker.approvals.list({})).approvals.some(
      (a) => a.approval_id === asked.approval_id))
    const expired = (await checker.approvals.list({ state: 'expired' })).approvals.find(
      (a) => a.approval_id === asked.approval_id)
    assert.equal(expired?.state, 'expired')
    assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  } finally {
    tb.clock.set(start)
  }
})

test('dual control - a reversal above the threshold waits too, and moves on approval', async () => {
  const account = await newAccount(p)
  const small = await tb.operator.accounts.deposit({ account_id: account, amount: 1_000 })
  assert.equal((await tb.operator.accounts.reverse({ tx_id: small.tx_id!, reason: 'test' })).status,
    'Successful')
  const asked = await tb.operator.accounts.deposit({ account_id: account, amount: 400_000 })
  const deposit = await checker.approvals.approve({ approval_id: asked.approval_id! })
  const reversal = await tb.operator.accounts.reverse(
    { tx_id: deposit.tx_id!, reason: 'credited in error' })
  assert.equal(reversal.status, 'pending_approval')
  assert.deepEqual(await balances(p, account), { balance: '400000', available: '400000' })
  assert.equal((await txById(p, deposit.tx_id!)).status, 'Successful')
  const approved = await checker.approvals.approve({ approval_id: reversal.approval_id! })
  assert.equal(approved.kind, 'reversal')
  assert.deepEqual(await balances(p, account), { balance: '0', available: '0' })
  assert.equal((await txById(p, deposit.tx_id!)).status, 'Reversed')
  assert.equal((await txById(p, approved.tx_id!)).parent_tx_id, deposit.tx_id)
  assert.deepEqual((await tb.operator.ledger.verify({})).problems, [])
})

test('dual control - the sandbox has it off unless set, production on at R50,000.00', async () => {
  const { loadConfig } = await import('../../src/config.ts')
  assert.equal(loadConfig({ BANK_SANDBOX: 'true' }).dualControlCents, undefined)
  const production = { BANK_SANDBOX: 'false', BANK_RAIL_DIR: '/srv/rail' }
  assert.equal(loadConfig(production).dualControlCents, 5_000_000n)
  assert.equal(loadConfig({ ...production, BANK_DUAL_CONTROL_CENTS: '0' }).dualControlCents,
    undefined)
  assert.equal(loadConfig({ BANK_SANDBOX: 'true', BANK_DUAL_CONTROL_CENTS: '100' })
    .dualControlCents, 100n)
})
