import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import { contract } from '../../src/contract/index.ts'
import { createLogger } from '../../src/logger.ts'
import { magicRecipients } from '../../src/rails/clearing-house/magic-recipients.ts'
import { useTestBank, storage } from '../support/harness.ts'
import { assertLedgerClean, outcome, type Outcome } from '../support/assertions.ts'
import { fundedAccount as openFunded, transferBody, type FundedAccount } from './helpers.ts'

// svc.account.<partner_id>.transfer_eft_rtc under concurrency (docs/guides/payments.md):
// the funds check covers amount plus fee and balances never go below zero; two
// concurrent requests with the same clientTxId never both move money, and the duplicate's
// 409 carries the original tx_id in `details`. Scale-out: many instances share one
// NATS queue group and one PostgreSQL, so the same guarantees must hold across instances.
// Clearing runs may overlap (manual runs on any instance; jobs are safe with many
// instances): each payment is still settled once and returned once.
//
// Every scenario below runs against one instance on every back end. The two-instance
// variants are registered only on PostgreSQL: PGlite is an embedded database owned by one
// process, so a second instance cannot open it. On PGlite a test asserts the single-instance
// behaviour instead: the one instance serves every request of the same concurrent load.

const tb = useTestBank()
const fundedAccount = (deposit: number) => openFunded(tb, deposit)

async function balances(f: FundedAccount): Promise<{ balance: bigint; available: bigint }> {
  const details = await f.partner.client.accounts.getDetails({ account_id: f.accountId })
  return { balance: BigInt(details.balance), available: BigInt(details.available_balance) }
}

function assertNotBelowZero(b: { balance: bigint; available: bigint }, when: string): void {
  assert.ok(b.balance >= 0n, `${when}: balance ${b.balance} is below zero`)
  assert.ok(b.available >= 0n, `${when}: available ${b.available} is below zero`)
  assert.ok(b.available <= b.balance,
    `${when}: available ${b.available} exceeds balance ${b.balance}`)
}

async function transferRows(f: FundedAccount) {
  const { transactions } = await f.partner.client.accounts.listTransactions(
    { account_id: f.accountId, limit: 1000 })
  for (const t of transactions) assert.equal(t.verified, true,
    `transaction ${t.tx_id} fails its hash-chain check`)
  return transactions
}

// ---------------------------------------------------------------------------------------
// Scenario 1: 200 concurrent transfers that together exceed the balance.

interface OverspendPlan {
  count: number
  /** Amount plus fee of every transfer; EFT and RTC amounts are chosen so both cost this. */
  unit: number
  affordable: number
}

function overspendPlan(): OverspendPlan {
  return { count: 200, unit: 10_000, affordable: 100 }
}

/**
 * Starts the overspend: returns the funded account and the requests in flight (reads interleaved).
 */
async function startOverspend(plan: OverspendPlan) {
  const fees = { EFT: Number(tb.config.fees.EFT), RTC: Number(tb.config.fees.RTC) }
  // One cent short of one more transfer: an off-by-one in the funds check would show.
  const deposit = plan.affordable * plan.unit + (plan.unit - 1)
  const f = await fundedAccount(deposit)
  const transfers: Array<Promise<Outcome<{ tx_id: string; status?: string }>>> = []
  const reads: Array<Promise<{ balance: bigint; available: bigint }>> = []
  for (let i = 0; i < plan.count; i++) {
    const rtc = i % 2 === 1
    const amount = plan.unit - (rtc ? fees.RTC : fees.EFT)
    transfers.push(
      outcome(f.partner.client.accounts.transfer(transferBody(f.accountId, amount, rtc))))
    if (i % 10 === 0) reads.push(balances(f))
  }
  return { f, deposit, rtcFlags: transfers.map((_, i) => i % 2 === 1), transfers, reads }
}

async function finishOverspend(plan: OverspendPlan,
    started: Awaited<ReturnType<typeof startOverspend>>): Promise<void> {
  const { f, deposit, rtcFlags } = started
  const results = await Promise.all(started.transfers)
  for (const [i, read] of (await Promise.all(started.reads)).entries()) assertNotBelowZero(read,
    `read ${i} during the burst`)

  const succeeded = results.flatMap((r, i) => (r.ok ? [{ ...r.value, rtc: rtcFlags[i]! }] : []))
  const refused = results.flatMap((r) => (r.ok ? [] : [r.error]))
  for (const error of refused) {
    assert.equal(error.code, 400, `a refused transfer is 400, not ${error.code} ${error.message}`)
    assert.equal(error.type, 'insufficient_funds')
    assert.equal((error.details[0] as { field: string }).field, 'amount')
    assert.match(error.message, /insufficient funds/)
  }
  assert.equal(succeeded.length, plan.affordable,
    'exactly the affordable number of transfers succeed')
  for (const s of succeeded) assert.equal(s.status, s.rtc ? 'Successful' : 'Pending')

  const rtcPaid = succeeded.filter((s) => s.rtc).length
  const afterBurst = await balances(f)
  assertNotBelowZero(afterBurst, 'after the burst')
  assert.equal(afterBurst.available, BigInt(plan.unit - 1))
  assert.equal(afterBurst.balance, BigInt(deposit - rtcPaid * plan.unit))

  // Only the accepted transfers left rows: one transfer each, carrying its fee, and a fee
  // row for each RTC, settled at once. An EFT's fee is held with it (the available balance
  // above) and gets its row when the EFT settles at clearing.
  const fees = tb.config.fees
  const rows = await transferRows(f)
  const transfers = rows.filter((t) => t.tx_type === 'transfer')
  assert.deepEqual(new Set(transfers.map((t) => t.tx_id)), new Set(succeeded.map((s) => s.tx_id)))
  for (const t of transfers) assert.equal(t.fee, String(t.tx_payment_type === 'RTC' ? fees.RTC
    : fees.EFT), `transfer ${t.tx_id}`)
  const feeRows = rows.filter((t) => t.tx_type === 'fee')
  const rtcWithFee = fees.RTC > 0n ? succeeded.filter((s) => s.rtc).map((s) => s.tx_id) : []
  assert.deepEqual(feeRows.map((t) => t.parent_tx_id).sort(), rtcWithFee.sort(),
    'fee rows for the RTCs only, one each')
  assert.ok(feeRows.every((t) => t.status === 'Successful'))

  await tb.operator.clearing.run()
  const settled = await balances(f)
  assert.deepEqual(settled, { balance: BigInt(plan.unit - 1), available: BigInt(plan.unit - 1) })
  // Cleared, every accepted transfer is Successful with one Successful fee row.
  const after = await transferRows(f)
  assert.ok(after.filter((t) => t.tx_type === 'transfer').every((t) => t.status === 'Successful'))
  const settledFees = after.filter((t) => t.tx_type === 'fee')
  const withFee = succeeded.filter((s) => (s.rtc ? fees.RTC : fees.EFT) > 0n).map((s) => s.tx_id)
  assert.deepEqual(settledFees.map((t) => t.parent_tx_id).sort(), withFee.sort(),
    'one fee row per accepted transfer')
  assert.ok(settledFees.every((t) => t.status === 'Successful'))
  await assertLedgerClean(tb)
}

async function overspend(): Promise<number> {
  const plan = overspendPlan()
  await finishOverspend(plan, await startOverspend(plan))
  return plan.count
}

// ---------------------------------------------------------------------------------------
// Scenario 2: 50 concurrent requests with one clientTxId.

const duplicateCount = 50

async function startDuplicates(rtc: boolean) {
  const deposit = 1_000_000
  const amount = 12_345
  const f = await fundedAccount(deposit)
  const body = transferBody(f.accountId, amount, rtc)
  const requests = Array.from({ length: duplicateCount },
    () => outcome(f.partner.client.accounts.transfer(body)))
  return { f, deposit, amount, rtc, requests }
}

async function finishDuplicates(
    started: Awaited<ReturnType<typeof startDuplicates>>): Promise<void> {
  const { f, deposit, amount, rtc } = started
  const fee = Number(rtc ? tb.config.fees.RTC : tb.config.fees.EFT)
  const results = await Promise.all(started.requests)
  const accepted = results.flatMap((r) => (r.ok ? [r.value] : []))
  assert.equal(accepted.length, 1, 'exactly one request with the key is accepted')
  const original = accepted[0]!
  assert.equal(original.status, rtc ? 'Successful' : 'Pending')
  for (const r of results) {
    if (r.ok) continue
    assert.equal(r.error.code, 409, `a duplicate is 409, not ${r.error.code} ${r.error.message}`)
    assert.equal(r.error.type, 'duplicate')
    assert.equal((r.error.details[0] as { tx_id?: string }).tx_id, original.tx_id)
  }

  // Money moved once: one transfer row carrying the fee, one debit (or hold) of amount plus
  // fee. The fee's row is written when the payment settles: an RTC's at once, an EFT's at clearing.
  const expected = BigInt(deposit - amount - fee)
  assert.deepEqual(await balances(f), rtc ? { balance: expected, available: expected }
    : { balance: BigInt(deposit), available: expected })
  const rows = await transferRows(f)
  const transfers = rows.filter((t) => t.tx_type === 'transfer')
  assert.deepEqual(transfers.map((t) => t.tx_id), [original.tx_id])
  assert.equal(transfers[0]!.fee, String(fee))
  const feeRows = (r: typeof rows) => r.filter((t) => t.tx_type === 'fee').map(
    (t) => [t.parent_tx_id, t.status])
  assert.deepEqual(feeRows(rows), rtc && fee > 0 ? [[original.tx_id, 'Successful']] : [])

  await tb.operator.clearing.run()
  assert.deepEqual(await balances(f), { balance: expected, available: expected })
  const settled = await transferRows(f)
  assert.deepEqual(settled.filter((t) => t.tx_type === 'transfer').map((t) => [t.tx_id, t.status]),
    [[original.tx_id, 'Successful']])
  assert.deepEqual(feeRows(settled), fee > 0 ? [[original.tx_id, 'Successful']] : [])
  await assertLedgerClean(tb)
}

async function duplicates(rtc: boolean): Promise<number> {
  await finishDuplicates(await startDuplicates(rtc))
  return duplicateCount
}

/**
 * Both bursts in flight at once on two accounts; checked one after the other, since each check runs
 * clearing.
 */
async function overspendWithDuplicates(plan: OverspendPlan): Promise<void> {
  const [spending, repeating] = await Promise.all([startOverspend(plan), startDuplicates(true)])
  await Promise.all([...spending.transfers, ...spending.reads, ...repeating.requests])
  await finishOverspend(plan, spending)
  await finishDuplicates(repeating)
}

// ---------------------------------------------------------------------------------------
// Scenario 3: clearing runs racing each other and new transfers. Manual runs have distinct
// cycle names, so they really overlap; each re-reads its rows under the account locks.

const { returned_account_number: returnedAccount, failed_account_number: failedAccount } =
  magicRecipients

async function racingClearingRuns(runClearing: Array<() => Promise<unknown>>): Promise<void> {
  const deposit = 5_000_000
  const f = await fundedAccount(deposit)
  const fees = tb.config.fees
  const kinds = ['normal', 'returned', 'failed'] as const
  const plan = Array.from({ length: 90 },
    (_, i) => ({ kind: kinds[i % 3]!, rtc: i % 6 >= 3, amount: 1_000 + i }))
  const body = (p: (typeof plan)[number]) => ({
    ...transferBody(f.accountId, p.amount, p.rtc),
    account_number: p.kind === 'returned' ? returnedAccount : p.kind === 'failed' ? failedAccount
      : '62000000017',
  })
  // Half the transfers first, then the other half while the clearing runs go.
  const first =
    await Promise.all(plan.slice(0, 45).map((p) => f.partner.client.accounts.transfer(body(p))))
  const [second] = await Promise.all([
    Promise.all(plan.slice(45).map((p) => f.partner.client.accounts.transfer(body(p)))),
    Promise.all(runClearing.map((run) => run())),
  ])
  // Two more runs settle whatever came after the racing runs and collect every return.
  await tb.operator.clearing.run()
  await tb.operator.clearing.run()

  const txIds = [...first, ...second].map((r) => r.tx_id)
  let expected = BigInt(deposit)
  const expectedStatus = new Map<string, string>()
  plan.forEach((p, i) => {
    const fee = p.rtc ? fees.RTC : fees.EFT
    if (p.kind === 'normal') expected -= BigInt(p.amount) + fee
    if (p.kind === 'returned') expected -= fee
    expectedStatus.set(txIds[i]!, p.kind === 'normal' ? 'Successful' : p.kind === 'returned'
      ? 'Reversed' : 'Failed')
  })
  assert.deepEqual(await balances(f), { balance: expected, available: expected })
  const rows = await transferRows(f)
  for (const t of rows.filter((r) => r.tx_type === 'transfer')) assert.equal(t.status,
    expectedStatus.get(t.tx_id), `transfer ${t.tx_id}`)
  const reversals = rows.filter((t) => t.tx_type === 'reversal')
  assert.equal(reversals.length, 30, 'every returned payment is reversed exactly once')
  assert.equal(new Set(reversals.map((t) => t.parent_tx_id)).size, 30)
  // One Successful fee row for each payment the rail paid (kept when it was returned), written
  // once however many runs raced to settle it, and none for a failed payment.
  const feeRows = rows.filter((t) => t.tx_type === 'fee')
  const paid = plan.flatMap((p, i) => (p.kind === 'failed' || (p.rtc ? fees.RTC : fees.EFT) === 0n
    ? [] : [txIds[i]!]))
  assert.deepEqual(feeRows.map((t) => t.parent_tx_id).sort(), paid.sort())
  assert.ok(feeRows.every((t) => t.status === 'Successful'))
  await assertLedgerClean(tb)
}

// ---------------------------------------------------------------------------------------
// Which instance served what: $SRV.STATS per instance, as an operator's monitoring sees it.

const transferEndpoint = contract.transfers.transfer.name

async function transfersServedBy(bank: Bank): Promise<number> {
  const subject = `$SRV.STATS.${tb.config.serviceName}.${bank.micro.stats().id}`
  const reply = await tb.nc.request(subject, '', { timeout: 5_000 })
  const stats = JSON.parse(new TextDecoder().decode(reply.data)) as {
    endpoints: Array<{ name: string; num_requests: number }> }
  const endpoint = stats.endpoints.find((e) => e.name === transferEndpoint)
  assert.ok(endpoint, `the stats list the ${transferEndpoint} endpoint`)
  return endpoint.num_requests
}

// ---------------------------------------------------------------------------------------
// One instance (every back end).

test('transfers - 200 concurrent EFT and RTC transfers over the balance: exactly the affordable ones succeed', async () => {
  await overspend()
})

test('transfers - 50 concurrent RTC requests with one clientTxId move money once', async () => {
  await duplicates(true)
})

test('transfers - 50 concurrent EFT requests with one clientTxId hold and settle once', async () => {
  await duplicates(false)
})

test('clearing - four overlapping clearing runs and new transfers: every payment settled and returned once', async () => {
  await racingClearingRuns(Array.from({ length: 4 }, () => () => tb.operator.clearing.run()))
})

if (storage === 'postgres') {
  // Two instances against one PostgreSQL, both in the queue group on one NATS server. The
  // second reuses the first's configuration (same DATABASE_URL, queue group, service name);
  // it finds the operator already bootstrapped and skips that step.
  describe('two instances sharing one PostgreSQL', () => {
    let second: Bank

    before(async () => {
      await tb.ready
      second = await startBank({ config: tb.config, clock: tb.clock, log: createLogger('silent'),
        natsUrl: tb.natsUrl, validateResponses: true })
    })

    after(async () => {
      await second.stop()
    })

    async function servedByBoth(run: () => Promise<number>): Promise<void> {
      const before = [await transfersServedBy(tb.bank), await transfersServedBy(second)]
      const sent = await run()
      const after = [await transfersServedBy(tb.bank), await transfersServedBy(second)]
      const served = after.map((n, i) => n - before[i]!)
      assert.ok(served[0]! > 0 && served[1]! > 0,
        `both instances serve transfers (served ${served.join(' and ')})`)
      assert.equal(served[0]! + served[1]!, sent)
    }

    test('transfers - two instances: 200 concurrent transfers over the balance, exactly the affordable ones succeed', async () => {
      await servedByBoth(overspend)
    })

    test('transfers - two instances: 50 concurrent RTC requests with one clientTxId move money once', async () => {
      await servedByBoth(() => duplicates(true))
    })

    test('transfers - two instances: 50 concurrent EFT requests with one clientTxId hold and settle once', async () => {
      await servedByBoth(() => duplicates(false))
    })

    test('clearing - two instances: overlapping clearing runs on both settle and return every payment once', async () => {
      // Called on each instance's service directly, so that both really run at once.
      const runs = [tb.bank, second, tb.bank, second].map(
        (bank) => () => bank.services.clearing.runNow())
      await racingClearingRuns(runs)
    })

    test('transfers - two instances: overspending and duplicate keys arriving together', async () => {
      await servedByBoth(async () => {
        const plan = overspendPlan()
        await overspendWithDuplicates(plan)
        return plan.count + duplicateCount
      })
    })
  })
} else {
  test('transfers - on PGlite one instance serves overspending and duplicate keys arriving together', async () => {
    // PGlite is embedded in one process: a second instance cannot share its database, so
    // the single instance must take the whole concurrent load itself.
    const before = await transfersServedBy(tb.bank)
    const plan = overspendPlan()
    await overspendWithDuplicates(plan)
    assert.equal((await transfersServedBy(tb.bank)) - before, plan.count + duplicateCount)
  })
}
