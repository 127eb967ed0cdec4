import {
  joinedText, optionalChoice, optionalCode, optionalText, requiredDateTime, requiredElement,
  requiredText, type CodeChoice,
} from './xml-read-fields.ts'
import {
  openMessage, pathOf, readMessage, Refusal, type MessageSource, type MessageSpec,
  type OpenedMessage, type ReadLimits, type XmlNode,
} from './xml-read.ts'

// The reader of `pacs.002.001.11`, the clearing house's status report: it accepts (ACSC,
// ACCC) or rejects (RJCT with an ISO reason code and text) each payment of a message the bank
// sent (docs/operators/rails.md). A report of a whole EFT cycle can hold 100,000 statuses:
// openStatusReport checks it whole and then hands them out in chunks (xml-read.ts).

export const pacs002_message = 'pacs.002.001.11'

/** The report's group header and the original message it answers. */
export interface StatusReportHeader {
  message_id: string
  /** `CreDtTm` as written (ISODateTime; without a zone it is the sender's local time). */
  created_at: string
  original_message_id: string
  /** The original message's name, e.g. `pacs.008.001.09`. */
  original_message_name: string
  /** The status of the original message as a whole (e.g. `RJCT`, `PART`), if given. */
  group_status: string | null
  /** The reason of the group's status, if given. */
  group_reason: CodeChoice | null
}

/** One payment's status. */
export interface TransactionStatus {
  original_end_to_end_id: string
  original_tx_id: string | null
  /** `TxSts`: ACSC or ACCC (accepted), RJCT (rejected), PDNG, … */
  status: string
  /** `Rsn/Cd` (proprietary: false) or `Rsn/Prtry` (true) of the first StsRsnInf; RJCT has one. */
  reason: CodeChoice | null
  /** The first StsRsnInf's `AddtlInf` texts, joined by a space. */
  additional_info: string | null
}

const status_report: MessageSpec<StatusReportHeader, TransactionStatus, null> = {
  message: pacs002_message,
  item_path: ['Document', 'FIToFIPmtStsRpt', 'TxInfAndSts'],
  item: transactionStatus,
  tally: () => null,
  add: () => {},
  header: reportHeader,
}

function transactionStatus(node: XmlNode): TransactionStatus {
  const status = optionalCode(node, 'TxSts')
  if (status === null) throw new Refusal('TxSts is missing', pathOf(node, 'TxSts'))
  const reasonInformation = node.children.find((child) => child.name === 'StsRsnInf')
  const reason = reasonInformation === undefined ? null
    : optionalChoice(reasonInformation, 'Rsn')
  if (status === 'RJCT' && reason === null) {
    throw new Refusal('a rejection (RJCT) without a reason code', pathOf(node, 'StsRsnInf/Rsn'))
  }
  return {
    original_end_to_end_id: requiredText(node, 'OrgnlEndToEndId', 35),
    original_tx_id: optionalText(node, 'OrgnlTxId', 35),
    status,
    reason,
    additional_info: reasonInformation === undefined ? null
      : joinedText(reasonInformation, 'AddtlInf', 105),
  }
}

function reportHeader(document: XmlNode, count: number): StatusReportHeader {
  const report = requiredElement(document, 'FIToFIPmtStsRpt')
  const group = requiredElement(report, 'GrpHdr')
  // The bank's reports each answer one message of its own: the original group names it.
  const original = requiredElement(report, 'OrgnlGrpInfAndSts')
  const groupStatus = optionalCode(original, 'GrpSts')
  if (groupStatus === null && count === 0) {
    throw new Refusal('the report holds no status: neither GrpSts nor TxInfAndSts',
      pathOf(report))
  }
  const reasonInformation = original.children.find((child) => child.name === 'StsRsnInf')
  return {
    message_id: requiredText(group, 'MsgId', 35),
    created_at: requiredDateTime(group, 'CreDtTm'),
    original_message_id: requiredText(original, 'OrgnlMsgId', 35),
    original_message_name: requiredText(original, 'OrgnlMsgNmId', 35),
    group_status: groupStatus,
    group_reason: reasonInformation === undefined ? null
      : optionalChoice(reasonInformation, 'Rsn'),
  }
}

/**
 * Checks a status report whole (every status read, nothing kept per status) and resolves with
 * its header and count; `items()` then hands the statuses out in chunks. Rejects with
 * MessageRefused.
 */
export function openStatusReport(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<StatusReportHeader, TransactionStatus>> {
  return openMessage(status_report, source, limits)
}

/** A status report read whole into memory (an RTC's answer: one status). */
export function readStatusReport(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: StatusReportHeader; items: TransactionStatus[] }> {
  return readMessage(status_report, source, limits)
}
