import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decidePayment } from '../../src/rails/clearing-house/decide.ts'
import {
  ClearingHouse, clearingDay, type SettledEntry,
} from '../../src/rails/clearing-house/clearing-house.ts'
import { clearingHouseId } from '../../src/rails/clearing-house/message-ids.ts'
import { readStatement, readNotification } from '../../src/rails/iso20022/camt-read.ts'
import { camt053Text, type AccountEntryRow } from '../../src/rails/iso20022/camt053-write.ts'
import { camt054Text } from '../../src/rails/iso20022/camt054-write.ts'
import { endToEndIdOf, txIdOfEndToEndId } from '../../src/rails/iso20022/end-to-end-id.ts'
import { IsoValueError } from '../../src/rails/iso20022/iso-value-error.ts'
import { readStatusReport } from '../../src/rails/iso20022/pacs002-read.ts'
import { pacs002Text } from '../../src/rails/iso20022/pacs002-write.ts'
import { readPaymentReturn } from '../../src/rails/iso20022/pacs004-read.ts'
import { readCreditTransfers } from '../../src/rails/iso20022/pacs008-read.ts'
import {
  pacs008Chunks, pacs008RtcText, type CreditTransferRow,
} from '../../src/rails/iso20022/pacs008-write.ts'
import {
  reason_codes, reasonCode, rejectionOutcome,
} from '../../src/rails/iso20022/reason-codes.ts'
import { MessageRefused } from '../../src/rails/iso20022/xml-read.ts'
import { messageText } from '../../src/rails/iso20022/xml-write.ts'
import { magicRecipients } from '../../src/rails/clearing-house/magic-recipients.ts'
import { validateAgainstXsd } from '../support/xsd.ts'

// The clearing-house simulator's core (src/rails/clearing-house/) and the writers it uses
// (pacs002-write.ts, camt053-write.ts, camt054-write.ts): every message it makes is valid
// against the official XSD and read back by the bank's own readers exactly (the round trip
// the sandbox depends on), each magic recipient answered with its status and reason code, and
// the same inputs give the same ids and bytes. No database, no transport: bytes only.

const settings = { settlement_account_id: 'SETTLEMENT-250655', bank_branch_code: '250655' }
const answered_at = new Date('2026-11-23T14:00:00Z')
const returned_at = new Date('2026-11-23T15:00:00Z')
const day = '2026-11-23'

/** A payment of the bank's to a recipient, with a fixed tx_id of its own. */
function payout(n: number, account_number: string, branch_code = '632005'): CreditTransferRow {
  return {
    tx_id: `0190a2b3-c4d5-7e6f-8a9b-${String(n).padStart(12, '0')}`,
    amount: BigInt(1000 * n + 17),
    debtor: { name: 'Acme Holdings (Pty) Ltd', account_number: '100000017',
      branch_code: '250655' },
    creditor: { name: `Recipient ${n}`, account_number, branch_code },
    ref: `INV-${n}`,
  }
}

/** An EFT file with one payment to every magic recipient and two ordinary ones. */
const eft_rows: readonly CreditTransferRow[] = [
  payout(1, '62000000017'),
  payout(2, magicRecipients.invalid_account_number),
  payout(3, magicRecipients.failed_account_number),
  payout(4, magicRecipients.returned_account_number),
  payout(5, '62000000025', magicRecipients.invalid_branch_code),
  payout(6, '62000000033'),
]

/** What each of eft_rows must be answered with: status, reason, outcome of a rejection. */
const expected_answers = [
  { status: 'ACSC', reason: null, outcome: null },
  { status: 'RJCT', reason: 'AC01', outcome: 'Invalid' },
  { status: 'RJCT', reason: 'AG01', outcome: 'Failed' },
  { status: 'ACSC', reason: null, outcome: null },
  { status: 'RJCT', reason: 'RC01', outcome: 'Invalid' },
  { status: 'ACSC', reason: null, outcome: null },
] as const

const eft_message_id = 'EFT-20261123-0700'

function eftFile(rows: readonly CreditTransferRow[] = eft_rows): Promise<string> {
  return messageText(pacs008Chunks({
    message_id: eft_message_id,
    created_at: new Date('2026-11-23T07:00:00Z'),
    payment_type: 'EFT',
    number_of_transactions: rows.length,
    control_sum: rows.reduce((sum, row) => sum + row.amount, 0n),
    settlement_date: '2026-11-23',
  }, rows))
}

async function assertValid(xml: string, xsd: string): Promise<void> {
  assert.deepEqual(await validateAgainstXsd(xml, xsd), [], `${xsd}:\n${xml.slice(0, 3000)}`)
}

/** An id of the simulator's: `CH`, its kind's letter, 32 hex digits; safe in a file name. */
function assertSimulatorId(id: string): void {
  assert.match(id, /^CH[A-Z][0-9a-f]{32}$/)
  assert.ok(id.length <= 35)
  assert.equal(txIdOfEndToEndId(id), undefined, 'never taken for one of the bank\'s tx_ids')
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

test('clearing house - an EFT file of mixed magic recipients gets a valid pacs.002 the bank reads back', async () => {
  const house = new ClearingHouse(settings)
  const answer = await house.answerTransfers({ content: await eftFile() }, answered_at)
  assert.equal(answer.original.message_id, eft_message_id)
  assert.equal(answer.original.transaction_count, 6)
  assert.deepEqual(
    [answer.original.tally.accepted, answer.original.tally.rejected, answer.returned_count],
    [3, 3, 1])
  assert.equal(answer.group_status, 'PART')
  assertSimulatorId(answer.status_report_id)
  const xml = await messageText(answer.statusReport())
  await assertValid(xml, 'pacs.002.001.11.xsd')
  const report = await readStatusReport({ content: xml })
  assert.equal(report.header.message_id, answer.status_report_id)
  assert.equal(report.header.original_message_id, eft_message_id)
  assert.equal(report.header.original_message_name, 'pacs.008.001.09')
  assert.equal(report.header.group_status, 'PART')
  assert.equal(report.header.created_at, '2026-11-23T14:00:00.000Z')
  assert.equal(report.items.length, eft_rows.length)
  eft_rows.forEach((row, index) => {
    const status = report.items[index]!
    const expected = expected_answers[index]!
    assert.equal(status.original_end_to_end_id, endToEndIdOf(row.tx_id))
    assert.equal(txIdOfEndToEndId(status.original_end_to_end_id), row.tx_id)
    assert.equal(status.original_tx_id, endToEndIdOf(row.tx_id))
    assert.equal(status.status, expected.status, row.creditor.account_number)
    assert.equal(status.reason?.code ?? null, expected.reason)
    if (expected.outcome === null) {
      assert.equal(status.additional_info, null)
    } else {
      assert.equal(status.reason!.proprietary, false)
      assert.equal(rejectionOutcome(status.reason!.code), expected.outcome)
      assert.match(status.additional_info ?? '', /\(simulated\)$/)
    }
  })
})

test('clearing house - the answers are those of simulated-rail\'s magic recipients', () => {
  // magic-recipients.ts: invalid branch and invalid account → invalid; failed → failed;
  // returned and anything else → accepted. Each rejection's code must map to the same outcome.
  const cases = [
    [{ account_number: '62000000017', branch_code: '632005' }, 'ACSC', null],
    [{ account_number: magicRecipients.invalid_account_number, branch_code: '632005' },
      'RJCT', 'Invalid'],
    [{ account_number: magicRecipients.failed_account_number, branch_code: '632005' },
      'RJCT', 'Failed'],
    [{ account_number: magicRecipients.returned_account_number, branch_code: '632005' },
      'ACSC', null],
    // The branch decides first, as the bank's rails always did: even a "failed" account is
    // Invalid.
    [{ account_number: magicRecipients.failed_account_number,
      branch_code: magicRecipients.invalid_branch_code }, 'RJCT', 'Invalid'],
  ] as const
  for (const [recipient, status, outcome] of cases) {
    const decision = decidePayment(recipient)
    assert.equal(decision.status, status, JSON.stringify(recipient))
    if (decision.status === 'RJCT') {
      assert.equal(rejectionOutcome(decision.reason_code), outcome)
      assert.ok(reasonCode(decision.reason_code) !== undefined)
    }
  }
  const returned = decidePayment({ account_number: magicRecipients.returned_account_number,
    branch_code: '632005' })
  assert.equal(returned.status === 'ACSC' && returned.returned?.reason_code, 'AC04')
})

test('clearing house - a returned payment comes back as a valid pacs.004 the bank reads back', async () => {
  const house = new ClearingHouse(settings)
  const answer = await house.answerTransfers({ content: await eftFile() }, answered_at)
  const made = await answer.paymentReturn(returned_at)
  assert.ok(made !== null)
  assertSimulatorId(made.message.message_id)
  await assertValid(made.message.text, 'pacs.004.001.10.xsd')
  const read = await readPaymentReturn({ content: made.message.text })
  assert.equal(read.header.message_id, made.message.message_id)
  assert.equal(read.header.transaction_count, 1)
  assert.equal(read.header.control_sum, eft_rows[3]!.amount)
  const [returned] = read.items
  assert.equal(read.items.length, 1)
  assert.equal(returned!.original_message_id, eft_message_id)
  assert.equal(returned!.original_end_to_end_id, endToEndIdOf(eft_rows[3]!.tx_id))
  assert.equal(returned!.original_tx_id, endToEndIdOf(eft_rows[3]!.tx_id))
  assert.equal(returned!.amount, eft_rows[3]!.amount)
  assert.deepEqual(returned!.reason, { code: 'AC04', proprietary: false })
  assert.match(returned!.reason_text ?? '', /account closed/)
  assertSimulatorId(returned!.return_id)
  assert.deepEqual(made.settled, [{ kind: 'return', message_id: made.message.message_id,
    end_to_end_id: endToEndIdOf(eft_rows[3]!.tx_id), tx_id: endToEndIdOf(eft_rows[3]!.tx_id),
    amount: eft_rows[3]!.amount, settled_on: day }])
  // A file without a returned recipient has no return to make.
  const plain = await house.answerTransfers({ content: await eftFile([eft_rows[0]!]) },
    answered_at)
  assert.equal(plain.returned_count, 0)
  assert.equal(plain.group_status, 'ACSC')
  assert.equal(await plain.paymentReturn(returned_at), null)
})

test('clearing house - an RTC payment is answered alone; a file all rejected is RJCT', async () => {
  const house = new ClearingHouse(settings)
  const rtc = await pacs008RtcText({ message_id: 'RTC-0190a2b3', created_at: answered_at,
    settlement_date: '2026-11-23' },
    payout(7, magicRecipients.failed_account_number))
  const answer = await house.answerTransfers({ content: rtc }, answered_at)
  assert.equal(answer.group_status, 'RJCT')
  const xml = await messageText(answer.statusReport())
  await assertValid(xml, 'pacs.002.001.11.xsd')
  const report = await readStatusReport({ content: xml })
  assert.equal(report.header.group_status, 'RJCT')
  assert.deepEqual(report.items.map((s) => [s.status, s.reason?.code]), [['RJCT', 'AG01']])
})

test('clearing house - a file the bank\'s reader refuses is answered with nothing', async () => {
  const house = new ClearingHouse(settings)
  const file = (await eftFile()).replace('<NbOfTxs>6</NbOfTxs>', '<NbOfTxs>7</NbOfTxs>')
  await assert.rejects(house.answerTransfers({ content: file }, answered_at), MessageRefused)
  const doctype = (await eftFile()).replace('<Document', '<!DOCTYPE x []><Document')
  await assert.rejects(house.answerTransfers({ content: doctype }, answered_at), MessageRefused)
})

test('clearing house - another bank pays in with a valid pacs.008 the bank reads back', async () => {
  const house = new ClearingHouse(settings)
  const request = { account_number: '100000025', cents: 250_075n, sequence: 1,
    payer: { name: 'Thandi & Sons <CC>' }, reference: 'Rent November' }
  const made = await house.incoming(request, answered_at)
  assertSimulatorId(made.message.message_id)
  assertSimulatorId(made.end_to_end_id)
  await assertValid(made.message.text, 'pacs.008.001.09.xsd')
  const read = await readCreditTransfers({ content: made.message.text })
  assert.equal(read.header.message_id, made.message.message_id)
  assert.equal(read.header.control_sum, 250_075n)
  assert.deepEqual(read.items, [{
    end_to_end_id: made.end_to_end_id,
    tx_id: made.end_to_end_id,
    amount: 250_075n,
    settlement_date: day,
    payment_type: 'EFT',
    debtor_name: 'Thandi & Sons <CC>',
    debtor_account_number: '1000000001',
    debtor_branch_code: '470010',
    creditor_account_number: '100000025',
    creditor_branch_code: '250655',
    remittance: 'Rent November',
  }])
  assert.deepEqual(made.settled, { kind: 'incoming', message_id: made.message.message_id,
    end_to_end_id: made.end_to_end_id, tx_id: made.end_to_end_id, amount: 250_075n,
    settled_on: day })
  // The same request is the same message; another sequence number is another payment.
  const again = await house.incoming(request, answered_at)
  assert.equal(again.message.text, made.message.text)
  const next = await house.incoming({ ...request, sequence: 2 }, answered_at)
  assert.notEqual(next.message.message_id, made.message.message_id)
  assert.notEqual(next.end_to_end_id, made.end_to_end_id)
  const rtc = await house.incoming({ account_number: '100000025', cents: 1n, sequence: 3,
    payment_type: 'RTC' }, answered_at)
  const rtcRead = await readCreditTransfers({ content: rtc.message.text })
  assert.equal(rtcRead.items[0]!.payment_type, 'RTC')
  assert.equal(rtcRead.items[0]!.remittance, null)
  await assert.rejects(house.incoming({ ...request, cents: 0n }, answered_at), IsoValueError)
  await assert.rejects(house.incoming({ ...request, sequence: -1 }, answered_at), RangeError)
})

/** Every settled entry of eft_rows' day: the payouts, the return and one incoming credit. */
async function daysEntries(house: ClearingHouse): Promise<SettledEntry[]> {
  const answer = await house.answerTransfers({ content: await eftFile() }, answered_at)
  const payouts = await collect(answer.settled())
  const returned = (await answer.paymentReturn(returned_at))!.settled
  const incoming = (await house.incoming({ account_number: '100000025', cents: 99_999n,
    sequence: 1 }, returned_at)).settled
  return [...payouts, ...returned, incoming]
}

test('clearing house - the day\'s camt.053 is valid, read back, and its balances add up', async () => {
  const house = new ClearingHouse(settings)
  const entries = await daysEntries(house)
  const accepted = [eft_rows[0]!, eft_rows[3]!, eft_rows[5]!]
  assert.deepEqual(entries.filter((e) => e.kind === 'payout').map((e) => e.end_to_end_id),
    accepted.map((row) => endToEndIdOf(row.tx_id)))
  const opening = 100_000_000n
  const statement = house.statement(day, opening, entries, new Date('2026-11-23T21:59:00Z'))
  const paid = accepted.reduce((sum, row) => sum + row.amount, 0n)
  assert.equal(statement.closing_balance, opening - paid + eft_rows[3]!.amount + 99_999n)
  assertSimulatorId(statement.message_id)
  const xml = await messageText(statement.chunks())
  await assertValid(xml, 'camt.053.001.08.xsd')
  const read = await readStatement({ content: xml })
  assert.equal(read.header.message_id, statement.message_id)
  assert.equal(read.header.account_id, settings.settlement_account_id)
  assert.deepEqual(read.header.opening_balance, { amount: opening, date: day })
  assert.deepEqual(read.header.closing_balance, { amount: statement.closing_balance, date: day })
  assert.deepEqual(read.items.map((entry) => [entry.credit_debit, entry.amount, entry.status,
    entry.references]), entries.map((entry) => [entry.kind === 'payout' ? 'DBIT' : 'CRDT',
    entry.amount, 'BOOK', [{ message_id: entry.message_id, end_to_end_id: entry.end_to_end_id,
      tx_id: entry.tx_id }]]))
  assert.deepEqual(read.items.map((entry) => entry.entry_reference), ['1', '2', '3', '4', '5'])
  for (const entry of read.items) assertSimulatorId(entry.account_servicer_reference!)
  // A debit balance (the bank owes the clearing house) is carried as DBIT and read back signed.
  const overdrawn = house.statement(day, -1_000_000n, entries, answered_at)
  const overdrawnXml = await messageText(overdrawn.chunks())
  await assertValid(overdrawnXml, 'camt.053.001.08.xsd')
  const overdrawnRead = await readStatement({ content: overdrawnXml })
  assert.equal(overdrawnRead.header.closing_balance.amount, overdrawn.closing_balance)
  assert.ok(overdrawn.closing_balance < 0n)
  assert.throws(() => house.statement('2026-11-24', opening, entries, answered_at),
    /given an entry of 2026-11-23/)
})

test('clearing house - the same input gives the same ids and bytes', async () => {
  const first = new ClearingHouse(settings)
  const second = new ClearingHouse(settings)
  const file = await eftFile()
  const answers = await Promise.all([first, second].map((house) =>
    house.answerTransfers({ content: file }, answered_at)))
  const reports = await Promise.all(answers.map((a) => messageText(a.statusReport())))
  assert.equal(reports[0], reports[1])
  const returns = await Promise.all(answers.map((a) => a.paymentReturn(returned_at)))
  assert.equal(returns[0]!.message.text, returns[1]!.message.text)
  const statements = await Promise.all([first, second].map(async (house) =>
    messageText(house.statement(day, 0n, await daysEntries(house), returned_at).chunks())))
  assert.equal(statements[0], statements[1])
  // Another original message gets other ids: the ids come from what they answer.
  const other = await first.answerTransfers({
    content: (await eftFile()).replace(eft_message_id, 'EFT-20261123-0900') }, answered_at)
  assert.notEqual(other.status_report_id, answers[0]!.status_report_id)
  assert.equal(answers[0]!.status_report_id, clearingHouseId('status_report', eft_message_id))
})

test('clearing house - the reason code table says which rejections are Invalid', () => {
  const invalid = Object.entries(reason_codes)
    .filter(([, code]) => code.rejection === 'Invalid').map(([code]) => code).sort()
  assert.deepEqual(invalid, ['AC01', 'AC03', 'AC04', 'BE01', 'RC01'])
  for (const [code, entry] of Object.entries(reason_codes)) {
    assert.match(code, /^[A-Z0-9]{4}$/)
    assert.ok(entry.text.length <= 105, code)
  }
  assert.equal(rejectionOutcome('AG01'), 'Failed')
  assert.equal(rejectionOutcome('ZZ99'), 'Failed', 'an unknown code is not guessed Invalid')
  assert.equal(rejectionOutcome('AC01', true), 'Failed', 'a proprietary reason is Failed')
  assert.equal(reasonCode('toString'), undefined)
  assert.equal(rejectionOutcome('constructor'), 'Failed')
})

test('clearing house - pacs.002 writer: a group status alone, and what it refuses', async () => {
  const header = { message_id: 'CHSX', created_at: answered_at,
    original_message_id: eft_message_id }
  const groupOnly = await pacs002Text({ ...header, group_status: 'RJCT',
    group_reason_code: 'FF01', group_additional_information: 'not a pacs.008' }, [])
  await assertValid(groupOnly, 'pacs.002.001.11.xsd')
  const read = await readStatusReport({ content: groupOnly })
  assert.equal(read.header.group_status, 'RJCT')
  assert.deepEqual(read.header.group_reason, { code: 'FF01', proprietary: false })
  assert.equal(read.items.length, 0)
  const refuse = (rows: Parameters<typeof pacs002Text>[1], field: RegExp, extra = {}) =>
    assert.rejects(pacs002Text({ ...header, ...extra }, rows), (error: unknown) =>
      error instanceof IsoValueError && field.test(error.field))
  const id = 'a'.repeat(32)
  await refuse([{ original_end_to_end_id: id, status: 'RJCT' }], /StsRsnInf\/Rsn\/Cd/)
  await refuse([{ original_end_to_end_id: id, status: 'RJCT', reason_code: 'ac01' }],
    /StsRsnInf\/Rsn\/Cd/)
  await refuse([{ original_end_to_end_id: id, status: 'XXXX' as 'ACSC' }], /TxSts/)
  await refuse([{ original_end_to_end_id: 'x'.repeat(36), status: 'ACSC' }], /OrgnlEndToEndId/)
  await refuse([{ original_end_to_end_id: id, status: 'RJCT', reason_code: 'AC01',
    additional_information: 'x'.repeat(106) }], /AddtlInf/)
  await refuse([], /GrpSts/)
  await refuse([], /MsgId/, { message_id: 'x'.repeat(36), group_status: 'ACSC' })
})

function entry(overrides: Partial<AccountEntryRow> = {}): AccountEntryRow {
  return {
    amount: 1_500n, credit_debit: 'CRDT', booking_date: day, value_date: day,
    bank_transaction_code: { domain: 'PMNT', family: 'RCDT', sub_family: 'DMCT' },
    references: { end_to_end_id: 'OB-E2E-1' },
    ...overrides,
  }
}

test('clearing house - camt.053 writer refuses balances that do not add up; camt.054 reads back', async () => {
  const header = { message_id: 'CHT1', created_at: answered_at, statement_id: 'CHT1',
    account_id: 'SETTLEMENT-250655', opening_balance: { amount: 0n, date: day },
    closing_balance: { amount: 1_501n, date: day } }
  await assert.rejects(camt053Text(header, [entry()]), (error: unknown) =>
    error instanceof IsoValueError && error.field === 'Stmt/Bal')
  await assert.rejects(camt053Text(header, [entry({ booking_date: '2026-02-30' })]),
    (error: unknown) => error instanceof IsoValueError && /BookgDt/.test(error.field))
  await assert.rejects(camt053Text(header, [entry({ bank_transaction_code:
    { domain: 'PMNT', family: 'rcdt', sub_family: 'DMCT' } })]), IsoValueError)
  const empty = await camt053Text({ ...header, closing_balance: { amount: 0n, date: day } }, [])
  await assertValid(empty, 'camt.053.001.08.xsd')
  assert.equal((await readStatement({ content: empty })).items.length, 0)
  const notification = await camt054Text({ message_id: 'CHN1', created_at: answered_at,
    notification_id: 'CHN1', account_id: 'SETTLEMENT-250655' },
  [entry(), entry({ credit_debit: 'DBIT', amount: 20n, references: { message_id: 'M',
    end_to_end_id: 'E', tx_id: 'T' } })])
  await assertValid(notification, 'camt.054.001.08.xsd')
  const read = await readNotification({ content: notification })
  assert.equal(read.header.report_id, 'CHN1')
  assert.deepEqual(read.items.map((e) => [e.credit_debit, e.amount, e.references]), [
    ['CRDT', 1_500n, [{ message_id: null, end_to_end_id: 'OB-E2E-1', tx_id: null }]],
    ['DBIT', 20n, [{ message_id: 'M', end_to_end_id: 'E', tx_id: 'T' }]],
  ])
})

test('clearing house - the clearing day is South Africa\'s date', () => {
  assert.equal(clearingDay(new Date('2026-11-23T21:59:59Z')), '2026-11-23')
  assert.equal(clearingDay(new Date('2026-11-23T22:00:00Z')), '2026-11-24')
})
