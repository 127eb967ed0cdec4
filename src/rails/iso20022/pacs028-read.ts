import { requiredElement, requiredDateTime, requiredText } from './xml-read-fields.ts'
import {
  readMessage, type MessageSource, type MessageSpec, type ReadLimits, type XmlNode,
} from './xml-read.ts'

// The reader of `pacs.028.001.04`, a status request: which payments of which message the
// asker wants the status of. The clearing house's side reads it (the sandbox's simulator
// answers the bank's requests with a pacs.002, as a real gateway does).

export const pacs028_message = 'pacs.028.001.04'

export interface StatusRequestHeader {
  message_id: string
  /** `CreDtTm` as written. */
  created_at: string
}

/** One payment asked about. */
export interface StatusRequest {
  original_message_id: string
  original_end_to_end_id: string
}

const status_request: MessageSpec<StatusRequestHeader, StatusRequest, null> = {
  message: pacs028_message,
  item_path: ['Document', 'FIToFIPmtStsReq', 'TxInf'],
  item: requestOf,
  tally: () => null,
  add: () => {},
  header: (document: XmlNode) => {
    const group = requiredElement(document, 'FIToFIPmtStsReq/GrpHdr')
    return {
      message_id: requiredText(group, 'MsgId', 35),
      created_at: requiredDateTime(group, 'CreDtTm'),
    }
  },
}

function requestOf(node: XmlNode): StatusRequest {
  return {
    original_message_id: requiredText(requiredElement(node, 'OrgnlGrpInf'), 'OrgnlMsgId', 35),
    original_end_to_end_id: requiredText(node, 'OrgnlEndToEndId', 35),
  }
}

/** A status request read whole (checked as every reader checks: refused whole or read). */
export function readStatusRequest(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: StatusRequestHeader; items: StatusRequest[] }> {
  return readMessage(status_request, source, limits)
}
