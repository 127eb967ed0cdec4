import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import { createLogger } from '../../src/logger.ts'
import type { RailOutcome } from '../../src/rails/rail.ts'
import type { IsoRail, OutgoingTransfer } from '../../src/rails/iso-rail.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { onboardPartner, storage, useTestBank, type TestPartner } from '../support/harness.ts'
import { magic } from '../transfers/helpers.ts'

// Bulk payments with more than one instance (issue 8, "two instances processing batches
// without paying anything twice"). Several batches are verified at once; every instance's
// job runner takes `bulk.process` jobs (RTC), and a clearing cycle run on both instances at
// once takes the EFTs. Each payment must be paid once: one `bulk_payment` row of its own,
// a refund only when it failed, the account down by exactly the payments made and their
// fees, and a clean ledger.
//
// Each instance runs one job at a time (BANK_JOBS_CONCURRENCY_MAX=1), and the first rail
// call of one instance waits until the other instance's rail has been called: so both
// instances certainly run processing jobs, at the same time. On PGlite (an embedded
// database owned by one process, so no second instance) the same batches are paid by the
// one instance.

const tb = useTestBank({ env: { BANK_JOBS_POLL_MS: '100', BANK_JOBS_CONCURRENCY_MAX: '1' } })

const limits = { batches: 4, payments_per_batch: 150, wait_ms: 60_000, poll_interval_ms: 25,
  gate_wait_ms: 20_000 }

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface RailLog {
  /** RTC tx_ids this instance's rail was asked to pay, with how often. */
  realTime: Map<string, number>
  eft: Map<string, number>
  restore(): void
}

/**
 * Records what one instance asks its rail; `gate` (if given) holds its first call until it
 * resolves.
 */
function watchRail(rail: IsoRail, gate?: Promise<unknown>): RailLog {
  const log: RailLog = { realTime: new Map(), eft: new Map(), restore: () => {} }
  const original = { payRealTime: rail.payRealTime, submitEft: rail.submitEft }
  rail.payRealTime = async (payment: OutgoingTransfer): Promise<RailOutcome | undefined> => {
    log.realTime.set(payment.tx_id, (log.realTime.get(payment.tx_id) ?? 0) + 1)
    if (gate) await gate
    return original.payRealTime.call(rail, payment)
  }
  rail.submitEft = async (payments: readonly OutgoingTransfer[], date: string) => {
    for (const p of payments) log.eft.set(p.tx_id, (log.eft.get(p.tx_id) ?? 0) + 1)
    return original.submitEft.call(rail, payments, date)
  }
  log.restore = () => Object.assign(rail, original)
  return log
}

/** Resolves once `log` shows a rail call, or after `gate_wait_ms` (the assertion then fails). */
async function firstCallOf(log: RailLog): Promise<void> {
  const deadline = Date.now() + limits.gate_wait_ms
  while (log.realTime.size === 0 && Date.now() < deadline) await pause(limits.poll_interval_ms)
}

function batchBody(p: TestPartner, n: number) {
  const failing: Record<number, Record<string, string>> = {
    3: { account_number: magic.failed },
    40: { account_number: magic.invalid },
    77: { branch_code: magic.invalidBranch },
    120: { account_number: magic.failed },
  }
  const payments = Array.from({ length: limits.payments_per_batch }, (_, i) => ({
    payment_id: `b${n}-p${i}`,
    amount: 500 + i,
    ref: `Two ${n}.${i}`,
    own_ref: `two instances ${n}`,
    account_number: '62000000001',
    branch_code: '250655',
    name: `Recipient ${i}`,
    real_time: i % 4 !== 0,
    ...failing[i],
  }))
  return {
    entity_id: p.rootEntityId,
    bulk_payment_id: `two-${n}`,
    total_amount: payments.reduce((sum, x) => sum + x.amount, 0),
    payment_count: payments.length,
    description: `two instances ${n}`,
    payments,
  }
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + limits.wait_ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await pause(limits.poll_interval_ms)
  }
}

/**
 * Verifies `batches` batches at once, waits until their RTC payments are booked, runs a
 * clearing cycle on every instance at once for the EFTs, and checks that every payment was
 * paid once. Returns what each instance's rail was asked.
 */
async function payBatches(instances: Bank[], logs: RailLog[]): Promise<void> {
  const p = await onboardPartner(tb, { approve: true })
  const { accounts } = await p.client.accounts.getByEntity({ entity_id: p.rootEntityId })
  const accountId = accounts[0]!.account_id
  const funded = 50_000_000
  await tb.operator.accounts.deposit({ account_id: accountId, amount: funded, ref: 'funding' })
  const bodies = Array.from({ length: limits.batches }, (_, n) => batchBody(p, n))
  for (const body of bodies) await p.client.bulkPayments.initiate(body)
  const otps = await Promise.all(bodies.map((b) => tb.operator.sandbox.otp(
    { bulk_payment_id: b.bulk_payment_id, partner_id: p.partnerId })))
  await Promise.all(bodies.map((b, i) => p.client.bulkPayments.verify(
    { entity_id: p.rootEntityId, bulk_payment_id: b.bulk_payment_id, otp: otps[i]!.otp })))

  const rtcCount = bodies[0]!.payments.filter((x) => x.real_time).length
  const finals = await completeBatches(instances, p, bodies, rtcCount)
  await assertPaidOnce(p, accountId, funded, finals)

  // Each RTC went to the rail from one instance only: no job ran twice.
  const rtcCalls = new Map<string, number>()
  for (const log of logs) for (const [txId, n] of log.realTime) rtcCalls.set(txId,
    (rtcCalls.get(txId) ?? 0) + n)
  assert.equal(rtcCalls.size, limits.batches * rtcCount, 'every RTC payment went to the rail')
  assert.deepEqual([...rtcCalls.values()].filter((n) => n !== 1), [],
    'no RTC payment went to the rail twice')
  await assertLedgerClean(tb)
}

/**
 * Waits until the batches' RTC payments are booked, runs a clearing cycle on every instance
 * at once for the EFTs, and returns each batch once completed.
 */
async function completeBatches(instances: Bank[], p: TestPartner,
  bodies: Array<ReturnType<typeof batchBody>>, rtcCount: number) {
  const status = (id: string) => p.client.bulkPayments.status(
    { entity_id: p.rootEntityId, bulk_payment_id: id })
  for (const body of bodies) {
    await until(`the RTC payments of ${body.bulk_payment_id} are booked`, async () => {
      const s = await status(body.bulk_payment_id)
      return s.successful_count + s.failed_count >= rtcCount ? s : undefined
    })
  }
  // Overlapping clearing cycles, one on each instance: each cycle's EFT job may take the same
  // batches.
  await Promise.all(instances.map((bank) => bank.services.clearing.runNow()))
  const finals = []
  for (const body of bodies) {
    finals.push(await until(`${body.bulk_payment_id} is completed`, async () => {
      const s = await status(body.bulk_payment_id)
      return s.status === 'completed' ? s : undefined
    }))
  }
  return finals
}

/** Every payment of the batches has one row (and a refund when it failed); the balance adds up. */
async function assertPaidOnce(p: TestPartner, accountId: string, funded: number,
  finals: Awaited<ReturnType<typeof completeBatches>>) {
  const { transactions } = await p.client.accounts.listTransactions(
    { account_id: accountId, limit: 1000 })
  const rowsOf = (txId: string, type: string, field: 'tx_id' | 'parent_tx_id') =>
    transactions.filter((t) => t.tx_type === type && t[field] === txId)
  const problems: string[] = []
  let spent = 0n
  for (const batch of finals) {
    assert.equal(batch.successful_count + batch.failed_count, batch.payment_count,
      'the counts add up')
    assert.equal(batch.failed_count, 4, 'the magic recipients fail, and only they')
    assert.equal(BigInt(batch.successful_amount) + BigInt(batch.failed_amount),
      BigInt(batch.total_amount), 'the amounts add up')
    for (const payment of batch.payments) {
      assert.ok(payment.tx_id, `${payment.payment_id} has its transaction`)
      const rows = rowsOf(payment.tx_id, 'bulk_payment', 'tx_id')
      const refunds = rowsOf(payment.tx_id, 'refund', 'parent_tx_id')
      if (rows.length !== 1) problems.push(
        `${payment.payment_id}: ${rows.length} bulk_payment rows`)
      if (refunds.length !== (payment.status === 'failed' ? 1 : 0)) problems.push(
        `${payment.payment_id} (${payment.status}): ${refunds.length} refunds`)
      if (payment.status === 'success') spent += BigInt(payment.amount) + BigInt(rows[0]?.fee
        ?? '0')
    }
  }
  assert.deepEqual(problems.slice(0, 10), [], 'every payment paid exactly once')
  const payments = limits.batches * limits.payments_per_batch
  assert.equal(transactions.filter((t) => t.tx_type === 'bulk_payment').length,
    payments + limits.batches, 'one row per payment and one funding row per batch')
  const details = await p.client.accounts.getDetails({ account_id: accountId })
  assert.equal(BigInt(details.balance), BigInt(funded) - spent,
    'the account paid exactly the successful payments and their fees')
  assert.equal(details.available_balance, details.balance, 'no hold is left')
}

if (storage === 'postgres') {
  describe('two instances sharing one PostgreSQL', () => {
    let second: Bank

    before(async () => {
      await tb.ready
      second = await startBank({ config: tb.config, clock: tb.clock, log: createLogger('silent'),
        natsUrl: tb.natsUrl, validateResponses: true })
    })

    after(async () => {
      await second?.stop()
    })

    test('bulk payments - two instances process batches at once and pay nothing twice', async () => {
      const secondLog = watchRail(second.services.isoRail)
      const firstLog = watchRail(tb.bank.services.isoRail, firstCallOf(secondLog))
      try {
        await payBatches([tb.bank, second], [firstLog, secondLog])
        const served = [firstLog, secondLog].map((log) => log.realTime.size)
        assert.ok(served[0]! > 0 && served[1]! > 0,
          `both instances paid RTC payments (${served.join(' and ')})`)
        console.log('bulk two instances', JSON.stringify({ rtc_paid_by_instance: served,
          eft_submitted_by_instance: [firstLog.eft.size, secondLog.eft.size] }))
      } finally {
        firstLog.restore()
        secondLog.restore()
      }
    })
  })
} else {
  test('bulk payments - on PGlite one instance processes batches verified at once and pays nothing twice', async () => {
    // PGlite is embedded in one process: a second instance cannot share its database.
    await tb.ready
    const log = watchRail(tb.bank.services.isoRail)
    try {
      await payBatches([tb.bank, tb.bank], [log])
    } finally {
      log.restore()
    }
  })
}
