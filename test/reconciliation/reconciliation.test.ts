import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { before, test } from 'node:test'
import { camt053Chunks, type AccountEntryRow } from '../../src/rails/iso20022/camt053-write.ts'
import { assertLedgerClean, expectRefusal } from '../support/assertions.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { validateAgainstXsd } from '../support/xsd.ts'
import { reconciliationPage } from '../../src/console/console-reconciliation.ts'
import { accountNumberOf, fund, magic, newAccount, transferBody } from '../transfers/helpers.ts'

// Reconciliation of the bank's settlement account (src/reconciliation/) end to end, through a
// real bank and real files: a day of payouts (settled, rejected, returned; EFT and RTC), other
// banks' credits (one to an account the bank has, one it sends back) goes through the
// sandbox's clearing house, which writes the day's camt.053 once the day is over; the bank
// applies it and `ops.rails.reconcile` matches every entry with 0 breaks. A tampered
// statement of the same day (an entry left out, one of another amount, one the bank never
// made, one twice) shows each break; a statement of another account is refused whole.

// 2026-11-23T08:00:00Z is Monday 10:00 SAST (the test clock).
const tb = useTestBank()
let p: TestPartner

before(async () => {
  await tb.ready
  p = await onboardPartner(tb, { approve: true })
})

const iso = () => tb.bank.services.isoRail
const db = () => tb.bank.database.db
const day = '2026-11-23'

async function clearing() {
  tb.clock.advance(60_000)
  return tb.operator.clearing.run()
}

/** The statements the bank applied, as archived files, by name. */
async function archivedStatements(): Promise<string[]> {
  const folder = iso().folder
  return (await folder.list(folder.archive)).filter((name) => name.startsWith('camt.053.'))
}

interface DayOfPayments {
  payouts: string[]
  rejected: string
  returned: string
  rtc: string
  credited: string
  sentBack: string
}

/** A day of every movement of the settlement account, all applied by the end. */
async function dayOfPayments(): Promise<DayOfPayments> {
  const account = await newAccount(p)
  await fund(tb, account, 1_000_000)
  const pay = async (override: Record<string, unknown>) => (await p.client.accounts.transfer(
    transferBody(account, override))).tx_id
  const payouts = [await pay({ amount: 1_234 }), await pay({ amount: 5_000 })]
  const rejected = await pay({ amount: 777, account_number: magic.failed })
  const returned = await pay({ amount: 4_321, account_number: magic.returned })
  const rtc = await pay({ amount: 2_500, pay_and_clear: true })
  await clearing()
  await clearing() // the clearing house delivers the return it held
  const number = await accountNumberOf(p, account)
  const credit = await tb.operator.sandbox.incoming({ account_number: number, amount: 9_900,
    reference: 'Invoice 7' })
  assert.equal(credit.status, 'credited')
  const back = await tb.operator.sandbox.incoming({ account_number: '999999999', amount: 450 })
  assert.equal(back.status, 'returned')
  await clearing() // the clearing house takes the bank's return of that credit
  return { payouts, rejected, returned, rtc, credited: credit.end_to_end_id,
    sentBack: back.end_to_end_id }
}

const hex = (txId: string) => txId.replaceAll('-', '')

let made: DayOfPayments

test('reconciliation - a day of payouts, a return, an RTC and incoming credits reconciles with 0 breaks against the camt.053 the clearing house sends once the day is over', async () => {
  made = await dayOfPayments()
  const early = await tb.operator.rails.reconcile({ date: day })
  assert.equal(early.source, 'none', 'no statement before the day is over')
  assert.ok(early.breaks_count > 0, 'every movement of the day is on no statement yet')
  assert.ok(early.breaks.every((b) => b.kind === 'not_in_statement'))

  tb.clock.advance(24 * 3600_000)
  await clearing()
  const names = await archivedStatements()
  assert.equal(names.length, 1, 'one statement of the day, applied')
  const xml = await fs.readFile(path.join(iso().folder.archive, names[0]!), 'utf8')
  assert.deepEqual(await validateAgainstXsd(xml, 'camt.053.001.08.xsd'), [])

  const report = await tb.operator.rails.reconcile({ date: day })
  assert.equal(report.source, 'statement')
  assert.equal(report.breaks_count, 0, JSON.stringify(report.breaks, null, 1))
  assert.deepEqual(report.breaks, [])
  // Debits: two payouts, the returned one (it settled first), the RTC, the credit sent back.
  assert.deepEqual(report.statement_totals.debits,
    { count: 5, sum: String(1_234 + 5_000 + 4_321 + 2_500 + 450) })
  // Credits: the return, the two credits.
  assert.deepEqual(report.statement_totals.credits,
    { count: 3, sum: String(4_321 + 9_900 + 450) })
  assert.deepEqual(report.ledger_totals, report.statement_totals)
  assert.equal(report.matched.count, 8)
  const statement = report.statements[0]!
  assert.equal(statement.kind, 'camt.053.001.08')
  assert.equal(statement.account_id, tb.config.rail.settlementAccount)
  assert.equal(statement.opening_balance, '0')
  assert.equal(statement.closing_balance, String(-1_234 - 5_000 - 2_500 + 9_900))
  const listed = await tb.operator.rails.statements({})
  assert.deepEqual(listed.statements.map((s) => s.message_id), [statement.message_id])
  const entries = await db().selectFrom('rail_statement_entries').select('end_to_end_id')
    .where('message_id', '=', statement.message_id).execute()
  const ids = new Set(entries.map((e) => e.end_to_end_id))
  assert.ok(!ids.has(hex(made.rejected)), 'a rejected payout never moved money')
  for (const id of [...made.payouts, made.returned, made.rtc].map(hex)) assert.ok(ids.has(id))
  assert.ok(ids.has(made.credited) && ids.has(made.sentBack))

  // The next day has nothing settled: no statement, nothing to reconcile.
  const next = await tb.operator.rails.reconcile({ date: '2026-11-24' })
  assert.deepEqual([next.source, next.breaks_count, next.matched.count], ['none', 0, 0])
  await assertLedgerClean(tb)
})

/** The day's genuine entries, as a statement writes them. */
async function genuineEntries(): Promise<AccountEntryRow[]> {
  const [statement] = (await tb.operator.rails.statements({})).statements
  const rows = await db().selectFrom('rail_statement_entries').selectAll()
    .where('message_id', '=', statement!.message_id).orderBy('position').execute()
  return rows.map((row) => ({
    amount: BigInt(row.amount), credit_debit: row.credit_debit, booking_date: day,
    value_date: day, bank_transaction_code: { domain: 'PMNT', family: 'ICDT', sub_family: 'DMCT' },
    references: { end_to_end_id: row.end_to_end_id!,
      ...(row.ref_message_id === null ? {} : { message_id: row.ref_message_id }) },
  }))
}

/** Delivers a camt.053 of the day into inbound/ (consistent: its balances add up). */
async function deliverStatement(messageId: string, account: string,
    entries: AccountEntryRow[]): Promise<string> {
  const closing = entries.reduce((sum, e) =>
    sum + (e.credit_debit === 'CRDT' ? e.amount : -e.amount), 0n)
  const name = `camt.053.${messageId}.xml`
  await iso().folder.write(iso().folder.inbound, name, camt053Chunks({
    message_id: messageId, created_at: tb.clock.now(), statement_id: messageId,
    account_id: account, opening_balance: { amount: 0n, date: day },
    closing_balance: { amount: closing, date: day } }, entries))
  return name
}

test('reconciliation - a tampered statement of the day shows each break: an entry left out, another amount, a payment the bank never made, one entry twice', async () => {
  const entries = await genuineEntries()
  const index = (txId: string) => entries.findIndex((e) =>
    e.references.end_to_end_id === hex(txId) && e.credit_debit === 'DBIT')
  const [first, second] = made.payouts.map(index)
  const tampered = entries.filter((_, i) => i !== first)
  const changed = tampered.findIndex((e) => e.references.end_to_end_id === hex(made.payouts[1]!))
  tampered[changed] = { ...tampered[changed]!, amount: 5_001n }
  const unknown = 'ffffffffffffffffffffffffffffffff'
  tampered.push({ ...entries[second!]!, amount: 99n, references: { end_to_end_id: unknown } })
  tampered.push(entries[index(made.rtc)]!)
  await deliverStatement('CHTAMPERED0001', tb.config.rail.settlementAccount, tampered)
  await clearing()

  const report = await tb.operator.rails.reconcile({ date: day })
  assert.equal(report.statements[0]!.message_id, 'CHTAMPERED0001', 'the latest statement counts')
  const breaks = report.breaks.map((b) => [b.kind, b.credit_debit, b.end_to_end_id,
    b.statement_amount, b.ledger_amount])
  assert.deepEqual(breaks.sort(), [
    ['amount_differs', 'DBIT', hex(made.payouts[1]!), '5001', '5000'],
    ['duplicate_entry', 'DBIT', hex(made.rtc), '2500', '2500'],
    ['not_in_ledger', 'DBIT', unknown, '99', null],
    ['not_in_statement', 'DBIT', hex(made.payouts[0]!), null, '1234'],
  ])
  assert.equal(report.breaks_count, 4)
  assert.equal(report.matched.count, 8 - 2, 'all but the one left out and the one changed')
  for (const found of report.breaks) assert.ok(found.detail.length > 0)

  // The console's page of the day says the same.
  const page = await reconciliationPage({ url: new URL(`http://console/rails/reconciliation?date=${
    day}`), client: tb.operator, operator: { credentialId: 'unused', name: 'unused' },
    csrf: 'unused' })
  const text = String(page.body)
  assert.match(text, /4 break\(s\)/)
  for (const kind of ['amount differs', 'duplicate entry', 'not in ledger', 'not in statement']) {
    assert.ok(text.includes(kind), kind)
  }
  assert.ok(text.includes('CHTAMPERED0001'), 'the statements received are listed')
})

test('reconciliation - a statement of another account is refused whole with its reason and recorded nowhere', async () => {
  const entries = await genuineEntries()
  const name = await deliverStatement('CHOTHERACCOUNT1', 'SOMEONE-ELSE-01', entries)
  await clearing()
  const refusal = await db().selectFrom('rail_refusals').select('reason')
    .where('file_name', '=', name).executeTakeFirstOrThrow()
  assert.match(refusal.reason, /reports account SOMEONE-ELSE-01, not the bank's settlement/)
  assert.ok(await iso().folder.exists(iso().folder.refused, name))
  const kept = await db().selectFrom('rail_statements').select('message_id')
    .where('message_id', '=', 'CHOTHERACCOUNT1').execute()
  assert.deepEqual(kept, [])
})

test('reconciliation - a date that is not one is a 400 naming the field, and changes nothing', async () => {
  for (const date of ['2026-02-30', '23-11-2026', '', 'x'.repeat(5_000), '2026-11-23\u0000']) {
    await expectRefusal(tb.operator.rails.reconcile({ date }), 400, 'date')
  }
  await expectRefusal(tb.operator.rails.reconcile({} as { date: string }), 400, 'date')
  await expectRefusal(tb.operator.rails.statements({ limit: 0 }), 400, 'limit')
  await expectRefusal(tb.operator.rails.statements({ before: 'yesterday' }), 400, 'before')
})
