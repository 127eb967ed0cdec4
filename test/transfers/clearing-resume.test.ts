import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { balances, fund, newAccount, transactionsOf, transferBody } from './helpers.ts'

// A clearing run that dies half-way (here the rail fails on its second chunk) leaves its
// cycle `running`; the next attempt at that cycle resumes it and settles what is left,
// and nothing the first attempt settled is settled again.

const eft_fee = 250

// 2026-11-23T08:00:00Z is Monday 10:00 SAST: the 10:00 cycle is due, cut-off now.
const tb = useTestBank({ env: { BANK_CLEARING_CHUNK_MAX: '3' } })
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('clearing - a run that dies half-way resumes its cycle without settling anything twice', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  for (let i = 0; i < 7; i++) await p.client.accounts.transfer(
    transferBody(account, { amount: 1_000 }))

  const rail = tb.bank.services.rail
  const submit = rail.submitEftBatch.bind(rail)
  let calls = 0
  rail.submitEftBatch = async (payments) => {
    calls++
    if (calls === 2) throw new Error('rail connection lost (test)')
    return submit(payments)
  }
  try {
    await assert.rejects(tb.bank.services.clearing.runDue(), /rail connection lost/)
  } finally {
    rail.submitEftBatch = submit
  }
  const settledFirst = (await transactionsOf(p, account)).filter((r) => r.tx_type === 'transfer'
    && r.status === 'Successful')
  assert.equal(settledFirst.length, 3, 'the first chunk was settled before the failure')
  const afterFirst = 100_000 - 3 * (1_000 + eft_fee)
  assert.deepEqual(await balances(p, account), { balance: String(afterFirst),
    available: String(afterFirst - 4 * (1_000 + eft_fee)) })

  const resumed = await tb.bank.services.clearing.runDue()
  assert.equal(resumed?.cycle, '2026-11-23T10:00')
  assert.equal(resumed?.resumed, true)
  assert.equal(resumed?.settled, 4)
  const left = String(100_000 - 7 * (1_000 + eft_fee))
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  assert.equal(await tb.bank.services.clearing.runDue(), undefined,
    'a finished cycle does not run again')
  await assertLedgerClean(tb)
})
