import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { openNotification, openStatement, readNotification, readStatement } from '../../src/rails/iso20022/camt-read.ts'
import { openStatusReport, readStatusReport } from '../../src/rails/iso20022/pacs002-read.ts'
import { openPaymentReturn, readPaymentReturn } from '../../src/rails/iso20022/pacs004-read.ts'
import { openCreditTransfers, readCreditTransfers } from '../../src/rails/iso20022/pacs008-read.ts'
import { MessageRefused, read_limits, type MessageSource, type OpenedMessage, type ReadLimits } from '../../src/rails/iso20022/xml-read.ts'
import { validateAgainstXsd } from '../support/xsd.ts'

// The readers of the messages the bank receives (src/rails/iso20022/*-read.ts): each kind read
// right from hand-made files valid against the official XSDs; every hostile or malformed
// input refused whole with its reason and nothing handed out; a report of 100,000 statuses read
// in chunks while the reader holds about one chunk. No database: the readers read bytes only.

const inbound = fileURLToPath(new URL('../fixtures/iso20022/inbound/', import.meta.url))
const fixture = (name: string): MessageSource => ({ file: path.join(inbound, name) })
const fixtureText = (name: string): Promise<string> => readFile(path.join(inbound, name), 'utf8')

const e2e = (n: string) => `0190a1b2c3d47e5f8a9b0c1d2e3f4a${n}`

type Opener = (source: MessageSource, limits?: ReadLimits) =>
  Promise<OpenedMessage<unknown, unknown>>

/** Opens and reads every item; the number of items handed out before a refusal is kept. */
async function readAll(open: Opener, source: MessageSource, limits?: ReadLimits) {
  const handedOut: unknown[] = []
  const opened = await open(source, limits)
  for await (const chunk of opened.items()) handedOut.push(...chunk)
  return { header: opened.header, items: handedOut }
}

/** Asserts the message is refused with a reason matching `reason`, and nothing handed out. */
async function assertRefused(
  open: Opener,
  source: MessageSource,
  reason: RegExp,
  at?: RegExp,
  limits?: ReadLimits,
): Promise<MessageRefused> {
  let refusal: MessageRefused | undefined
  let handedOut = 0
  try {
    const opened = await open(source, limits)
    for await (const chunk of opened.items()) handedOut += chunk.length
  } catch (error) {
    if (!(error instanceof MessageRefused)) throw error
    refusal = error
  }
  assert.ok(refusal !== undefined, `refused with ${reason}`)
  assert.match(refusal.reason, reason)
  if (at !== undefined) assert.match(refusal.path, at)
  assert.equal(handedOut, 0, 'nothing is handed out of a refused message')
  return refusal
}

test('rails - a pacs.002 status report is read: its header, then each status accepted or rejected with its reason code and text', async () => {
  const { header, items } = await readStatusReport(fixture('pacs.002-cycle.xml'))
  assert.deepEqual(header, {
    message_id: 'ACH20261123-STS-0001',
    created_at: '2026-11-23T16:05:00+02:00',
    original_message_id: 'EFT20261123-0001',
    original_message_name: 'pacs.008.001.09',
    group_status: 'PART',
    group_reason: null,
  })
  const none = { reason: null, additional_info: null }
  assert.deepEqual(items, [
    { original_end_to_end_id: e2e('01'), original_tx_id: e2e('01'), status: 'ACSC', ...none },
    { original_end_to_end_id: e2e('02'), original_tx_id: null, status: 'ACCC', ...none },
    {
      original_end_to_end_id: e2e('03'), original_tx_id: e2e('03'), status: 'RJCT',
      reason: { code: 'AC01', proprietary: false },
      additional_info: 'Incorrect account number: no such account at branch 250655',
    },
    {
      original_end_to_end_id: e2e('04'), original_tx_id: null, status: 'RJCT',
      reason: { code: 'BANK-CLOSED', proprietary: true }, additional_info: null,
    },
  ])
})

test('rails - a pacs.002 rejecting the original message whole carries the group status and reason, and no status', async () => {
  const { header, items } = await readStatusReport(fixture('pacs.002-group-rejected.xml'))
  assert.equal(header.group_status, 'RJCT')
  assert.deepEqual(header.group_reason, { code: 'AM05', proprietary: false })
  assert.equal(header.original_message_id, 'EFT20261124-0001')
  assert.deepEqual(items, [])
})

test('rails - statuses are handed out in chunks of the size asked, in order', async () => {
  const opened = await openStatusReport(fixture('pacs.002-cycle.xml'))
  assert.equal(opened.count, 4)
  const chunks: string[][] = []
  for await (const chunk of opened.items(3)) {
    chunks.push(chunk.map((s) => s.original_end_to_end_id))
  }
  assert.deepEqual(chunks, [[e2e('01'), e2e('02'), e2e('03')], [e2e('04')]])
})

test('rails - a pacs.004 return is read: return id, original message and end-to-end id, cents, reason code and text (the message-level original and reason where the return has none)', async () => {
  const { header, items } = await readPaymentReturn(fixture('pacs.004-returns.xml'))
  assert.deepEqual(header, {
    message_id: 'RTN20261125-0001',
    created_at: '2026-11-25T07:30:00+02:00',
    transaction_count: 2,
    control_sum: 165_075n,
  })
  assert.deepEqual(items, [
    {
      return_id: 'RTN-0001', original_message_id: 'EFT20261123-0001',
      original_end_to_end_id: e2e('01'), original_tx_id: e2e('01'), amount: 150_000n,
      reason: { code: 'AC04', proprietary: false }, reason_text: 'Account closed',
    },
    {
      return_id: 'RTN-0002', original_message_id: 'RTC20261124-0042',
      original_end_to_end_id: e2e('42'), original_tx_id: null, amount: 15_075n,
      reason: { code: 'MD06', proprietary: false },
      reason_text: 'Refund requested by the payer',
    },
  ])
})

test('rails - an incoming pacs.008 EFT file is read: count and control sum checked, each payer and payee, cents, settlement date and EFT from the group', async () => {
  const { header, items } = await readCreditTransfers(fixture('pacs.008-incoming-eft.xml'))
  assert.deepEqual(header, {
    message_id: 'OTHERBANK-EFT-20261123-7',
    created_at: '2026-11-23T14:00:00+02:00',
    transaction_count: 3,
    control_sum: 1_234_567n,
  })
  assert.deepEqual(items.map((i) => [i.end_to_end_id, i.amount, i.settlement_date]), [
    ['OB-E2E-1', 1_000_000n, '2026-11-23'],
    ['OB-E2E-2', 200_000n, '2026-11-24'],
    ['OB-E2E-3', 34_567n, '2026-11-23'],
  ])
  assert.deepEqual(items[0], {
    end_to_end_id: 'OB-E2E-1', tx_id: 'OB-TX-1', amount: 1_000_000n,
    settlement_date: '2026-11-23', payment_type: 'EFT',
    debtor_name: 'Thandi Mokoena', debtor_account_number: '1234567890',
    debtor_branch_code: '632005', creditor_account_number: '100000017',
    creditor_branch_code: '250655', remittance: 'INV 2026-1123 November stock',
  })
  // Character references and XML's five entities are text; nothing else is expanded.
  assert.equal(items[1]!.debtor_name, 'Sören & Sipho <Partners>')
  assert.equal(items[1]!.tx_id, null)
  assert.equal(items[1]!.remittance, null)
  assert.ok(items.every((i) => i.payment_type === 'EFT'))
})

test('rails - an incoming pacs.008 RTC is read as RTC from its own local instrument', async () => {
  const { items } = await readCreditTransfers(fixture('pacs.008-incoming-rtc.xml'))
  assert.deepEqual(items, [{
    end_to_end_id: 'OB-RTC-E2E-981', tx_id: 'OB-RTC-TX-981', amount: 25_000n,
    settlement_date: '2026-11-23', payment_type: 'RTC',
    debtor_name: 'Pieter van der Merwe', debtor_account_number: '1098765432',
    debtor_branch_code: '470010', creditor_account_number: '100000033',
    creditor_branch_code: '250655', remittance: 'Rent December',
  }])
})

test('rails - a camt.053 statement is read: balances with their sign, each entry with its status, dates, servicer reference and the references of its details', async () => {
  const { header, items } = await readStatement(fixture('camt.053-settlement.xml'))
  assert.deepEqual(header, {
    message_id: 'ACH-STMT-20261123',
    created_at: '2026-11-23T23:59:00+02:00',
    report_id: 'STMT-20261123-250655',
    account_id: 'SETTLEMENT-250655',
    opening_balance: { amount: 100_000_000n, date: '2026-11-23' },
    closing_balance: { amount: 101_099_642n, date: '2026-11-23' },
  })
  assert.deepEqual(items.map((e) => [e.amount, e.credit_debit, e.status, e.reversal]), [
    [1_234_567n, 'CRDT', 'BOOK', false],
    [150_000n, 'DBIT', 'BOOK', false],
    [25_000n, 'DBIT', 'PDNG', false],
    [15_075n, 'CRDT', 'BOOK', true],
  ])
  assert.deepEqual(items[0]!.references.map((r) => r.end_to_end_id),
    ['OB-E2E-1', 'OB-E2E-2', 'OB-E2E-3'])
  assert.deepEqual(items[1], {
    entry_reference: '2', amount: 150_000n, credit_debit: 'DBIT', reversal: false,
    status: 'BOOK', booking_date: '2026-11-23T16:05:00+02:00', value_date: '2026-11-23',
    account_servicer_reference: 'ACH-REF-0002',
    references: [{ message_id: 'EFT20261123-0001', end_to_end_id: e2e('01'), tx_id: e2e('01') }],
  })
  assert.deepEqual(items[2], {
    entry_reference: null, amount: 25_000n, credit_debit: 'DBIT', reversal: false,
    status: 'PDNG', booking_date: null, value_date: '2026-11-24',
    account_servicer_reference: null, references: [],
  })
})

test('rails - a camt.054 notification is read: its account and entries, a proprietary status as its code', async () => {
  const { header, items } = await readNotification(fixture('camt.054-notification.xml'))
  assert.deepEqual(header, {
    message_id: 'ACH-NTF-20261123-0012',
    created_at: '2026-11-23T10:15:43+02:00',
    report_id: 'NTF-0012',
    account_id: 'SETTLEMENT-250655',
  })
  assert.deepEqual(items[0], {
    entry_reference: null, amount: 25_000n, credit_debit: 'CRDT', reversal: false,
    status: 'BOOK', booking_date: '2026-11-23T10:15:42+02:00', value_date: '2026-11-23',
    account_servicer_reference: 'ACH-RTC-981',
    references: [{
      message_id: 'OTHERBANK-RTC-000981', end_to_end_id: 'OB-RTC-E2E-981',
      tx_id: 'OB-RTC-TX-981',
    }],
  })
  assert.deepEqual([items[1]!.amount, items[1]!.credit_debit, items[1]!.status],
    [9_999n, 'DBIT', 'SETTLED'])
})

const valid_fixtures: [file: string, xsd: string][] = [
  ['pacs.002-cycle.xml', 'pacs.002.001.11.xsd'],
  ['pacs.002-group-rejected.xml', 'pacs.002.001.11.xsd'],
  ['pacs.004-returns.xml', 'pacs.004.001.10.xsd'],
  ['pacs.008-incoming-eft.xml', 'pacs.008.001.09.xsd'],
  ['pacs.008-incoming-rtc.xml', 'pacs.008.001.09.xsd'],
  ['camt.053-settlement.xml', 'camt.053.001.08.xsd'],
  ['camt.054-notification.xml', 'camt.054.001.08.xsd'],
]

test('rails - every valid inbound fixture is valid against the official XSD of its message', async () => {
  for (const [file, xsd] of valid_fixtures) {
    assert.deepEqual(await validateAgainstXsd(await fixtureText(file), xsd), [], file)
  }
})

// Hostile and malformed files, committed: each refused with its reason, nothing handed out.
const hostile_files: [file: string, reason: RegExp, at: RegExp][] = [
  ['billion-laughs.xml', /DOCTYPE is not allowed/, /^$/],
  ['xxe-passwd.xml', /DOCTYPE is not allowed/, /^$/],
  ['doctype-alone.xml', /DOCTYPE is not allowed/, /^$/],
  ['wrong-namespace.xml', /in the namespace .*pacs\.008\.001\.08, not .*pacs\.008\.001\.09$/,
    /^Document$/],
  ['no-namespace.xml', /the message is in no namespace, not .*pacs\.008\.001\.09$/,
    /^Document$/],
  ['truncated.xml', /not well-formed XML: unclosed tag/, /Cdtr\/Nm$/],
  ['amount-3-decimals.xml', /"250\.005" is not a whole number of cents/,
    /CdtTrfTxInf\[1\]\/IntrBkSttlmAmt$/],
  ['currency-usd.xml', /currency "USD" is not ZAR/, /CdtTrfTxInf\[1\]\/IntrBkSttlmAmt$/],
  ['count-mismatch.xml', /the number of transactions says 2, the message holds 1/,
    /GrpHdr\/NbOfTxs$/],
  ['control-sum-mismatch.xml', /the control sum \(cents\) says 250000, the message holds 25000/,
    /GrpHdr\/CtrlSum$/],
]

test('rails - hostile and malformed files are refused whole with their reason: DTDs and entities, namespaces, a truncated file, inexact or foreign amounts, totals that do not match', async () => {
  for (const [file, reason, at] of hostile_files) {
    const refusal = await assertRefused(openCreditTransfers, fixture(`hostile/${file}`), reason, at)
    assert.equal(refusal.message_name, 'pacs.008.001.09', file)
    assert.ok(refusal.message.startsWith('pacs.008.001.09 refused: '), refusal.message)
  }
})

test('rails - the refusal of the external entity names no file content', async () => {
  const refusal = await assertRefused(openCreditTransfers, fixture('hostile/xxe-passwd.xml'),
    /DOCTYPE/)
  assert.doesNotMatch(refusal.message, /root:|\/bin\//)
  assert.equal(refusal.line, 4, 'the line of the end of the DOCTYPE')
})

const rtc = await fixtureText('pacs.008-incoming-rtc.xml')
const report = await fixtureText('pacs.002-cycle.xml')
const statement = await fixtureText('camt.053-settlement.xml')

/** The text with `from` replaced once by `to`; asserts `from` is there. */
function edited(text: string, from: string | RegExp, to: string): MessageSource {
  assert.ok(typeof from === 'string' ? text.includes(from) : from.test(text), String(from))
  return { content: text.replace(from, to) }
}

const amount = '>250.00</IntrBkSttlmAmt>'
const hostile_edits: [what: string, source: MessageSource, reason: RegExp][] = [
  ['an exponent', edited(rtc, amount, '>2.5E2</IntrBkSttlmAmt>'), /not an ISO amount/],
  ['a minus', edited(rtc, amount, '>-250.00</IntrBkSttlmAmt>'), /negative amount/],
  ['a comma', edited(rtc, amount, '>250,00</IntrBkSttlmAmt>'), /not an ISO amount/],
  ['no currency', edited(rtc, ' Ccy="ZAR">250.00', '>250.00'), /no currency/],
  ['an undefined entity', edited(rtc, 'Rent December', 'Rent&nbsp;December'),
    /not well-formed XML: undefined entity/],
  ['a character reference to no character', edited(rtc, 'Rent December', 'Rent&#0;'),
    /not well-formed XML: malformed character entity/],
  ['a processing instruction', edited(rtc, '<Document', '<?xml-stylesheet href="x"?><Document'),
    /processing instruction <\?xml-stylesheet\?> is not allowed/],
  ['another encoding', edited(rtc, 'encoding="UTF-8"', 'encoding="ISO-8859-1"'),
    /encoding ISO-8859-1 is not read/],
  ['an element of another namespace', edited(rtc, '<ChrgBr>SLEV</ChrgBr>',
    '<x:ChrgBr xmlns:x="urn:evil">SLEV</x:ChrgBr>'), /ChrgBr is in the namespace urn:evil/],
  ['another message under Document', edited(rtc, /FIToFICstmrCdtTrf/g, 'PmtRtr'),
    /the element PmtRtr is not FIToFICstmrCdtTrf/],
  ['text beside elements', edited(rtc, '<ChrgBr>', 'loose text<ChrgBr>'),
    /text beside elements/],
  ['no creditor account', edited(rtc, /<CdtrAcct>[\s\S]*<\/CdtrAcct>/, ''),
    /CdtrAcct is missing/],
  ['an IBAN', edited(rtc, '<Othr>\n            <Id>100000033</Id>\n          </Othr>',
    '<IBAN>ZA00100000033</IBAN>'), /an IBAN is not a South African account number/],
  ['an id longer than Max35Text', edited(rtc, 'OB-RTC-E2E-981', 'E'.repeat(36)),
    /longer than 35 characters/],
  ['an empty name', edited(rtc, 'Pieter van der Merwe', ''), /the value is empty/],
  ['a date that is no date', edited(rtc, '<IntrBkSttlmDt>2026-11-23', '<IntrBkSttlmDt>2026-02-30'),
    /"2026-02-30" is not a date/],
  ['no settlement date', edited(rtc, '<IntrBkSttlmDt>2026-11-23</IntrBkSttlmDt>', ''),
    /IntrBkSttlmDt is missing/],
  ['another payment type', edited(rtc, '<Prtry>RTC</Prtry>', '<Prtry>SWIFT</Prtry>'),
    /local instrument \(PmtTpInf\/LclInstrm\/Prtry\) is "SWIFT", not EFT or RTC/],
  ['two amounts', edited(rtc, amount, `${amount}<IntrBkSttlmAmt Ccy="ZAR">1.00</IntrBkSttlmAmt>`),
    /more than one IntrBkSttlmAmt/],
  ['no control sum', edited(rtc, '<CtrlSum>250</CtrlSum>', ''), /CtrlSum is missing/],
  ['a second root', edited(rtc, '</Document>', '</Document><Document/>'),
    /not well-formed XML/],
]

test('rails - inexact amounts, entities, instructions, encodings, foreign elements and missing or doubled fields refuse an incoming pacs.008 whole', async () => {
  for (const [what, source, reason] of hostile_edits) {
    await assert.doesNotReject(assertRefused(openCreditTransfers, source, reason), what)
  }
})

test('rails - a CDATA section and a comment inside a value are read as its text', async () => {
  const { items } = await readCreditTransfers(edited(rtc, 'Rent December',
    '<![CDATA[Rent <December>]]><!-- a comment --> & more'.replace('&', '&amp;')))
  assert.equal(items[0]!.remittance, 'Rent <December> & more')
})

test('rails - an amount is any exact form the schema admits: a plus, zeros past the cents, no fraction', async () => {
  for (const text of ['+250.00', '250.000', '250', ' 250.00 ']) {
    const { items } = await readCreditTransfers(edited(rtc, amount, `>${text}</IntrBkSttlmAmt>`))
    assert.equal(items[0]!.amount, 25_000n, text)
  }
})

test('rails - bytes that are not UTF-8 are refused', async () => {
  const bytes = Buffer.from(rtc.replace('Pieter', 'Pi\u00e9ter'), 'utf8')
  const at = bytes.indexOf(0xc3)
  bytes[at] = 0xe9
  bytes[at + 1] = 0x20
  await assertRefused(openCreditTransfers, { content: bytes }, /not UTF-8 text/)
})

test('rails - a status report refuses a status without its end-to-end id or code, a rejection without a reason, a report that names no original message', async () => {
  const first = /<TxInfAndSts>\s*<OrgnlEndToEndId>[0-9a-f]+<\/OrgnlEndToEndId>/
  await assertRefused(openStatusReport, edited(report, first, '<TxInfAndSts>'),
    /OrgnlEndToEndId is missing/, /TxInfAndSts\[1\]\/OrgnlEndToEndId$/)
  await assertRefused(openStatusReport, edited(report, '<TxSts>ACCC</TxSts>', ''),
    /TxSts is missing/, /TxInfAndSts\[2\]\/TxSts$/)
  await assertRefused(openStatusReport, edited(report, /<Rsn>\s*<Cd>AC01<\/Cd>\s*<\/Rsn>/, ''),
    /a rejection \(RJCT\) without a reason code/, /TxInfAndSts\[3\]\/StsRsnInf\/Rsn$/)
  await assertRefused(openStatusReport, edited(report, /<OrgnlGrpInfAndSts>[\s\S]*<\/OrgnlGrpInfAndSts>/, ''),
    /OrgnlGrpInfAndSts is missing/)
  await assertRefused(openStatusReport, edited(report, '<TxSts>ACSC</TxSts>', '<TxSts>ok</TxSts>'),
    /"ok" is not a code/)
})

test('rails - a return without a reason, or whose amounts do not add up to its control sum, is refused', async () => {
  const returns = await fixtureText('pacs.004-returns.xml')
  await assertRefused(openPaymentReturn, edited(returns, /<RtrRsnInf>[\s\S]*?<\/RtrRsnInf>/, ''),
    /a return without a reason code/, /TxInf\[1\]\/RtrRsnInf\/Rsn$/)
  await assertRefused(openPaymentReturn, edited(returns, '<CtrlSum>1650.75', '<CtrlSum>1650.76'),
    /the control sum \(cents\) says 165076, the message holds 165075/)
  await assertRefused(openPaymentReturn, edited(returns, '<NbOfTxs>2', '<NbOfTxs>3'),
    /the number of returns says 3, the message holds 2/)
})

test('rails - a statement whose entries do not add up to its closing balance or its summary, or that holds two statements, is refused', async () => {
  await assertRefused(openStatement, edited(statement, '>1010996.42<', '>1010996.43<'),
    /the closing balance \(cents\) says 101099643, the message holds 101099642/)
  await assertRefused(openStatement, edited(statement, '<Sum>1750.00</Sum>', '<Sum>1750.01</Sum>'),
    /TtlDbtNtries sum \(cents\) says 175001, the message holds 175000/)
  await assertRefused(openStatement, edited(statement, /<Cd>CLBD<\/Cd>/, '<Cd>CLAV</Cd>'),
    /the closing \(CLBD\) balance is missing/)
  await assertRefused(openStatement, edited(statement, '</Stmt>', `</Stmt>${
    statement.slice(statement.indexOf('<Stmt>'), statement.indexOf('<Bal>'))}</Stmt>`),
  /more than one Stmt/)
  await assertRefused(openNotification, edited(statement, /camt\.053/g, 'camt.054'),
    /the element BkToCstmrStmt is not BkToCstmrDbtCdtNtfctn/)
  await assertRefused(openStatement, edited(statement, '<Ccy>ZAR</Ccy>', '<Ccy>EUR</Ccy>'),
    /the account's currency EUR is not ZAR/)
})

test('rails - the moov-io samples: a real pacs.002.001.11 naming no original message and a camt.053 of version 001.04 are refused, each with its reason', async () => {
  await assertRefused(openStatusReport, fixture('moov/valid_pacs_v11.xml'),
    /OrgnlGrpInfAndSts is missing/, /FIToFIPmtStsRpt\/OrgnlGrpInfAndSts$/)
  const swiss = 'moov/camt.053_P_CH2909000000250094239_1110092698_0_2020112503071366.xml'
  await assertRefused(openStatement, fixture(swiss),
    /the message is in the namespace urn:iso:std:iso:20022:tech:xsd:camt\.053\.001\.04, not .*camt\.053\.001\.08/)
})

// The bounds (xml-read.ts, read_limits): each at its value, and just over it.
const limited = (limits: Partial<ReadLimits>): ReadLimits => ({ ...read_limits, ...limits })
const rtcBytes = Buffer.byteLength(rtc, 'utf8')

test('rails - a message of exactly the byte bound is read and one byte more is refused', async () => {
  const { items } = await readAll(openCreditTransfers, { content: rtc },
    limited({ message_bytes_max: rtcBytes }))
  assert.equal(items.length, 1)
  await assertRefused(openCreditTransfers, { content: rtc },
    new RegExp(`the message is larger than ${rtcBytes - 1} bytes`), /^$/,
    limited({ message_bytes_max: rtcBytes - 1 }))
})

/** An endless stream of statuses, 64 KiB at a time; `pulled` counts the bytes taken. */
function endless(pulled: { bytes: number }): () => AsyncIterable<string> {
  const piece = '<TxInfAndSts><OrgnlEndToEndId>x</OrgnlEndToEndId><TxSts>ACSC</TxSts></TxInfAndSts>'
  const chunk = piece.repeat(Math.floor(64 * 1024 / piece.length))
  return async function* () {
    const head = report.slice(0, report.indexOf('<TxInfAndSts>'))
    pulled.bytes += head.length
    yield head
    for (;;) {
      pulled.bytes += chunk.length
      yield chunk
    }
  }
}

test('rails - a stream is counted as it is read and stopped once it passes the byte bound', async () => {
  const pulled = { bytes: 0 }
  const bound = 1024 * 1024
  await assertRefused(openStatusReport, { open: endless(pulled) },
    /the message is larger than 1048576 bytes/, /^$/, limited({ message_bytes_max: bound }))
  assert.ok(pulled.bytes > bound && pulled.bytes <= bound + 64 * 1024, `${pulled.bytes} read`)
})

test('rails - a file larger than the default bound (256 MiB) is refused before it is read', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bank-iso20022-read-'))
  try {
    const file = path.join(dir, 'huge.xml')
    await writeFile(file, rtc)
    // A sparse file: 256 MiB and one byte that take no disk and are never read.
    await truncate(file, read_limits.message_bytes_max + 1)
    await assertRefused(openCreditTransfers, { file },
      /the message is larger than 268435456 bytes/, /^$/)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('rails - elements nested to the depth bound are read and one level more is refused', async () => {
  // The deepest element of the RTC is 7 levels: Document/…/CdtTrfTxInf/DbtrAcct/Id/Othr/Id.
  await readAll(openCreditTransfers, { content: rtc }, limited({ element_depth_max: 7 }))
  await assertRefused(openCreditTransfers, { content: rtc }, /elements nest deeper than 6/,
    /CdtTrfTxInf\[1\]\/DbtrAcct\/Id\/Othr\/Id$/, limited({ element_depth_max: 6 }))
  const deep = '<Splmtry>'.repeat(40) + '</Splmtry>'.repeat(40)
  await assertRefused(openCreditTransfers, edited(rtc, '<ChrgBr>SLEV</ChrgBr>',
    `<ChrgBr>SLEV</ChrgBr>${deep}`), /elements nest deeper than 32/)
})

test('rails - a value of the bound is read and one character more is refused while it is read', async () => {
  const longest = '2026-11-23T10:15:42.123+02:00'.length
  await readAll(openCreditTransfers, { content: rtc }, limited({ value_chars_max: longest }))
  await assertRefused(openCreditTransfers, { content: rtc },
    new RegExp(`more than ${longest - 1} characters in one element`), /GrpHdr\/CreDtTm$/,
    limited({ value_chars_max: longest - 1 }))
  await assertRefused(openCreditTransfers, edited(rtc, 'Rent December', 'x'.repeat(5000)),
    /more than 4096 characters in one element/, /CdtTrfTxInf\[1\]\/RmtInf\/Ustrd$/)
})

test('rails - a prolog of the bound is read and one character more is refused', async () => {
  const prolog = rtc.indexOf('<Document')
  await readAll(openCreditTransfers, { content: rtc }, limited({ prolog_chars_max: prolog }))
  await assertRefused(openCreditTransfers, { content: rtc },
    new RegExp(`more than ${prolog - 1} characters before the root element`), /^$/,
    limited({ prolog_chars_max: prolog - 1 }))
  const comment = `<!--${'x'.repeat(70 * 1024)}-->`
  await assertRefused(openCreditTransfers, edited(rtc, '<Document', `${comment}<Document`),
    /more than 65536 characters before the root element/)
})

test('rails - items up to the bound are read and one more is refused', async () => {
  await readAll(openStatusReport, { content: report }, limited({ message_items_max: 4 }))
  await assertRefused(openStatusReport, { content: report }, /more than 3 items/,
    /TxInfAndSts\[4\]$/, limited({ message_items_max: 3 }))
})

test('rails - an item of the bound of elements is read and one element more is refused', async () => {
  const item = rtc.slice(rtc.indexOf('<CdtTrfTxInf>'), rtc.indexOf('</CdtTrfTxInf>'))
  const elements = item.match(/<[A-Za-z]/g)!.length
  await readAll(openCreditTransfers, { content: rtc }, limited({ record_elements_max: elements }))
  await assertRefused(openCreditTransfers, { content: rtc },
    new RegExp(`more than ${elements - 1} elements in one item`), /CdtTrfTxInf\[1\]/,
    limited({ record_elements_max: elements - 1 }))
})

// A status report of `count` statuses made as it is read, never whole: every thousandth is a
// rejection; `last` replaces the last status.
const big_report_head = '<?xml version="1.0" encoding="UTF-8"?>\n'
  + '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.002.001.11"><FIToFIPmtStsRpt>'
  + '<GrpHdr><MsgId>ACH-BIG</MsgId><CreDtTm>2026-11-23T16:05:00</CreDtTm></GrpHdr>'
  + '<OrgnlGrpInfAndSts><OrgnlMsgId>EFT-BIG</OrgnlMsgId>'
  + '<OrgnlMsgNmId>pacs.008.001.09</OrgnlMsgNmId></OrgnlGrpInfAndSts>'

const bigId = (n: number) => n.toString(16).padStart(32, '0')

function bigStatus(n: number): string {
  const status = n % 1000 === 999
    ? '<TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC01</Cd></Rsn></StsRsnInf>'
    : '<TxSts>ACSC</TxSts>'
  return `<TxInfAndSts><OrgnlEndToEndId>${bigId(n)}</OrgnlEndToEndId>${status}</TxInfAndSts>`
}

function bigReport(count: number, last?: string): () => AsyncIterable<string> {
  return async function* () {
    yield big_report_head
    for (let from = 0; from < count; from += 1000) {
      const statuses: string[] = []
      for (let n = from; n < Math.min(from + 1000, count); n += 1) {
        statuses.push(n === count - 1 && last !== undefined ? last : bigStatus(n))
      }
      yield statuses.join('')
    }
    yield '</FIToFIPmtStsRpt></Document>'
  }
}

test('rails - 100,000 statuses are checked whole, then handed out in chunks while the reader holds about one chunk', async () => {
  const opened = await openStatusReport({ open: bigReport(100_000) })
  assert.equal(opened.count, 100_000)
  assert.equal(opened.header.original_message_id, 'EFT-BIG')
  let read = 0
  let rejected = 0
  let chunks = 0
  for await (const chunk of opened.items(1000)) {
    assert.ok(chunk.length <= 1000)
    assert.equal(chunk[0]!.original_end_to_end_id, bigId(read), 'in order')
    read += chunk.length
    rejected += chunk.filter((s) => s.status === 'RJCT' && s.reason?.code === 'AC01').length
    chunks += 1
  }
  assert.deepEqual([read, rejected, chunks], [100_000, 100, 100])
  // What the reader held at once: the chunk being filled and the statuses of one slice of
  // text it parsed (64 Ki characters, about 600 of these) — never the report.
  assert.ok(opened.held.items_max <= 2000, `held ${opened.held.items_max} statuses at once`)
})

test('rails - a bad 100,000th status refuses the report before any status is handed out', async () => {
  const refusal = await assertRefused(openStatusReport,
    { open: bigReport(100_000, '<TxInfAndSts><TxSts>ACSC</TxSts></TxInfAndSts>') },
    /OrgnlEndToEndId is missing/, /TxInfAndSts\[100000\]\/OrgnlEndToEndId$/)
  assert.equal(refusal.line, 2)
})

test('rails - a source that gives other bytes on its second reading is refused before any item from them is handed out', async () => {
  let opened = 0
  const source: MessageSource = {
    open: async function* () {
      opened += 1
      // The same length: only the digests tell the readings apart.
      yield opened === 1 ? report : report.replace('<TxSts>ACSC', '<TxSts>ACCC')
    },
  }
  await assertRefused(openStatusReport, source,
    /the message changed between its check and its reading \(block 1 of 1048576 bytes differs\)/)
  assert.equal(opened, 2)
})
