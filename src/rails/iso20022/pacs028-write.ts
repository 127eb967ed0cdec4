import type { Writable } from 'node:stream'
import { endToEndIdOf } from './end-to-end-id.ts'
import { pacs008_message_name } from './pacs008-write.ts'
import { checkCount, checkText, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// The bank asking the clearing house for the status of payments it sent and heard nothing
// of (pacs.028.001.04, FIToFIPmtStsReq; docs/operators/rails.md: an RTC with no status
// within the bound stays Pending, and the bank asks). Each payment is named by the message
// it went out in (OrgnlMsgId) and its id (OrgnlEndToEndId and OrgnlTxId: its tx_id's 32 hex
// digits, as the pacs.008 wrote them). The answer is a pacs.002.

export const pacs028_namespace = 'urn:iso:std:iso:20022:tech:xsd:pacs.028.001.04'

/** One payment asked about. */
export interface StatusRequestRow {
  /** The bank's id of this request (StsReqId, Max35Text), when it gives one. */
  status_request_id?: string
  /** The MsgId of the pacs.008 the payment went out in (OrgnlGrpInf/OrgnlMsgId, Max35Text). */
  original_message_id: string
  /** The payment's tx_id (a UUID). */
  tx_id: string
}

export interface Pacs028Header {
  /** The message's id (MsgId, Max35Text). */
  message_id: string
  /** When the message was made (CreDtTm), written in UTC. */
  created_at: Date
}

/**
 * The message in chunks. Throws IsoValueError, before anything is handed out, for a value the
 * schema cannot hold and for an empty list.
 */
export async function* pacs028Chunks(
  header: Pacs028Header,
  requests: readonly StatusRequestRow[],
): AsyncGenerator<string, void, undefined> {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  checkCount(requests.length, 'TxInf (payments asked about)')
  const checked = requests.map(checkRequest)
  const xml = new XmlWriter(pacs028_namespace, 'FIToFIPmtStsReq')
  xml.open('GrpHdr')
    .text('MsgId', header.message_id)
    .text('CreDtTm', isoDateTime(header.created_at, 'GrpHdr/CreDtTm'))
    .close()
  for (const request of checked) {
    writeRequest(xml, request)
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** The message, whole. */
export function pacs028Text(header: Pacs028Header, requests: readonly StatusRequestRow[]):
  Promise<string> {
  return messageText(pacs028Chunks(header, requests))
}

/** Writes the message into a Writable and ends it; see pacs028Chunks. */
export async function writePacs028(
  sink: Writable,
  header: Pacs028Header,
  requests: readonly StatusRequestRow[],
): Promise<void> {
  await writeMessage(sink, pacs028Chunks(header, requests))
}

interface CheckedRequest {
  statusRequestId: string | undefined
  originalMessageId: string
  endToEndId: string
}

function checkRequest(request: StatusRequestRow): CheckedRequest {
  const item = `payment ${String(request.tx_id)}`
  return {
    statusRequestId: request.status_request_id === undefined ? undefined
      : checkText(request.status_request_id, 'Max35Text', 'StsReqId', item),
    originalMessageId: checkText(request.original_message_id, 'Max35Text',
      'OrgnlGrpInf/OrgnlMsgId', item),
    endToEndId: endToEndIdOf(request.tx_id, `${item}: OrgnlEndToEndId`),
  }
}

// The elements in the schema's order: StsReqId, OrgnlGrpInf, OrgnlEndToEndId, OrgnlTxId.
function writeRequest(xml: XmlWriter, request: CheckedRequest): void {
  xml.open('TxInf')
  if (request.statusRequestId !== undefined) xml.text('StsReqId', request.statusRequestId)
  xml.open('OrgnlGrpInf')
    .text('OrgnlMsgId', request.originalMessageId)
    .text('OrgnlMsgNmId', pacs008_message_name)
    .close()
    .text('OrgnlEndToEndId', request.endToEndId)
    .text('OrgnlTxId', request.endToEndId)
    .close()
}
