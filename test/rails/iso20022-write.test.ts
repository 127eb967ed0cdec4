import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import { SaxesParser } from 'saxes'
import { centsToIsoAmount, iso_amount_cents_max, isoAmountToCents } from '../../src/rails/iso20022/amount.ts'
import { endToEndIdOf, txIdOfEndToEndId } from '../../src/rails/iso20022/end-to-end-id.ts'
import { IsoValueError } from '../../src/rails/iso20022/iso-value-error.ts'
import { pacs004Text, type PaymentReturnRow } from '../../src/rails/iso20022/pacs004-write.ts'
import { pacs008Chunks, pacs008RtcText, writePacs008, type CreditTransferRow, type Pacs008Header } from '../../src/rails/iso20022/pacs008-write.ts'
import { pacs028Text } from '../../src/rails/iso20022/pacs028-write.ts'
import { readCreditTransfers } from '../../src/rails/iso20022/pacs008-read.ts'
import { chunk_chars_max, messageText } from '../../src/rails/iso20022/xml-write.ts'
import { validateAgainstXsd } from '../support/xsd.ts'

// The writers of the ISO 20022 messages the bank sends (src/rails/iso20022/*-write.ts): each
// message valid against the official XSD (test/fixtures/iso20022/xsd/), its texts read back
// exactly as given (parsed again with saxes), the same inputs giving the same bytes, every
// value a schema cannot hold refused by name, and a 100,000-payment file written while the
// writer holds about one chunk. No database: the writers write bytes only.

let dir: string

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'iso20022-write-'))
})

after(async () => {
  await rm(dir, { recursive: true, force: true })
})

const created_at = new Date('2026-11-23T08:00:00Z')

function row(overrides: Partial<CreditTransferRow> = {}): CreditTransferRow {
  return {
    tx_id: randomUUID(),
    amount: 150_000n,
    debtor: { name: 'Acme Holdings (Pty) Ltd', account_number: '100000017', branch_code: '250655' },
    creditor: { name: 'Supplier CC', account_number: '62000000017', branch_code: '632005' },
    ref: 'INV-2026-001',
    ...overrides,
  }
}

function eftHeader(rows: readonly CreditTransferRow[], overrides: Partial<Pacs008Header> = {}):
  Pacs008Header {
  return {
    message_id: 'EFT-20261123-0700',
    created_at,
    payment_type: 'EFT',
    number_of_transactions: rows.length,
    settlement_date: '2026-11-23',
    ...overrides,
    control_sum: overrides.control_sum ?? rows.reduce((sum, r) => sum + r.amount, 0n),
  }
}

const eftText = (rows: readonly CreditTransferRow[], overrides: Partial<Pacs008Header> = {}) =>
  messageText(pacs008Chunks(eftHeader(rows, overrides), rows))

/** Every element's text, by its path under Document (`FIToFICstmrCdtTrf/GrpHdr/MsgId`). */
function leafTexts(xml: string): Array<[string, string]> {
  const parser = new SaxesParser()
  const open: string[] = []
  const leaves: Array<[string, string]> = []
  let text = ''
  parser.on('opentag', (tag) => {
    open.push(tag.name)
    text = ''
  })
  parser.on('text', (t) => {
    text += t
  })
  parser.on('closetag', () => {
    if (text.trim() !== '') leaves.push([open.slice(1).join('/'), text])
    open.pop()
    text = ''
  })
  parser.write(xml).close()
  return leaves
}

const textsAt = (xml: string, suffix: string) =>
  leafTexts(xml).filter(([p]) => p.endsWith(suffix)).map(([, t]) => t)

async function assertValid(xml: string, xsd: string): Promise<void> {
  assert.deepEqual(await validateAgainstXsd(xml, xsd), [], `${xsd}:\n${xml.slice(0, 2000)}`)
}

/** Runs `write` and asserts it throws IsoValueError about `field` matching `rule`. */
async function assertRefused(write: () => Promise<unknown>, field: RegExp, rule: RegExp) {
  await assert.rejects(write, (error: unknown) => {
    assert.ok(error instanceof IsoValueError, `an IsoValueError, not ${String(error)}`)
    assert.match(error.field, field)
    assert.match(error.rule, rule)
    return true
  })
}

test('iso20022 write - cents become ISO decimals with two places and come back exactly', () => {
  assert.equal(centsToIsoAmount(12345n), '123.45')
  assert.equal(centsToIsoAmount(0n), '0.00')
  assert.equal(centsToIsoAmount(5n), '0.05')
  assert.equal(centsToIsoAmount(100n), '1.00')
  assert.equal(centsToIsoAmount(7), '0.07')
  assert.equal(centsToIsoAmount(iso_amount_cents_max), '9999999999999999.99')
  const samples = [0n, 1n, 9n, 10n, 99n, 100n, 101n, 12345n, 2n ** 53n + 1n, iso_amount_cents_max]
  for (const cents of samples) assert.equal(isoAmountToCents(centsToIsoAmount(cents)), cents)
  assert.equal(isoAmountToCents('123.4'), 12340n)
  assert.equal(isoAmountToCents('7'), 700n)
  assert.equal(isoAmountToCents('.5'), 50n)
  assert.equal(isoAmountToCents('+0012.50000'), 1250n)
  assert.equal(isoAmountToCents(' \n\t1.50\r\n'), 150n)
  assert.equal(isoAmountToCents('9999999999999999.99'), iso_amount_cents_max)
  // Beyond a double's exact integers: parsed digit by digit, not through a number.
  assert.equal(isoAmountToCents('90071992547409.93'), 9007199254740993n)
})

test('iso20022 write - amounts a message cannot carry are refused, never rounded', () => {
  const refusedCents = [-1n, iso_amount_cents_max + 1n, 12.5, Number.MAX_SAFE_INTEGER + 1, NaN]
  for (const cents of refusedCents) {
    assert.throws(() => centsToIsoAmount(cents), IsoValueError, String(cents))
  }
  assert.throws(() => centsToIsoAmount('1' as unknown as bigint), IsoValueError)
  const refusedTexts = ['-1.00', '-0', '1.005', '1.001', '1e5', '0x10', '', ' ', '.', '1.2.3',
    '1,00', '１', '10000000000000000', '1.000001', 'NaN', 'Infinity']
  for (const text of refusedTexts) {
    assert.throws(() => isoAmountToCents(text), IsoValueError, JSON.stringify(text))
  }
  assert.throws(() => isoAmountToCents('-5', 'Amt'), /Amt: negative amount/)
})

test('iso20022 write - a tx_id is the EndToEndId as its 32 hex digits, and back', () => {
  const txId = '0190a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b'
  assert.equal(endToEndIdOf(txId), '0190a2b3c4d57e6f8a9b0c1d2e3f4a5b')
  assert.equal(endToEndIdOf(txId.toUpperCase()), '0190a2b3c4d57e6f8a9b0c1d2e3f4a5b')
  assert.equal(txIdOfEndToEndId(endToEndIdOf(txId)), txId)
  assert.equal(txIdOfEndToEndId('OTHER-BANK-E2E-1'), undefined)
  assert.equal(txIdOfEndToEndId('0190A2B3C4D57E6F8A9B0C1D2E3F4A5B'), undefined)
  assert.throws(() => endToEndIdOf('not-a-uuid'), IsoValueError)
})

test('iso20022 write - an EFT file of several payments is valid pacs.008 with its count, sum and fields', async () => {
  const rows = [
    row({ amount: 150_000n }),
    row({ amount: 1n, ref: '' }),
    row({ amount: 99_999n, creditor: { name: 'Thandi Nkosi', account_number: '1234567890',
      branch_code: '051001' } }),
  ]
  const xml = await eftText(rows)
  await assertValid(xml, 'pacs.008.001.09.xsd')
  const header = Object.fromEntries(leafTexts(xml).filter(([p]) => p.includes('/GrpHdr/')))
  assert.deepEqual(header, {
    'FIToFICstmrCdtTrf/GrpHdr/MsgId': 'EFT-20261123-0700',
    'FIToFICstmrCdtTrf/GrpHdr/CreDtTm': '2026-11-23T08:00:00.000Z',
    'FIToFICstmrCdtTrf/GrpHdr/NbOfTxs': '3',
    'FIToFICstmrCdtTrf/GrpHdr/CtrlSum': '2500.00',
    'FIToFICstmrCdtTrf/GrpHdr/IntrBkSttlmDt': '2026-11-23',
    'FIToFICstmrCdtTrf/GrpHdr/SttlmInf/SttlmMtd': 'CLRG',
  })
  // The bank's own defensive reader (pacs008-read.ts) reads what it writes.
  const read = await readCreditTransfers({ content: xml })
  assert.deepEqual(read.items.map((i) => [i.amount, i.settlement_date, i.payment_type]),
    rows.map((r) => [r.amount, '2026-11-23', 'EFT']))
  const amounts = textsAt(xml, 'CdtTrfTxInf/IntrBkSttlmAmt')
  assert.deepEqual(amounts, ['1500.00', '0.01', '999.99'])
  assert.equal(amounts.reduce((sum, a) => sum + isoAmountToCents(a), 0n), 250_000n)
  assert.match(xml, /<IntrBkSttlmAmt Ccy="ZAR">1500\.00<\/IntrBkSttlmAmt>/)
  const ids = textsAt(xml, 'PmtId/EndToEndId')
  assert.deepEqual(ids.map(txIdOfEndToEndId), rows.map((r) => r.tx_id))
  assert.deepEqual(textsAt(xml, 'PmtId/TxId'), ids)
  assert.deepEqual(textsAt(xml, 'LclInstrm/Prtry'), ['EFT', 'EFT', 'EFT'])
  assert.deepEqual(textsAt(xml, 'Dbtr/Nm'), rows.map((r) => r.debtor.name))
  assert.deepEqual(textsAt(xml, 'DbtrAcct/Id/Othr/Id'), rows.map((r) => r.debtor.account_number))
  assert.deepEqual(textsAt(xml, 'DbtrAgt/FinInstnId/ClrSysMmbId/MmbId'),
    rows.map((r) => r.debtor.branch_code))
  assert.deepEqual(textsAt(xml, 'Cdtr/Nm'), rows.map((r) => r.creditor.name))
  assert.deepEqual(textsAt(xml, 'CdtrAcct/Id/Othr/Id'),
    rows.map((r) => r.creditor.account_number))
  assert.deepEqual(textsAt(xml, 'CdtrAgt/FinInstnId/ClrSysMmbId/MmbId'),
    rows.map((r) => r.creditor.branch_code))
  assert.deepEqual(textsAt(xml, 'ClrSysMmbId/ClrSysId/Cd'), Array(6).fill('ZANCC'))
  // An empty reference leaves RmtInf out (Ustrd needs at least one character).
  assert.deepEqual(textsAt(xml, 'RmtInf/Ustrd'), ['INV-2026-001', 'INV-2026-001'])
  assert.deepEqual(textsAt(xml, 'CdtTrfTxInf/ChrgBr'), ['SLEV', 'SLEV', 'SLEV'])
})

test('iso20022 write - an RTC payment is a pacs.008 of its own', async () => {
  const payment = row({ amount: 2_500n })
  const xml = await pacs008RtcText({ message_id: 'RTC-0001', created_at,
    settlement_date: '2026-11-23' }, payment)
  await assertValid(xml, 'pacs.008.001.09.xsd')
  assert.deepEqual(textsAt(xml, 'GrpHdr/NbOfTxs'), ['1'])
  assert.deepEqual(textsAt(xml, 'GrpHdr/CtrlSum'), ['25.00'])
  assert.deepEqual(textsAt(xml, 'LclInstrm/Prtry'), ['RTC'])
  assert.deepEqual(textsAt(xml, 'PmtId/EndToEndId'), [endToEndIdOf(payment.tx_id)])
  const two = [row(), row()]
  await assertRefused(() => eftText(two, { payment_type: 'RTC' }), /NbOfTxs/, /one payment/)
})

test('iso20022 write - names with markup characters and any script are written exactly and valid', async () => {
  const hostile = [
    `Smith & Sons <Pty> Ltd "Quotes" 'Apostrophes'`,
    'A &amp; B &lt;not an entity&gt; &#x41; ]]> end',
    'Zoë Müller-Ñúñez · 中文名 · Ελένη · עברית · 😀🏦',
    'Tab\tand line\nfeed',
  ]
  const rows = hostile.map((name, i) => row({ ref: `${name} ${i}`.slice(0, 140),
    creditor: { name, account_number: `6200000001${i}`, branch_code: '632005' } }))
  // 140 characters of the schema's count (code points): 280 UTF-16 code units of emoji.
  const longest = '🏦'.repeat(140)
  rows.push(row({ debtor: { name: longest, account_number: '100000017', branch_code: '250655' },
    ref: 'x'.repeat(140) }))
  const xml = await eftText(rows)
  await assertValid(xml, 'pacs.008.001.09.xsd')
  assert.deepEqual(textsAt(xml, 'Cdtr/Nm'), [...hostile, 'Supplier CC'])
  assert.deepEqual(textsAt(xml, 'Dbtr/Nm').at(-1), longest)
  assert.deepEqual(textsAt(xml, 'RmtInf/Ustrd'), rows.map((r) => r.ref))
  assert.ok(xml.includes('A &amp;amp; B &amp;lt;not an entity&amp;gt; &amp;#x41; ]]&gt; end'))
})

test('iso20022 write - the largest amounts are written whole and valid', async () => {
  const largest = [row({ amount: iso_amount_cents_max })]
  const xml = await eftText(largest)
  await assertValid(xml, 'pacs.008.001.09.xsd')
  assert.deepEqual(textsAt(xml, 'IntrBkSttlmAmt'), ['9999999999999999.99'])
  assert.deepEqual(textsAt(xml, 'GrpHdr/CtrlSum'), ['9999999999999999.99'])
  const smallest = [row({ amount: 0n }), row({ amount: 1n })]
  await assertValid(await eftText(smallest), 'pacs.008.001.09.xsd')
  // Two amounts each carried alone whose sum no CtrlSum can carry.
  const over = [row({ amount: iso_amount_cents_max }), row({ amount: 1n })]
  const header = eftHeader(over, { control_sum: iso_amount_cents_max + 1n })
  await assertRefused(() => messageText(pacs008Chunks(header, over)), /CtrlSum/, /largest/)
})

test('iso20022 write - the same inputs give the same bytes, from a list or an async stream', async () => {
  const rows = Array.from({ length: 50 }, (_, i) => row({ amount: BigInt(i * 1_001),
    creditor: { name: `Recipient ${i} & Co`, account_number: `62${i}`, branch_code: '632005' } }))
  const first = path.join(dir, 'first.xml')
  const second = path.join(dir, 'second.xml')
  await writePacs008(createWriteStream(first), eftHeader(rows), rows)
  async function* slowly() {
    for (const r of rows) {
      await Promise.resolve()
      yield { ...r, debtor: { ...r.debtor }, creditor: { ...r.creditor } }
    }
  }
  await writePacs008(createWriteStream(second), eftHeader(rows), slowly())
  const [a, b] = await Promise.all([readFile(first), readFile(second)])
  assert.ok(a.equals(b), 'byte-identical rewrite')
  assert.ok(a.subarray(0, 39).equals(Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n')))
  assert.equal(a.at(-1), 0x0a)
  await assertValid(a.toString('utf8'), 'pacs.008.001.09.xsd')
})

test('iso20022 write - a value a schema cannot hold is refused by name, nothing truncated', async () => {
  const creditor = (name: string) =>
    ({ name, account_number: '62000000017', branch_code: '632005' })
  // The header's sum is given apart: a bad amount must be refused by the row's check.
  const refuse = (r: CreditTransferRow, field: RegExp, rule: RegExp) =>
    assertRefused(() => eftText([r], { control_sum: 0n }), field, rule)
  await refuse(row({ amount: -1n }), /IntrBkSttlmAmt/, /negative/)
  await refuse(row({ amount: 100 as unknown as bigint }), /IntrBkSttlmAmt/, /not a bigint/)
  await refuse(row({ creditor: creditor('x'.repeat(141)) }), /^Cdtr\/Nm$/,
    /141 characters, longer than Max140Text \(140\)/)
  await refuse(row({ creditor: creditor('🏦'.repeat(141)) }), /Cdtr\/Nm/, /Max140Text/)
  await refuse(row({ creditor: creditor('') }), /Cdtr\/Nm/, /empty/)
  await refuse(row({ ref: 'r'.repeat(141) }), /RmtInf\/Ustrd/, /Max140Text/)
  const debtor = { name: 'A', account_number: '1'.repeat(35), branch_code: '250655' }
  await refuse(row({ debtor }), /DbtrAcct\/Id\/Othr\/Id/, /Max34Text \(34\)/)
  await refuse(row({ creditor: { name: 'A', account_number: '1', branch_code: '6'.repeat(36) } }),
    /CdtrAgt\/FinInstnId\/ClrSysMmbId\/MmbId/, /Max35Text/)
  await refuse(row({ tx_id: 'not-a-uuid' }), /EndToEndId/, /not a UUID/)
  for (const [character, why] of [['\u0001', /U\+0001 .*XML 1\.0 cannot hold/],
    ['\u0000', /U\+0000/], ['\uFFFE', /U\+FFFE/], ['\uD800', /U\+D800/],
    ['\r', /U\+000D .*carriage return/]] as const) {
    await refuse(row({ creditor: creditor(`Bad${character}Name`) }), /Cdtr\/Nm/, why)
  }
  const header = (overrides: Partial<Pacs008Header>) => eftText([row()], overrides)
  await assertRefused(() => header({ message_id: 'M'.repeat(36) }), /MsgId/, /Max35Text/)
  await assertRefused(() => header({ created_at: new Date('nonsense') }), /CreDtTm/, /valid/)
  await assertRefused(() => header({ payment_type: 'ACH' as 'EFT' }), /Prtry/, /EFT or RTC/)
  await assertRefused(() => header({ settlement_date: '2026-02-30' }), /IntrBkSttlmDt/, /not a day/)
  const error = await eftText([row({ tx_id: '0190a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b',
    creditor: creditor('x'.repeat(141)) })]).catch((e: unknown) => e)
  assert.match(String(error), /payment 0190a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b: Cdtr\/Nm: is 141/)
})

test('iso20022 write - the names at their limits are accepted', async () => {
  const rows = [row({
    debtor: { name: 'd'.repeat(140), account_number: '1'.repeat(34), branch_code: '2'.repeat(35) },
    creditor: { name: 'c'.repeat(139), account_number: '3'.repeat(33), branch_code: '6' },
    ref: 'r'.repeat(140),
  })]
  await assertValid(await eftText(rows, { message_id: 'M'.repeat(35) }), 'pacs.008.001.09.xsd')
})

test('iso20022 write - a count or sum that does not match what the rows gave is thrown', async () => {
  const rows = [row(), row(), row()]
  await assertRefused(() => eftText(rows.slice(0, 2), { number_of_transactions: 3 }),
    /GrpHdr\/NbOfTxs/, /says 3 transactions; the rows gave 2/)
  await assertRefused(() => eftText(rows, { number_of_transactions: 2 }), /NbOfTxs/, /gave more/)
  await assertRefused(() => eftText(rows, { control_sum: 1n }), /GrpHdr\/CtrlSum/,
    /says 1 cents; the rows' amounts sum to 450000/)
  await assertRefused(() => eftText([], { number_of_transactions: 0 }), /NbOfTxs/, />= 1/)
  await assertRefused(() => eftText(rows, { number_of_transactions: 1e15 }), /NbOfTxs/, /whole/)
  // A file being written is destroyed with the error: the caller discards it.
  const file = path.join(dir, 'short.xml')
  const sink = createWriteStream(file)
  await assertRefused(() => writePacs008(sink, eftHeader(rows), rows.slice(0, 2)), /NbOfTxs/,
    /the rows gave 2/)
  assert.ok(sink.destroyed)
  assert.doesNotMatch(await readFile(file, 'utf8'), /<\/Document>/)
})

test('iso20022 write - a pacs.004 returns incoming payments with their reasons', async () => {
  const returns: PaymentReturnRow[] = [
    { original_message_id: 'OTHERBANK-20261123-01', original_end_to_end_id: 'E2E-1',
      returned_amount: 10_000n, reason_code: 'AC01' },
    { return_id: 'RTR-0002', original_message_id: 'OTHERBANK-20261123-01',
      original_end_to_end_id: 'E2E & <2>', original_tx_id: 'TX-2', returned_amount: 1n,
      reason_code: 'AC04', additional_information: 'Account closed' },
    { original_message_id: 'OTHERBANK-20261123-02', original_end_to_end_id: 'E2E-3',
      returned_amount: iso_amount_cents_max - 10_001n, reason_code: 'AC06' },
  ]
  const xml = await pacs004Text({ message_id: 'RTN-20261123-1', created_at }, returns)
  await assertValid(xml, 'pacs.004.001.10.xsd')
  assert.deepEqual(textsAt(xml, 'GrpHdr/NbOfTxs'), ['3'])
  assert.deepEqual(textsAt(xml, 'GrpHdr/CtrlSum'), ['9999999999999999.99'])
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlEndToEndId'), ['E2E-1', 'E2E & <2>', 'E2E-3'])
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlGrpInf/OrgnlMsgNmId'), Array(3).fill('pacs.008.001.09'))
  assert.deepEqual(textsAt(xml, 'RtrdIntrBkSttlmAmt'), ['100.00', '0.01', '9999999999999899.98'])
  assert.deepEqual(textsAt(xml, 'RtrRsnInf/Rsn/Cd'), ['AC01', 'AC04', 'AC06'])
  assert.deepEqual(textsAt(xml, 'TxInf/RtrId'), ['RTR-0002'])
  assert.deepEqual(textsAt(xml, 'RtrRsnInf/AddtlInf'), ['Account closed'])
  const refuse = (r: Partial<PaymentReturnRow>, field: RegExp, rule: RegExp) => assertRefused(
    () => pacs004Text({ message_id: 'RTN-2', created_at }, [{ ...returns[0]!, ...r }]), field, rule)
  await refuse({ reason_code: 'ac01' }, /Rsn\/Cd/, /return reason code/)
  await refuse({ reason_code: 'AC001' }, /Rsn\/Cd/, /return reason code/)
  await refuse({ returned_amount: -5n }, /RtrdIntrBkSttlmAmt/, /negative/)
  await refuse({ original_end_to_end_id: 'E'.repeat(36) }, /OrgnlEndToEndId/, /Max35Text/)
  await refuse({ additional_information: 'i'.repeat(106) }, /AddtlInf/, /Max105Text/)
  await assertRefused(() => pacs004Text({ message_id: 'RTN-3', created_at }, []), /NbOfTxs/, /1/)
})

test('iso20022 write - a pacs.028 asks for the status of payments with no answer', async () => {
  const asked = [
    { original_message_id: 'RTC-0001', tx_id: randomUUID() },
    { original_message_id: 'RTC-0002', tx_id: randomUUID(), status_request_id: 'STS-2' },
  ]
  const xml = await pacs028Text({ message_id: 'STS-20261123-1', created_at }, asked)
  await assertValid(xml, 'pacs.028.001.04.xsd')
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlGrpInf/OrgnlMsgId'), ['RTC-0001', 'RTC-0002'])
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlGrpInf/OrgnlMsgNmId'), Array(2).fill('pacs.008.001.09'))
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlEndToEndId').map(txIdOfEndToEndId),
    asked.map((a) => a.tx_id))
  assert.deepEqual(textsAt(xml, 'TxInf/OrgnlTxId'), textsAt(xml, 'TxInf/OrgnlEndToEndId'))
  assert.deepEqual(textsAt(xml, 'TxInf/StsReqId'), ['STS-2'])
  await assertRefused(() => pacs028Text({ message_id: 'STS-2', created_at }, []), /TxInf/, /1/)
  await assertRefused(() => pacs028Text({ message_id: 'STS-3', created_at },
    [{ original_message_id: 'R'.repeat(36), tx_id: randomUUID() }]), /OrgnlMsgId/, /Max35Text/)
})

const stream_payments = 100_000
/**
 * The most payments pulled from the rows and not yet in what the sink has taken: about four
 * chunks' worth (the writer's buffer, the stream's one chunk, the sink's buffer, the one being
 * written), at about 1.3 kB a payment. A writer that held the file would exceed it at once.
 */
const rows_in_flight_max = 100

test('iso20022 write - a 100,000-payment file is written in bounded chunks as its rows are read', async (t) => {
  const amountOf = (i: number) => BigInt((i % 1_000) * 100 + 1)
  let controlSum = 0n
  for (let i = 0; i < stream_payments; i++) controlSum += amountOf(i)
  let pulled = 0
  async function* rows(): AsyncGenerator<CreditTransferRow> {
    for (let i = 0; i < stream_payments; i++) {
      pulled++
      yield row({ amount: amountOf(i), ref: `salary ${i}` })
    }
  }
  const file = path.join(dir, 'pacs.008.BIG.xml')
  const sink = new BoundedSink(file)
  const header = eftHeader([], { message_id: 'BIG', number_of_transactions: stream_payments,
    control_sum: controlSum })
  const heapBefore = process.memoryUsage().heapUsed
  await writePacs008(sink.checking((chunk) => {
    assert.ok(chunk.length <= chunk_chars_max, `a chunk of ${chunk.length} characters`)
    sink.payments += chunk.split('<CdtTrfTxInf>').length - 1
    const inFlight = pulled - sink.payments
    sink.mostInFlight = Math.max(sink.mostInFlight, inFlight)
    assert.ok(inFlight <= rows_in_flight_max, `${inFlight} payments read and not yet written`)
  }), header, rows())
  assert.equal(sink.payments, stream_payments)
  assert.equal((await stat(file)).size, sink.bytes)
  const read = await readBack(file)
  assert.deepEqual(read, { NbOfTxs: String(stream_payments), CtrlSum: centsToIsoAmount(controlSum),
    transactions: stream_payments, sum: controlSum })
  t.diagnostic(`${sink.chunks} chunks, ${sink.bytes} bytes, largest ${sink.largest} characters, ` +
    `at most ${sink.mostInFlight} payments in flight, heap +${mb(sink.heapMost - heapBefore)} MB`)
})

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

/** A file sink that sees each chunk before it is written, as a string. */
class BoundedSink {
  payments = 0
  chunks = 0
  bytes = 0
  largest = 0
  mostInFlight = 0
  heapMost = 0
  constructor(private readonly file: string) {}

  checking(check: (chunk: string) => void): Writable {
    const out = createWriteStream(this.file)
    return new Writable({
      decodeStrings: false,
      write: (chunk: string, _encoding, done) => {
        check(chunk)
        this.chunks++
        this.bytes += Buffer.byteLength(chunk)
        this.largest = Math.max(this.largest, chunk.length)
        if (this.chunks % 64 === 0) {
          this.heapMost = Math.max(this.heapMost, process.memoryUsage().heapUsed)
        }
        out.write(chunk, done)
      },
      final: (done) => out.end(done),
      destroy: (error, done) => {
        out.destroy()
        done(error)
      },
    })
  }
}

/** The file read back in pieces: the header's count and sum, and those of its transactions. */
async function readBack(file: string) {
  const parser = new SaxesParser()
  const found = { NbOfTxs: '', CtrlSum: '', transactions: 0, sum: 0n }
  let text = ''
  parser.on('opentag', (tag) => {
    text = ''
    if (tag.name === 'CdtTrfTxInf') found.transactions++
  })
  parser.on('text', (piece) => {
    text += piece
  })
  parser.on('closetag', (tag) => {
    if (tag.name === 'NbOfTxs' || tag.name === 'CtrlSum') found[tag.name] = text
    if (tag.name === 'IntrBkSttlmAmt') found.sum += isoAmountToCents(text)
    text = ''
  })
  for await (const piece of createReadStream(file, { encoding: 'utf8' })) parser.write(piece)
  parser.close()
  return found
}
