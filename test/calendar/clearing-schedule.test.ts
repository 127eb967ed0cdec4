import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { ManualClock } from '../../src/clock.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'

// The EFT clearing schedule: cycles at SAST times on business days (default 07:00, 10:00,
// 13:00, 16:00); each cycle runs once, on whichever instance claims it first.

let partner: TestPartner
let accountId: string
const clock = new ManualClock('2026-11-23T04:30:00Z') // Monday 06:30 SAST
const tb = useTestBank({ clock })

before(async () => {
  await tb.ready
  partner = await onboardPartner(tb, { approve: true })
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  accountId = accounts[0]!.account_id
  await tb.operator.accounts.deposit({ account_id: accountId, amount: 1_000_000 })
})

function eft(amount: number) {
  return partner.client.accounts.transfer({
    account_id: accountId,
    clientTxId: randomUUID(),
    amount,
    ref: 'schedule',
    own_ref: 'schedule test',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Recipient',
  })
}

test('clearing schedule - no cycle is due before the first one of the day, nor on a weekend', () => {
  const clearing = tb.bank.services.clearing
  assert.equal(clearing.dueCycle(new Date('2026-11-23T04:59:00Z')), undefined) // 06:59 SAST
  assert.equal(clearing.dueCycle(new Date('2026-11-21T10:00:00Z')), undefined) // Saturday
  assert.equal(clearing.dueCycle(new Date('2026-12-16T10:00:00Z')), undefined) // public holiday
  assert.deepEqual(clearing.dueCycle(new Date('2026-11-23T09:15:00Z')), {
    cycle: '2026-11-23T10:00',
    cutoff: new Date('2026-11-23T08:00:00Z'),
  })
})

test('clearing schedule - a due cycle settles EFTs taken before its cut-off, once', async () => {
  const clearing = tb.bank.services.clearing
  const early = await eft(10_000)
  assert.equal(await clearing.runDue(), undefined, 'nothing is due at 06:30 SAST')

  clock.set('2026-11-23T05:10:00Z') // 07:10 SAST: the 07:00 cycle is due, cut-off 07:00
  const late = await eft(20_000) // taken after the cut-off: waits for the 10:00 cycle
  const first = await clearing.runDue()
  assert.equal(first?.cycle, '2026-11-23T07:00')
  assert.equal(first?.settled, 1)
  assert.equal(await clearing.runDue(), undefined, 'a cycle runs once')

  const status = async (txId: string) => (await partner.client.accounts.getTransaction(
    { tx_id: txId })).transaction.status
  assert.equal(await status(early.tx_id), 'Successful')
  assert.equal(await status(late.tx_id), 'Pending')

  clock.set('2026-11-23T08:00:00Z') // 10:00 SAST
  const second = await clearing.runDue()
  assert.equal(second?.cycle, '2026-11-23T10:00')
  assert.equal(second?.settled, 1)
  assert.equal(await status(late.tx_id), 'Successful')
  assert.equal((await tb.operator.ledger.verify()).ok, true)
})
