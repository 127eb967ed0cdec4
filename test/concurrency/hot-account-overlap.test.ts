import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { assertLedgerClean, outcome } from '../support/assertions.ts'
import { fundedAccount, transferBody } from './helpers.ts'

// One account's payment batches two at a time (BANK_LEDGER_ACCOUNT_BATCHES_MAX, default 2;
// ledger/ledger-writer.ts, paymentBatch): the next batch of an account being written starts
// from the state the batch before will leave and is written behind it, on its connection
// on PostgreSQL. Whatever the two batches' order in the database, every payment the
// balance covers is taken, no other is, and the account ends exactly where they leave it.
// A second batch starts with the first request that waits (BANK_LEDGER_OVERLAP_JOBS_MIN 1),
// so that batches of the one account overlap as often as they can.

const tb = useTestBank({ env: { BANK_LEDGER_OVERLAP_JOBS_MIN: '1' } })

/** Batches that started behind another of their account, and all batches. */
const seen = { behind: 0, batches: 0 }

before(async () => {
  await tb.ready
  // The ledger writer's probe is told of every write; a batch's first write says whether
  // it started behind another batch of its account.
  tb.bank.services.ledgerWriter.probe({
    written: (write) => {
      if (write.desk !== 'reserve' || !write.first) return
      seen.batches++
      if (write.behind) seen.behind++
    },
  })
})

test('hot account - 300 payments at once from one account that covers 100: batches overlap, exactly 100 are taken and the account ends at zero', async () => {
  const unit = 10_000
  const fee = Number(tb.config.fees.EFT)
  const f = await fundedAccount(tb, 100 * (unit + fee))
  seen.behind = 0
  seen.batches = 0
  const results = await Promise.all(
    Array.from({ length: 300 },
      () => outcome(f.partner.client.accounts.transfer(transferBody(f.accountId, unit, false)))),
  )
  const taken = results.filter((r) => r.ok)
  const refused = results.filter((r) => !r.ok)
  assert.equal(taken.length, 100)
  for (const r of refused) {
    assert.equal(r.ok, false)
    if (!r.ok) assert.match(r.error.message, /insufficient funds/, `refused for funds: ${JSON.stringify(r)}`)
  }
  assert.ok(seen.behind > 0,
    `some batch started behind another of the account (${seen.behind} of ${seen.batches})`)

  const details = await f.partner.client.accounts.getDetails({ account_id: f.accountId })
  assert.equal(details.balance, String(100 * (unit + fee)), 'nothing posted yet: EFTs are held')
  assert.equal(details.available_balance, '0', 'every cent held, none twice')
  const { transactions } = await f.partner.client.accounts.listTransactions(
    { account_id: f.accountId, limit: 1000 })
  const transfers = transactions.filter((t) => t.tx_type === 'transfer')
  assert.equal(transfers.length, 100)
  assert.equal(new Set(transfers.map((t) => t.tx_id)).size, 100)
  for (const t of transactions) assert.equal(t.verified, true,
    `transaction ${t.tx_id} fails its hash-chain check`)
  await assertLedgerClean(tb)
})
