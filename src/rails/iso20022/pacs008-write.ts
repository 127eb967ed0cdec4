import type { Writable } from 'node:stream'
import { centsToIsoAmount } from './amount.ts'
import { endToEndIdOf } from './end-to-end-id.ts'
import { IsoValueError } from './iso-value-error.ts'
import { checkCents, checkCount, checkText, isoDate, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// The credit transfers the bank sends (pacs.008.001.09, FIToFICstmrCdtTrf;
// docs/operators/rails.md): an EFT clearing cycle's payments in one message (one file), an RTC
// payment in a message of its own. The payments come from an iterable (the caller's query, read as
// the message is written) and the message goes out in chunks (xml-stream.ts): a file of 100,000
// payments is never held whole. The group header comes first and holds the count and the control
// sum, so the caller gives them (it computes both from its rows in one query); the writer counts
// and sums what it writes and throws at the end when they differ, and the caller discards the file.

export const pacs008_namespace = 'urn:iso:std:iso:20022:tech:xsd:pacs.008.001.09'
/** The message's name as other messages refer to it (OrgnlMsgNmId). */
export const pacs008_message_name = 'pacs.008.001.09'

/** South Africa's clearing code: a branch code is a member id of this clearing system. */
export const za_clearing_system = 'ZANCC'

/** An account at a South African bank, as a pacs.008 names its holder and bank. */
export interface IsoParty {
  /** The holder's name (Nm, Max140Text). */
  name: string
  /** The account number (Acct/Id/Othr/Id, Max34Text). */
  account_number: string
  /**
   * The branch code: the bank's member id in ZANCC (…Agt/FinInstnId/ClrSysMmbId/MmbId,
   * Max35Text).
   */
  branch_code: string
}

/** One payment of the message: a row of the bank's payouts with its customer's account. */
export interface CreditTransferRow {
  /** The bank's tx_id (a UUID): EndToEndId and TxId, as its 32 hex digits (end-to-end-id.ts). */
  tx_id: string
  /** Integer cents (IntrBkSttlmAmt, ZAR). */
  amount: bigint
  /** The bank's customer account the payment is paid from (Dbtr, DbtrAcct, DbtrAgt). */
  debtor: IsoParty
  /** The recipient (Cdtr, CdtrAcct, CdtrAgt). */
  creditor: IsoParty
  /** The payment's reference (RmtInf/Ustrd, Max140Text); left out when empty. */
  ref: string
}

/** The group header the caller knows before the first payment is written. */
export interface Pacs008Header {
  /** The message's id (MsgId, Max35Text): also the file's name on the rail. */
  message_id: string
  /** When the message was made (CreDtTm), written in UTC: a rewrite gives the same instant. */
  created_at: Date
  /** EFT (a clearing cycle's file) or RTC (one payment): PmtTpInf/LclInstrm/Prtry of each. */
  payment_type: 'EFT' | 'RTC'
  /** How many payments the rows hold (NbOfTxs): at least one. */
  number_of_transactions: number
  /** The sum of their amounts in cents (CtrlSum). */
  control_sum: bigint
  /**
   * The interbank settlement day, `YYYY-MM-DD` in SAST (GrpHdr/IntrBkSttlmDt): the clearing
   * house settles the payments on it, and the bank's own reader requires it.
   */
  settlement_date: string
}

/** A payment's texts, checked: what the message says of it. */
interface CheckedTransfer {
  endToEndId: string
  amount: bigint
  debtor: IsoParty
  creditor: IsoParty
  ref: string
}

/**
 * The message in chunks: the group header, then each row as it comes, then the closing tags.
 * Throws IsoValueError (before the chunk that would hold it) for a value the schema cannot
 * hold, for a row beyond the header's count, and at the end when the rows' count or sum is
 * not the header's.
 */
export async function* pacs008Chunks(
  header: Pacs008Header,
  rows: AsyncIterable<CreditTransferRow> | Iterable<CreditTransferRow>,
): AsyncGenerator<string, void, undefined> {
  const expected = checkHeader(header)
  const xml = new XmlWriter(pacs008_namespace, 'FIToFICstmrCdtTrf')
  writeGroupHeader(xml, header)
  let count = 0
  let sum = 0n
  for await (const row of rows) {
    count++
    if (count > expected.count) {
      throw new IsoValueError('GrpHdr/NbOfTxs',
        `the header says ${expected.count}; the rows gave more`)
    }
    const transfer = checkRow(row)
    sum += transfer.amount
    writeTransfer(xml, transfer, header.payment_type)
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  assertTotals(expected, count, sum)
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** Writes the message into a Writable (a temporary file) and ends it; see pacs008Chunks. */
export async function writePacs008(
  sink: Writable,
  header: Pacs008Header,
  rows: AsyncIterable<CreditTransferRow> | Iterable<CreditTransferRow>,
): Promise<void> {
  await writeMessage(sink, pacs008Chunks(header, rows))
}

/** An RTC payment's message, whole (one payment: the count and sum are its own). */
export function pacs008RtcText(
  message: { message_id: string, created_at: Date, settlement_date: string },
  row: CreditTransferRow,
): Promise<string> {
  const header: Pacs008Header = { ...message, payment_type: 'RTC', number_of_transactions: 1,
    control_sum: row.amount }
  return messageText(pacs008Chunks(header, [row]))
}

function checkHeader(header: Pacs008Header): { count: number, sum: bigint } {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  isoDateTime(header.created_at, 'GrpHdr/CreDtTm')
  isoDate(header.settlement_date, 'GrpHdr/IntrBkSttlmDt')
  if (header.payment_type !== 'EFT' && header.payment_type !== 'RTC') {
    throw new IsoValueError('PmtTpInf/LclInstrm/Prtry',
      `${String(header.payment_type)} is not EFT or RTC`)
  }
  const count = checkCount(header.number_of_transactions, 'GrpHdr/NbOfTxs')
  if (header.payment_type === 'RTC' && count !== 1) {
    throw new IsoValueError('GrpHdr/NbOfTxs', `an RTC message holds one payment, not ${count}`)
  }
  return { count, sum: checkCents(header.control_sum, 'GrpHdr/CtrlSum') }
}

function writeGroupHeader(xml: XmlWriter, header: Pacs008Header): void {
  xml.open('GrpHdr')
    .text('MsgId', header.message_id)
    .text('CreDtTm', isoDateTime(header.created_at, 'GrpHdr/CreDtTm'))
    .text('NbOfTxs', String(header.number_of_transactions))
    .text('CtrlSum', centsToIsoAmount(header.control_sum, 'GrpHdr/CtrlSum'))
    .text('IntrBkSttlmDt', header.settlement_date)
    .open('SttlmInf').text('SttlmMtd', 'CLRG').close()
    .close()
}

/**
 * Checks a payment as the message would carry it; throws IsoValueError naming the field a
 * value the schema cannot hold is in. The bank checks each payout before it records it as
 * sent, so one it could never send does not stop a whole cycle's file.
 */
export function checkRow(row: CreditTransferRow): CheckedTransfer {
  const item = `payment ${String(row.tx_id)}`
  const endToEndId = endToEndIdOf(row.tx_id, `${item}: EndToEndId`)
  const amount = checkCents(row.amount, 'IntrBkSttlmAmt', item)
  if (typeof row.ref !== 'string') throw new IsoValueError('RmtInf/Ustrd', 'is not a text', item)
  return {
    endToEndId,
    amount,
    debtor: checkParty(row.debtor, 'Dbtr', item),
    creditor: checkParty(row.creditor, 'Cdtr', item),
    ref: row.ref === '' ? '' : checkText(row.ref, 'Max140Text', 'RmtInf/Ustrd', item),
  }
}

function checkParty(party: IsoParty, role: 'Dbtr' | 'Cdtr', item: string): IsoParty {
  if (typeof party !== 'object' || party === null) {
    throw new IsoValueError(role, 'is missing', item)
  }
  return {
    name: checkText(party.name, 'Max140Text', `${role}/Nm`, item),
    account_number: checkText(party.account_number, 'Max34Text', `${role}Acct/Id/Othr/Id`, item),
    branch_code: checkText(party.branch_code, 'Max35Text',
      `${role}Agt/FinInstnId/ClrSysMmbId/MmbId`, item),
  }
}

// The elements in the schema's order: PmtId, PmtTpInf, IntrBkSttlmAmt, ChrgBr, Dbtr,
// DbtrAcct, DbtrAgt, CdtrAgt, Cdtr, CdtrAcct, RmtInf.
function writeTransfer(xml: XmlWriter, transfer: CheckedTransfer, paymentType: string): void {
  xml.open('CdtTrfTxInf')
    .open('PmtId').text('EndToEndId', transfer.endToEndId).text('TxId', transfer.endToEndId)
    .close()
    .open('PmtTpInf').open('LclInstrm').text('Prtry', paymentType).close().close()
    .amount('IntrBkSttlmAmt', transfer.amount)
    // Charges as the clearing's service level says (SLEV): each bank bills its own customer.
    .text('ChrgBr', 'SLEV')
  xml.open('Dbtr').text('Nm', transfer.debtor.name).close()
  writeAccount(xml, 'DbtrAcct', transfer.debtor.account_number)
  writeAgent(xml, 'DbtrAgt', transfer.debtor.branch_code)
  writeAgent(xml, 'CdtrAgt', transfer.creditor.branch_code)
  xml.open('Cdtr').text('Nm', transfer.creditor.name).close()
  writeAccount(xml, 'CdtrAcct', transfer.creditor.account_number)
  if (transfer.ref !== '') xml.open('RmtInf').text('Ustrd', transfer.ref).close()
  xml.close()
}

function writeAccount(xml: XmlWriter, name: string, accountNumber: string): void {
  xml.open(name).open('Id').open('Othr').text('Id', accountNumber).close().close().close()
}

/** A bank by its branch code: a member of South Africa's clearing system (ZANCC). */
function writeAgent(xml: XmlWriter, name: string, branchCode: string): void {
  xml.open(name).open('FinInstnId').open('ClrSysMmbId')
    .open('ClrSysId').text('Cd', za_clearing_system).close()
    .text('MmbId', branchCode)
    .close().close().close()
}

function assertTotals(expected: { count: number, sum: bigint }, count: number, sum: bigint): void {
  if (count !== expected.count) {
    throw new IsoValueError('GrpHdr/NbOfTxs',
      `the header says ${expected.count} transactions; the rows gave ${count}`)
  }
  if (sum !== expected.sum) {
    throw new IsoValueError('GrpHdr/CtrlSum',
      `the header says ${expected.sum} cents; the rows' amounts sum to ${sum}`)
  }
}
