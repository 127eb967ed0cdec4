import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RailOutcome } from '../../src/rails/rail.ts'
import type { OutgoingTransfer } from '../../src/rails/iso-rail.ts'
import { useTestBank } from '../support/harness.ts'
import { outcome } from '../support/assertions.ts'
import { fundedAccount, transferBody } from './helpers.ts'

// An RTC is taken in two steps (src/transfers/transfer-service.ts): reserve (hold), then
// the rail call and settle. A clearing run "recovers" an RTC still Pending a minute after
// it was taken, on the theory that its settle step was lost in a crash; but a slow rail
// call (or a long settle queue) looks the same. The recovery and the late settle step
// then race for one payout, and only one of them is allowed
// to move money. The rail is slowed here by wrapping the running instance's rail, so that
// the clearing run lands exactly inside the gap.

const tb = useTestBank()

/** Holds the first rail call for payments of `amount` until released; later calls pass. */
function slowRailFor(amount: bigint) {
  const rail = tb.bank.services.isoRail
  const original = rail.payRealTime
  const held = new Set<string>()
  let entered!: () => void
  let release!: () => void
  const called = new Promise<void>((resolve) => (entered = resolve))
  const gate = new Promise<void>((resolve) => (release = resolve))
  rail.payRealTime = async (payment: OutgoingTransfer): Promise<RailOutcome | undefined> => {
    if (payment.amount === amount && !held.has(payment.tx_id)) {
      held.add(payment.tx_id)
      entered()
      await gate
    }
    return original.call(rail, payment)
  }
  return { called, release, restore: () => (rail.payRealTime = original) }
}

test('transfers - an RTC recovered by a clearing run while its rail call is slow moves money once', async () => {
  const amount = 7_777
  const total = BigInt(amount) + tb.config.fees.RTC
  const slow = slowRailFor(BigInt(amount))
  try {
    const f = await fundedAccount(tb, 1_000_000)
    const pending =
      outcome(f.partner.client.accounts.transfer(transferBody(f.accountId, amount, true)))
    await slow.called
    // More than the recovery delay passes while the rail call is outstanding.
    tb.clock.advance(120_000)
    const report = await tb.operator.clearing.run()
    assert.equal(report.rtc_recovered, 1)
    // Another payment's hold, taken after the run: a second settle would eat into it.
    const eft = await f.partner.client.accounts.transfer(transferBody(f.accountId, 100_000, false))
    const eftHold = 100_000n + tb.config.fees.EFT
    slow.release()
    const reply = await pending
    assert.ok(reply.ok, `the late settle step answers the ` +
      `partner: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'Successful')

    const details = await f.partner.client.accounts.getDetails({ account_id: f.accountId })
    assert.equal(BigInt(details.balance), 1_000_000n - total, 'the RTC was debited once')
    assert.equal(BigInt(details.available_balance), 1_000_000n - total - eftHold,
      'the EFT keeps its whole hold')
    const { transactions } = await f.partner.client.accounts.listTransactions(
      { account_id: f.accountId })
    assert.equal(transactions.find((t) => t.tx_id === eft.tx_id)?.status, 'Pending')
    assert.equal(transactions.find((t) => t.tx_id === reply.value.tx_id)?.status, 'Successful')
    const verify = await tb.operator.ledger.verify()
    assert.deepEqual(verify.problems, [])
  } finally {
    slow.restore()
  }
})

test('transfers - an RTC recovered by a clearing run while its rail call is slow: the settle step answers, not a 500', async () => {
  const amount = 6_666
  const total = BigInt(amount) + tb.config.fees.RTC
  const slow = slowRailFor(BigInt(amount))
  try {
    const f = await fundedAccount(tb, 500_000)
    const pending =
      outcome(f.partner.client.accounts.transfer(transferBody(f.accountId, amount, true)))
    await slow.called
    tb.clock.advance(120_000)
    assert.equal((await tb.operator.clearing.run()).rtc_recovered, 1)
    slow.release()
    const reply = await pending
    assert.ok(reply.ok, `the late settle step answers the ` +
      `partner: ${reply.ok ? '' : `${reply.error.code} ${reply.error.message}`}`)
    assert.equal(reply.value.status, 'Successful')
    const details = await f.partner.client.accounts.getDetails({ account_id: f.accountId })
    assert.deepEqual([BigInt(details.balance), BigInt(details.available_balance)],
      [500_000n - total, 500_000n - total])
    assert.deepEqual((await tb.operator.ledger.verify()).problems, [])
  } finally {
    slow.restore()
  }
})
