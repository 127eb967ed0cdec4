import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { transfer_key_expiry_job_kind } from '../../src/transfers/transfer-key-expiry.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { day_ms, fund, hour_ms, newAccount, transferBody } from './helpers.ts'

// A clientTxId counts as a duplicate for 24 hours (BANK_TRANSFER_KEY_WINDOW_MS); after that
// its key counts for nothing, and a daily job (`transfers.key_expiry`, 03:00 SAST) deletes it,
// so that the keys do not grow with all of history. Deleting an expired key must change no
// answer: a live key is still a duplicate (409 with the original tx_id), and an expired one
// may be used again, as before.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const db = () => tb.bank.database.db

async function keyOf(clientTxId: string) {
  return db()
    .selectFrom('transfer_keys')
    .select(['tx_id'])
    .where('partner_id', '=', p.partnerId)
    .where('client_tx_id', '=', clientTxId)
    .executeTakeFirst()
}

test('transfer keys - the sweep deletes keys past their window and keeps live ones; answers are unchanged', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const old = transferBody(account, { amount: 1_000 })
  const first = await p.client.accounts.transfer(old)
  tb.clock.advance(23 * hour_ms)
  const live = transferBody(account, { amount: 2_000 })
  const second = await p.client.accounts.transfer(live)

  // At exactly 24 hours the first key is still live (a duplicate for the whole window).
  tb.clock.advance(day_ms - 23 * hour_ms)
  await tb.bank.services.transferKeyExpiry.sweep()
  assert.equal((await keyOf(old.clientTxId))?.tx_id, first.tx_id, 'a live key stays')
  await expectApiError(p.client.accounts.transfer(old), 409)
  tb.clock.advance(1)
  // The first key's window has just passed (24 h and 1 ms); the second has 23 hours to go.
  // (The daily job of this file's other test may have swept it first: what is checked is
  // that it is gone and the live one stays, not which sweep took it.)
  await tb.bank.services.transferKeyExpiry.sweep()
  assert.equal(await keyOf(old.clientTxId), undefined, 'the expired key is deleted')
  assert.equal((await keyOf(live.clientTxId))?.tx_id, second.tx_id, 'the live key stays')

  const error = await expectApiError(p.client.accounts.transfer(live), 409)
  assert.equal((error.details as Array<{ tx_id?: string }>)[0]?.tx_id, second.tx_id)
  const again = await p.client.accounts.transfer(old)
  assert.notEqual(again.tx_id, first.tx_id, 'an expired key is used again, as before')
  assert.equal((await keyOf(old.clientTxId))?.tx_id, again.tx_id)
  // The transactions themselves stay.
  const kept = await p.client.accounts.getTransaction({ tx_id: first.tx_id })
  assert.equal(kept.transaction.tx_id, first.tx_id)
  await assertLedgerClean(tb)
})

test('transfer keys - the sweep works through more keys than one chunk, oldest first', async () => {
  const created = new Date(tb.clock.now().getTime() - 2 * day_ms).toISOString()
  const partner = randomUUID()
  await sql`
    insert into transfer_keys (partner_id, client_tx_id, tx_id, created_at)
    select ${partner}::uuid, gen_random_uuid(), gen_random_uuid(),
           ${created}::timestamptz + n * interval '1 millisecond'
    from generate_series(1, 25000) as n`.execute(db())
  assert.ok((await tb.bank.services.transferKeyExpiry.sweep()) >= 25_000)
  const left = await db()
    .selectFrom('transfer_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('partner_id', '=', partner)
    .executeTakeFirstOrThrow()
  assert.equal(Number(left.n), 0)
})

test('transfer keys - the daily job runs by itself at 03:00 SAST and deletes what has expired', async () => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 1_000 })
  await p.client.accounts.transfer(body)
  await tb.operator.sandbox.advance({ seconds: 2 * 86_400 })
  assert.equal(await keyOf(body.clientTxId), undefined)
  const runs = await db()
    .selectFrom('jobs')
    .select(['state', 'due_at', 'result'])
    .where('kind', '=', transfer_key_expiry_job_kind)
    .execute()
  assert.ok(runs.length >= 1)
  for (const run of runs) {
    assert.equal(run.state, 'done')
    // 03:00 SAST is 01:00 UTC.
    assert.match(new Date(run.due_at as unknown as string).toISOString(), /T01:00:00\.000Z$/)
  }
  assert.ok(runs.some((run) => Number((run.result as { deleted?: number } | null)?.deleted) >= 1))
})
