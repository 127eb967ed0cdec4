import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { assertLedgerClean } from '../support/assertions.ts'
import { balances, fund, newAccount, transactionsOf, transferBody } from './helpers.ts'

// A clearing run that dies half-way (here its second EFT file is recorded and the writing of
// it fails, as when the process dies between the two) leaves its cycle `running`; the next
// attempt at that cycle writes that file again from its record (same message id, same
// bytes), sends what is left, and every payment goes out once and settles once.

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

  const iso = tb.bank.services.isoRail
  const write = iso.writeOutbound.bind(iso)
  let calls = 0
  iso.writeOutbound = async (messageId) => {
    calls++
    if (calls === 2) throw new Error('rail folder lost (test)')
    return write(messageId)
  }
  try {
    await assert.rejects(tb.bank.services.clearing.runDue(), /rail folder lost/)
  } finally {
    iso.writeOutbound = write
  }
  const settledFirst = (await transactionsOf(p, account)).filter((r) => r.tx_type === 'transfer'
    && r.status === 'Successful')
  assert.equal(settledFirst.length, 0, 'nothing settles before the clearing house answers')
  assert.equal((await iso.folder.list(iso.folder.outbound)).length, 1,
    'the first file waits in outbound/: the run died before the clearing house was asked')
  const recorded = await tb.bank.database.db.selectFrom('rail_messages').select(['message_id',
    'written_at']).where('direction', '=', 'out').orderBy('created_at').execute()
  assert.equal(recorded.length, 2, 'two files recorded, the second never written')
  assert.equal(recorded[1]!.written_at, null)

  const resumed = await tb.bank.services.clearing.runDue()
  assert.equal(resumed?.cycle, '2026-11-23T10:00')
  assert.equal(resumed?.resumed, true)
  assert.equal(resumed?.settled, 7)
  const sent = await tb.bank.database.db.selectFrom('rail_submissions').select(['tx_id',
    'status']).execute()
  assert.equal(sent.length, 7, 'each payment sent once')
  assert.ok(sent.every((row) => row.status === 'ACSC'))
  const messages = await tb.bank.database.db.selectFrom('rail_messages').select('message_id')
    .where('direction', '=', 'out').execute()
  assert.equal(messages.length, 3, 'the unwritten file written again under its own id')
  assert.ok(messages.some((m) => m.message_id === recorded[1]!.message_id))
  const left = String(100_000 - 7 * (1_000 + eft_fee))
  assert.deepEqual(await balances(p, account), { balance: left, available: left })
  assert.equal(await tb.bank.services.clearing.runDue(), undefined,
    'a finished cycle does not run again')
  await assertLedgerClean(tb)
})
