import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean, expectApiError } from '../support/assertions.ts'
import { fund, newAccount, transferBody } from './helpers.ts'

// An RTC is taken (its hold committed) and the clearing house answers, but the database
// cannot take the settlement: here a trigger of the test's raises SQLSTATE 53100 ("could
// not extend file", a full disk, as PostgreSQL raises it) on the settlement's update. The
// partner is told the payment is taken and Pending, with its tx_id, not 503; a retry with
// the same key finds it taken; once the database takes writes again the bank writes the
// settlement by itself (without waiting for the RTC recovery's period), and the money moved
// exactly once.

const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const db = () => tb.bank.database.db

async function diskFullOnSettlement(): Promise<void> {
  await sql`create function rtc_settlement_disk_full() returns trigger language plpgsql as $$
    begin
      raise exception 'could not extend file (raised by the test)' using errcode = '53100';
    end $$`.execute(db())
  await sql`create trigger rtc_settlement_disk_full before update on transactions
    for each row when (old.status = 'Pending' and new.status <> 'Pending'
      and old.tx_payment_type = 'RTC')
    execute function rtc_settlement_disk_full()`.execute(db())
}

async function diskFreed(): Promise<void> {
  await sql`drop trigger rtc_settlement_disk_full on transactions`.execute(db())
  await sql`drop function rtc_settlement_disk_full()`.execute(db())
}

const statusOf = async (txId: string) =>
  (await p.client.accounts.getTransaction({ tx_id: txId })).transaction.status

test('transfers - an RTC taken when its settlement cannot be written is answered Pending with its tx_id, and settles once the database is back', async (t) => {
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const body = transferBody(account, { amount: 25_000, pay_and_clear: true })
  await diskFullOnSettlement()
  let freed = false
  t.after(async () => {
    if (!freed) await diskFreed()
  })
  const sent = await p.client.accounts.transfer(body)
  assert.equal(sent.status, 'Pending', 'taken, not 503')
  assert.match(sent.tx_id, /^[0-9a-f-]{36}$/)
  assert.equal(await statusOf(sent.tx_id), 'Pending')
  const details = await p.client.accounts.getDetails({ account_id: account })
  assert.equal(details.available_balance, String(100_000 - 25_000 - 700), 'held with its fee')

  const again = await expectApiError(p.client.accounts.transfer(body), 409)
  assert.equal(again.type, 'duplicate')
  assert.equal((again.details[0] as { tx_id?: string }).tx_id, sent.tx_id,
    'the retry learns it is taken')

  await diskFreed()
  freed = true
  // The bank writes the settlement by itself (real time: it waits for the database).
  while ((await statusOf(sent.tx_id)) === 'Pending') {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.equal(await statusOf(sent.tx_id), 'Successful')
  const after = await p.client.accounts.getDetails({ account_id: account })
  assert.equal(after.balance, String(100_000 - 25_000 - 700), 'paid once, with its fee')
  assert.equal(after.available_balance, after.balance)
  await assertLedgerClean(tb)
})
