import {
  checkTotal, elementAt, optionalDecimal, optionalText, requiredAccount, requiredAmount,
  requiredBranchCode, requiredCount, requiredDateTime, requiredElement, requiredText,
} from '../iso20022/xml-read-fields.ts'
import {
  openMessage, pathOf, Refusal, type MessageSource, type MessageSpec, type OpenedMessage,
  type ReadLimits, type XmlNode,
} from '../iso20022/xml-read.ts'
import { decidePayment } from './decide.ts'

// The clearing-house simulator's reading of the bank's outbound pacs.008.001.09, on the
// bank's own defensive reader (xml-read.ts): whole or nothing, in two passes. It is not
// pacs008-read.ts, the reader of incoming credits, which takes what booking a credit needs
// (the payer, the settlement date, the reference): the simulator needs only what it decides
// by (the recipient) and what it answers with (the ids and the amount). It does not read the
// settlement date (GrpHdr/IntrBkSttlmDt), which the bank's writer (pacs008-write.ts) writes.
// The first pass also tallies the decisions, so the status report's group status is known
// before its first payment.

export const outbound_message = 'pacs.008.001.09'

/** What the simulator takes of one payment of the bank's. */
export interface OutboundPayment {
  end_to_end_id: string
  tx_id: string | null
  /** `IntrBkSttlmAmt` in cents (ZAR). */
  amount: bigint
  /** `PmtTpInf/LclInstrm/Prtry`, as the bank writes it: EFT or RTC. */
  payment_type: string | null
  creditor_account_number: string
  creditor_branch_code: string
}

/** The decisions of a whole message, counted on its first reading. */
export interface OutboundTally {
  amount: bigint
  accepted: number
  rejected: number
  returned: number
  returned_amount: bigint
}

export interface OutboundHeader {
  message_id: string
  created_at: string
  transaction_count: number
  control_sum: bigint
  tally: OutboundTally
}

const outbound: MessageSpec<OutboundHeader, OutboundPayment, OutboundTally> = {
  message: outbound_message,
  item_path: ['Document', 'FIToFICstmrCdtTrf', 'CdtTrfTxInf'],
  item: outboundPayment,
  tally: () => ({ amount: 0n, accepted: 0, rejected: 0, returned: 0, returned_amount: 0n }),
  add: addPayment,
  header: outboundHeader,
}

function outboundPayment(node: XmlNode): OutboundPayment {
  return {
    end_to_end_id: requiredText(node, 'PmtId/EndToEndId', 35),
    tx_id: optionalText(node, 'PmtId/TxId', 35),
    amount: requiredAmount(node, 'IntrBkSttlmAmt'),
    payment_type: optionalText(node, 'PmtTpInf/LclInstrm/Prtry', 35),
    creditor_account_number: requiredAccount(node, 'CdtrAcct'),
    creditor_branch_code: requiredBranchCode(node, 'CdtrAgt'),
  }
}

function addPayment(tally: OutboundTally, payment: OutboundPayment): void {
  tally.amount += payment.amount
  const decision = decidePayment({ account_number: payment.creditor_account_number,
    branch_code: payment.creditor_branch_code })
  if (decision.status === 'RJCT') {
    tally.rejected += 1
    return
  }
  tally.accepted += 1
  if (decision.returned !== undefined) {
    tally.returned += 1
    tally.returned_amount += payment.amount
  }
}

function outboundHeader(document: XmlNode, count: number, tally: OutboundTally): OutboundHeader {
  const group = requiredElement(document, 'FIToFICstmrCdtTrf/GrpHdr')
  const transactionCount = requiredCount(group, 'NbOfTxs')
  checkTotal(group, 'NbOfTxs', 'the number of transactions', transactionCount, count)
  const controlSum = optionalDecimal(group, 'CtrlSum')
  if (controlSum === null) throw new Refusal('CtrlSum is missing', pathOf(group, 'CtrlSum'))
  checkTotal(group, 'CtrlSum', 'the control sum (cents)', controlSum, tally.amount)
  if (elementAt(group, 'SttlmInf') === undefined) {
    throw new Refusal('SttlmInf is missing', pathOf(group, 'SttlmInf'))
  }
  return {
    message_id: requiredText(group, 'MsgId', 35),
    created_at: requiredDateTime(group, 'CreDtTm'),
    transaction_count: transactionCount,
    control_sum: controlSum,
    tally,
  }
}

/**
 * Checks one of the bank's pacs.008 whole (count and control sum against its payments) and
 * resolves with its header, the decisions counted; `items()` then hands the payments out in
 * chunks. Rejects with MessageRefused.
 */
export function openOutboundTransfers(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<OutboundHeader, OutboundPayment>> {
  return openMessage(outbound, source, limits)
}
