import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { outcome } from '../support/assertions.ts'
import { fundedAccount, transferBody } from './helpers.ts'

// Concurrency with fees set to zero (BANK_FEE_EFT_CENTS / BANK_FEE_RTC_CENTS = 0), so the
// arithmetic is exact in whole transfers: overspending requests and repeats of one
// clientTxId arrive together on one account (docs/guides/payments.md). Its own
// file, so that its bank has its own nats-server and queue group.

const tb = useTestBank({ env: { BANK_FEE_EFT_CENTS: '0', BANK_FEE_RTC_CENTS: '0' } })

test('transfers - zero fees: overspending transfers and repeats of one key together leave exactly the remainder', async () => {
  const { partner, accountId } = await fundedAccount(tb, 50 * 1_000 + 999)
  const clientTxId = randomUUID()
  // 100 distinct transfers of 1,000 (50 affordable in all) and 20 repeats of one more key, all at
  // once.
  const distinct = Array.from({ length: 100 }, (_, i) => outcome(partner.client.accounts.transfer(
    transferBody(accountId, 1_000, i % 2 === 0))))
  const repeated = Array.from({ length: 20 }, () => outcome(partner.client.accounts.transfer(
    transferBody(accountId, 1_000, true, clientTxId))))
  const [d, r] = await Promise.all([Promise.all(distinct), Promise.all(repeated)])

  for (const o of d) if (!o.ok) assert.equal(o.error.code, 400, o.error.message)
  // The keyed request either won a place (one accepted, the rest 409 naming it) or was
  // refused for funds (all 400: a refused request moves no money and leaves no key behind).
  const keyed = r.flatMap((o) => (o.ok ? [o.value] : []))
  assert.ok(keyed.length <= 1, `${keyed.length} requests with one key were accepted`)
  for (const o of r) {
    if (o.ok) continue
    if (keyed.length === 1) {
      assert.equal(o.error.code, 409, o.error.message)
      assert.equal((o.error.details[0] as { tx_id?: string }).tx_id, keyed[0]!.tx_id)
    } else {
      assert.equal(o.error.code, 400, o.error.message)
    }
  }
  assert.equal(d.filter((o) => o.ok).length + keyed.length, 50,
    'exactly 50 transfers of 1,000 fit in 50,999')

  await tb.operator.clearing.run()
  const details = await partner.client.accounts.getDetails({ account_id: accountId })
  assert.deepEqual([details.balance, details.available_balance], ['999', '999'])
  const { transactions } = await partner.client.accounts.listTransactions(
    { account_id: accountId, limit: 1000 })
  assert.equal(transactions.filter((t) => t.tx_type === 'transfer').length, 50)
  assert.equal(transactions.filter((t) => t.tx_type === 'fee').length, 0,
    'a zero fee writes no fee row')
  assert.ok(transactions.every((t) => t.verified))
  const report = await tb.operator.ledger.verify()
  assert.deepEqual(report.problems, [])
  assert.equal(report.ok, true)
})
