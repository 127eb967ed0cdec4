import type { Writable } from 'node:stream'
import { centsToIsoAmount } from './amount.ts'
import { IsoValueError } from './iso-value-error.ts'
import { pacs008_message_name } from './pacs008-write.ts'
import { checkCents, checkCount, checkText, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// The bank returning incoming payments it cannot credit (pacs.004.001.10, PmtRtr;
// docs/operators/rails.md: an unknown account is returned with AC01, a closed one with AC04, a
// blocked one with AC06). Each return names the payment it sends back by the message it came in
// (OrgnlMsgId) and the id its sender gave it (OrgnlEndToEndId, as received), the amount returned
// and the reason. A message holds the returns of one decision (usually those of one incoming
// message); they are given as a list, and the header's count and control sum are made from it.

export const pacs004_namespace = 'urn:iso:std:iso:20022:tech:xsd:pacs.004.001.10'

/** One incoming payment sent back. */
export interface PaymentReturnRow {
  /** The bank's id of this return (RtrId, Max35Text), when it gives one. */
  return_id?: string
  /** The incoming message's MsgId (TxInf/OrgnlGrpInf/OrgnlMsgId, Max35Text). */
  original_message_id: string
  /** The incoming payment's EndToEndId, as its sender wrote it (OrgnlEndToEndId, Max35Text). */
  original_end_to_end_id: string
  /** The incoming payment's TxId, when it had one (OrgnlTxId, Max35Text). */
  original_tx_id?: string
  /** The amount sent back in cents (RtrdIntrBkSttlmAmt, ZAR): the payment's whole amount. */
  returned_amount: bigint
  /** Why (RtrRsnInf/Rsn/Cd, ExternalReturnReason1Code): AC01, AC04, AC06, … */
  reason_code: string
  /** Words for the sender's operators, when there are any (RtrRsnInf/AddtlInf, Max105Text). */
  additional_information?: string
}

export interface Pacs004Header {
  /** The message's id (MsgId, Max35Text). */
  message_id: string
  /** When the message was made (CreDtTm), written in UTC. */
  created_at: Date
}

/** An external code list's code: four capital letters and digits (AC01, AM05, MS03, …). */
const reason_code_pattern = /^[A-Z0-9]{4}$/

/**
 * The message in chunks: the group header (NbOfTxs and CtrlSum of the list), then each
 * return. Throws IsoValueError, before anything is handed out, for a value the schema cannot
 * hold and for an empty list.
 */
export async function* pacs004Chunks(
  header: Pacs004Header,
  returns: readonly PaymentReturnRow[],
): AsyncGenerator<string, void, undefined> {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  const count = checkCount(returns.length, 'GrpHdr/NbOfTxs')
  const checked = returns.map(checkReturn)
  const sum = checked.reduce((total, row) => total + row.returned_amount, 0n)
  const xml = new XmlWriter(pacs004_namespace, 'PmtRtr')
  xml.open('GrpHdr')
    .text('MsgId', header.message_id)
    .text('CreDtTm', isoDateTime(header.created_at, 'GrpHdr/CreDtTm'))
    .text('NbOfTxs', String(count))
    .text('CtrlSum', centsToIsoAmount(sum, 'GrpHdr/CtrlSum'))
    .open('SttlmInf').text('SttlmMtd', 'CLRG').close()
    .close()
  for (const row of checked) {
    writeReturn(xml, row)
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** The message, whole. */
export function pacs004Text(header: Pacs004Header, returns: readonly PaymentReturnRow[]):
  Promise<string> {
  return messageText(pacs004Chunks(header, returns))
}

/** Writes the message into a Writable and ends it; see pacs004Chunks. */
export async function writePacs004(
  sink: Writable,
  header: Pacs004Header,
  returns: readonly PaymentReturnRow[],
): Promise<void> {
  await writeMessage(sink, pacs004Chunks(header, returns))
}

function checkReturn(row: PaymentReturnRow): PaymentReturnRow {
  const item = `return of ${String(row.original_end_to_end_id)}`
  const optional = (value: string | undefined, type: 'Max35Text' | 'Max105Text', field: string) =>
    value === undefined ? undefined : checkText(value, type, field, item)
  checkCents(row.returned_amount, 'RtrdIntrBkSttlmAmt', item)
  if (typeof row.reason_code !== 'string' || !reason_code_pattern.test(row.reason_code)) {
    throw new IsoValueError('RtrRsnInf/Rsn/Cd',
      `${String(row.reason_code)} is not a return reason code (4 capitals or digits, e.g. AC01)`,
      item)
  }
  return {
    return_id: optional(row.return_id, 'Max35Text', 'RtrId'),
    original_message_id: checkText(row.original_message_id, 'Max35Text', 'OrgnlGrpInf/OrgnlMsgId',
      item),
    original_end_to_end_id: checkText(row.original_end_to_end_id, 'Max35Text', 'OrgnlEndToEndId',
      item),
    original_tx_id: optional(row.original_tx_id, 'Max35Text', 'OrgnlTxId'),
    returned_amount: row.returned_amount,
    reason_code: row.reason_code,
    additional_information: optional(row.additional_information, 'Max105Text',
      'RtrRsnInf/AddtlInf'),
  }
}

// The elements in the schema's order: RtrId, OrgnlGrpInf, OrgnlEndToEndId, OrgnlTxId,
// RtrdIntrBkSttlmAmt, RtrRsnInf.
function writeReturn(xml: XmlWriter, row: PaymentReturnRow): void {
  xml.open('TxInf')
  if (row.return_id !== undefined) xml.text('RtrId', row.return_id)
  xml.open('OrgnlGrpInf')
    .text('OrgnlMsgId', row.original_message_id)
    .text('OrgnlMsgNmId', pacs008_message_name)
    .close()
    .text('OrgnlEndToEndId', row.original_end_to_end_id)
  if (row.original_tx_id !== undefined) xml.text('OrgnlTxId', row.original_tx_id)
  xml.amount('RtrdIntrBkSttlmAmt', row.returned_amount)
  xml.open('RtrRsnInf').open('Rsn').text('Cd', row.reason_code).close()
  if (row.additional_information !== undefined) {
    xml.text('AddtlInf', row.additional_information)
  }
  xml.close().close()
}
