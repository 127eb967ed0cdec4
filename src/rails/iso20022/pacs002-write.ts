import type { Writable } from 'node:stream'
import { centsToIsoAmount } from './amount.ts'
import { IsoValueError } from './iso-value-error.ts'
import { pacs008_message_name } from './pacs008-write.ts'
import { checkCents, checkCount, checkText, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// A status report (pacs.002.001.11, FIToFIPmtStsRpt) for one original message: the clearing
// house's answer to the bank's pacs.008 (docs/operators/rails.md: accepted ACSC/ACCC →
// Successful, RJCT with a reason code → Invalid or Failed). The bank reads these
// (pacs002-read.ts); it writes them only in its clearing-house simulator, the sandbox's
// counterpart (src/rails/clearing-house/). The statuses come from an iterable, read as the
// message is written, so an EFT cycle's 100,000 answers are never held whole.

export const pacs002_namespace = 'urn:iso:std:iso:20022:tech:xsd:pacs.002.001.11'

/** The statuses of one payment this writer writes (ExternalPaymentTransactionStatus1Code). */
export const transaction_statuses = ['ACCC', 'ACSC', 'ACSP', 'ACTC', 'PDNG', 'RJCT'] as const
export type TransactionStatusCode = (typeof transaction_statuses)[number]

/** The statuses of the original message as a whole (ExternalPaymentGroupStatus1Code). */
export const group_statuses = ['ACCC', 'ACSC', 'ACSP', 'ACTC', 'PART', 'PDNG', 'RJCT'] as const
export type GroupStatusCode = (typeof group_statuses)[number]

export interface Pacs002Header {
  /** The report's id (MsgId, Max35Text). */
  message_id: string
  /** When the report was made (CreDtTm), written in UTC. */
  created_at: Date
  /** The message answered (OrgnlGrpInfAndSts/OrgnlMsgId, Max35Text). */
  original_message_id: string
  /** Its name (OrgnlMsgNmId); `pacs.008.001.09` unless given. */
  original_message_name?: string
  /** Its count and control sum, when given (OrgnlNbOfTxs, OrgnlCtrlSum): what was answered. */
  original_number_of_transactions?: number
  original_control_sum?: bigint
  /**
   * The status of the whole message (GrpSts), when the caller knows it before the first
   * payment's status (the element comes first); a report with no payment statuses needs one.
   */
  group_status?: GroupStatusCode
  /** The group status's reason (StsRsnInf/Rsn/Cd), e.g. FF01 for a file refused whole. */
  group_reason_code?: string
  group_additional_information?: string
}

/** One payment's status (TxInfAndSts). */
export interface TransactionStatusRow {
  /** The payment's EndToEndId, as the original message wrote it (Max35Text). */
  original_end_to_end_id: string
  /** Its TxId, when it had one (Max35Text). */
  original_tx_id?: string
  status: TransactionStatusCode
  /** The reason (StsRsnInf/Rsn/Cd): four capitals or digits (AC01, …); required for RJCT. */
  reason_code?: string
  /** Words for the bank's operators (StsRsnInf/AddtlInf, Max105Text). */
  additional_information?: string
}

/** An external code list's code: four capital letters and digits (AC01, AM05, MS03, …). */
const reason_code_pattern = /^[A-Z0-9]{4}$/

/**
 * The report in chunks: the group header and the original group, then each status as it
 * comes. Throws IsoValueError (before the chunk that would hold it) for a value the schema
 * cannot hold, a rejection without a reason, and a report with neither a group status nor a
 * payment's status.
 */
export async function* pacs002Chunks(
  header: Pacs002Header,
  rows: AsyncIterable<TransactionStatusRow> | Iterable<TransactionStatusRow>,
): AsyncGenerator<string, void, undefined> {
  checkHeader(header)
  const xml = new XmlWriter(pacs002_namespace, 'FIToFIPmtStsRpt')
  xml.open('GrpHdr')
    .text('MsgId', header.message_id)
    .text('CreDtTm', isoDateTime(header.created_at, 'GrpHdr/CreDtTm'))
    .close()
  writeOriginalGroup(xml, header)
  let count = 0
  for await (const row of rows) {
    count++
    writeStatus(xml, checkRow(row))
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  if (count === 0 && header.group_status === undefined) {
    throw new IsoValueError('OrgnlGrpInfAndSts/GrpSts',
      'a report without payment statuses needs a group status')
  }
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** The report, whole (an RTC's answer, a small file). */
export function pacs002Text(
  header: Pacs002Header,
  rows: AsyncIterable<TransactionStatusRow> | Iterable<TransactionStatusRow>,
): Promise<string> {
  return messageText(pacs002Chunks(header, rows))
}

/** Writes the report into a Writable and ends it; see pacs002Chunks. */
export async function writePacs002(
  sink: Writable,
  header: Pacs002Header,
  rows: AsyncIterable<TransactionStatusRow> | Iterable<TransactionStatusRow>,
): Promise<void> {
  await writeMessage(sink, pacs002Chunks(header, rows))
}

function checkHeader(header: Pacs002Header): void {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  isoDateTime(header.created_at, 'GrpHdr/CreDtTm')
  checkText(header.original_message_id, 'Max35Text', 'OrgnlGrpInfAndSts/OrgnlMsgId')
  if (header.original_message_name !== undefined) {
    checkText(header.original_message_name, 'Max35Text', 'OrgnlGrpInfAndSts/OrgnlMsgNmId')
  }
  if (header.original_number_of_transactions !== undefined) {
    checkCount(header.original_number_of_transactions, 'OrgnlGrpInfAndSts/OrgnlNbOfTxs')
  }
  if (header.original_control_sum !== undefined) {
    checkCents(header.original_control_sum, 'OrgnlGrpInfAndSts/OrgnlCtrlSum')
  }
  if (header.group_status !== undefined && !group_statuses.includes(header.group_status)) {
    throw new IsoValueError('OrgnlGrpInfAndSts/GrpSts',
      `${String(header.group_status)} is not one of ${group_statuses.join(', ')}`)
  }
  // A group rejected has its reason in each payment's status, or in its own when the whole
  // message was refused (FF01): the group's reason is not required.
  checkReason(header.group_reason_code, undefined, 'OrgnlGrpInfAndSts/StsRsnInf')
  if (header.group_additional_information !== undefined) {
    checkText(header.group_additional_information, 'Max105Text',
      'OrgnlGrpInfAndSts/StsRsnInf/AddtlInf')
  }
}

function checkRow(row: TransactionStatusRow): TransactionStatusRow {
  const item = `status of ${String(row.original_end_to_end_id)}`
  checkText(row.original_end_to_end_id, 'Max35Text', 'OrgnlEndToEndId', item)
  if (row.original_tx_id !== undefined) {
    checkText(row.original_tx_id, 'Max35Text', 'OrgnlTxId', item)
  }
  if (!transaction_statuses.includes(row.status)) {
    throw new IsoValueError('TxSts',
      `${String(row.status)} is not one of ${transaction_statuses.join(', ')}`, item)
  }
  checkReason(row.reason_code, row.status, 'StsRsnInf', item)
  if (row.additional_information !== undefined) {
    checkText(row.additional_information, 'Max105Text', 'StsRsnInf/AddtlInf', item)
  }
  return row
}

/** A reason code of four capitals or digits; required for a rejection (the reader's rule). */
function checkReason(code: string | undefined, status: string | undefined, field: string,
  item?: string): void {
  if (code === undefined) {
    if (status === 'RJCT') {
      throw new IsoValueError(`${field}/Rsn/Cd`, 'a rejection (RJCT) needs a reason code', item)
    }
    return
  }
  if (typeof code !== 'string' || !reason_code_pattern.test(code)) {
    throw new IsoValueError(`${field}/Rsn/Cd`,
      `${String(code)} is not a status reason code (4 capitals or digits, e.g. AC01)`, item)
  }
}

// The elements in the schema's order: OrgnlMsgId, OrgnlMsgNmId, OrgnlNbOfTxs, OrgnlCtrlSum,
// GrpSts, StsRsnInf.
function writeOriginalGroup(xml: XmlWriter, header: Pacs002Header): void {
  xml.open('OrgnlGrpInfAndSts')
    .text('OrgnlMsgId', header.original_message_id)
    .text('OrgnlMsgNmId', header.original_message_name ?? pacs008_message_name)
  if (header.original_number_of_transactions !== undefined) {
    xml.text('OrgnlNbOfTxs', String(header.original_number_of_transactions))
  }
  if (header.original_control_sum !== undefined) {
    xml.text('OrgnlCtrlSum',
      centsToIsoAmount(header.original_control_sum, 'OrgnlGrpInfAndSts/OrgnlCtrlSum'))
  }
  if (header.group_status !== undefined) xml.text('GrpSts', header.group_status)
  writeReason(xml, header.group_reason_code, header.group_additional_information)
  xml.close()
}

// The elements in the schema's order: OrgnlEndToEndId, OrgnlTxId, TxSts, StsRsnInf.
function writeStatus(xml: XmlWriter, row: TransactionStatusRow): void {
  xml.open('TxInfAndSts').text('OrgnlEndToEndId', row.original_end_to_end_id)
  if (row.original_tx_id !== undefined) xml.text('OrgnlTxId', row.original_tx_id)
  xml.text('TxSts', row.status)
  writeReason(xml, row.reason_code, row.additional_information)
  xml.close()
}

function writeReason(xml: XmlWriter, code: string | undefined, text: string | undefined): void {
  if (code === undefined && text === undefined) return
  xml.open('StsRsnInf')
  if (code !== undefined) xml.open('Rsn').text('Cd', code).close()
  if (text !== undefined) xml.text('AddtlInf', text)
  xml.close()
}
