import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { balances, fund, magic, newAccount, transactionsOf, transferBody } from './helpers.ts'

// A clearing run settles pending EFTs a chunk at a time (BANK_CLEARING_CHUNK_MAX); with
// a chunk smaller than the work, every payment must still be settled exactly once.

const eft_fee = 250

const tb = useTestBank({ env: { BANK_CLEARING_CHUNK_MAX: '3' } })
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

test('clearing - a run settles more pending EFTs than one chunk, each once, outcomes included', async () => {
  const a = await newAccount(p)
  const b = await newAccount(p)
  await fund(tb, a, 100_000)
  await fund(tb, b, 100_000)
  for (let i = 0; i < 5; i++) await p.client.accounts.transfer(transferBody(a, { amount: 1_000 }))
  for (let i = 0; i < 4; i++) await p.client.accounts.transfer(transferBody(b, { amount: 2_000 }))
  await p.client.accounts.transfer(transferBody(b, { amount: 3_000, account_number: magic.failed }))
  await p.client.accounts.transfer(
    transferBody(a, { amount: 3_000, account_number: magic.invalid }))

  const report = await tb.operator.clearing.run()
  assert.deepEqual([report.settled, report.failed, report.invalid, report.returned], [9, 1, 1, 0])
  const aLeft = String(100_000 - 5 * (1_000 + eft_fee))
  const bLeft = String(100_000 - 4 * (2_000 + eft_fee))
  assert.deepEqual(await balances(p, a), { balance: aLeft, available: aLeft })
  assert.deepEqual(await balances(p, b), { balance: bLeft, available: bLeft })
  for (const account of [a, b]) {
    const rows = await transactionsOf(p, account)
    assert.ok(rows.every((r) => r.status !== 'Pending'), 'nothing is left pending')
  }

  const again = await tb.operator.clearing.run()
  assert.deepEqual([again.settled, again.failed, again.invalid, again.returned], [0, 0, 0, 0])
  assert.deepEqual(await balances(p, a), { balance: aLeft, available: aLeft })
  await assertLedgerClean(tb)
})
