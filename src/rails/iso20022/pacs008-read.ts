import {
  checkTotal, elementAt, joinedText, optionalAmount, optionalDate, optionalDecimal, optionalText,
  requiredAccount, requiredAmount, requiredBranchCode, requiredCount, requiredDateTime,
  requiredElement, requiredText,
} from './xml-read-fields.ts'
import {
  openMessage, pathOf, readMessage, Refusal, type MessageSource, type MessageSpec,
  type OpenedMessage, type ReadLimits, type XmlNode,
} from './xml-read.ts'

// The reader of an incoming `pacs.008.001.09`: another bank's credit transfers to accounts of
// this bank (docs/operators/rails.md: the payer's name, account, branch code and reference
// are kept; `tx_payment_type` is EFT or RTC as the message says). An EFT file can hold a whole
// cycle: openCreditTransfers checks it whole (count and control sum against the transactions,
// the refusal of any of them refusing all) before it hands them out in chunks.
//
// EFT or RTC: the payment type's local instrument, `PmtTpInf/LclInstrm/Prtry`, is `EFT` or
// `RTC` (the transaction's PmtTpInf, else the group header's). ISO 20022 keeps the local
// instrument for a community's own scheme; any other value, or none, refuses the message.

export const pacs008_message = 'pacs.008.001.09'

export const payment_types = ['EFT', 'RTC'] as const
export type IncomingPaymentType = (typeof payment_types)[number]

export interface CreditTransfersHeader {
  message_id: string
  /** `CreDtTm` as written (ISODateTime; without a zone it is the sender's local time). */
  created_at: string
  /** `NbOfTxs`, checked against the transactions. */
  transaction_count: number
  /** `CtrlSum` in cents, checked against the transactions' amounts. */
  control_sum: bigint
}

export interface IncomingCredit {
  end_to_end_id: string
  tx_id: string | null
  /** `IntrBkSttlmAmt` in cents (ZAR). */
  amount: bigint
  /** `IntrBkSttlmDt` of the transaction, else of the group header: `YYYY-MM-DD`. */
  settlement_date: string
  payment_type: IncomingPaymentType
  debtor_name: string
  debtor_account_number: string
  debtor_branch_code: string
  creditor_account_number: string
  creditor_branch_code: string
  /** `RmtInf/Ustrd` texts joined by a space: the payer's reference. */
  remittance: string | null
}

interface CreditTally {
  amount: bigint
}

const credit_transfers: MessageSpec<CreditTransfersHeader, IncomingCredit, CreditTally> = {
  message: pacs008_message,
  item_path: ['Document', 'FIToFICstmrCdtTrf', 'CdtTrfTxInf'],
  item: incomingCredit,
  tally: () => ({ amount: 0n }),
  add: (tally, item) => {
    tally.amount += item.amount
  },
  header: transfersHeader,
}

function incomingCredit(node: XmlNode): IncomingCredit {
  const group = groupHeaderOf(node)
  return {
    end_to_end_id: requiredText(node, 'PmtId/EndToEndId', 35),
    tx_id: optionalText(node, 'PmtId/TxId', 35),
    amount: requiredAmount(node, 'IntrBkSttlmAmt'),
    settlement_date: settlementDate(node, group),
    payment_type: paymentType(node, group),
    debtor_name: requiredText(node, 'Dbtr/Nm', 140),
    debtor_account_number: requiredAccount(node, 'DbtrAcct'),
    debtor_branch_code: requiredBranchCode(node, 'DbtrAgt'),
    creditor_account_number: requiredAccount(node, 'CdtrAcct'),
    creditor_branch_code: requiredBranchCode(node, 'CdtrAgt'),
    remittance: joinedText(node, 'RmtInf/Ustrd', 140),
  }
}

/** The group header, read before the transactions (the schema puts it first). */
function groupHeaderOf(node: XmlNode): XmlNode | undefined {
  return elementAt(node.parent!, 'GrpHdr')
}

function settlementDate(node: XmlNode, group: XmlNode | undefined): string {
  const date = optionalDate(node, 'IntrBkSttlmDt')
    ?? (group === undefined ? null : optionalDate(group, 'IntrBkSttlmDt'))
  if (date === null) {
    throw new Refusal('IntrBkSttlmDt is missing (of the transaction and of the group)',
      pathOf(node, 'IntrBkSttlmDt'))
  }
  return date
}

function paymentType(node: XmlNode, group: XmlNode | undefined): IncomingPaymentType {
  const instrument = elementAt(node, 'PmtTpInf/LclInstrm')
    ?? (group === undefined ? undefined : elementAt(group, 'PmtTpInf/LclInstrm'))
  const text = instrument === undefined ? null : optionalText(instrument, 'Prtry', 35)
  const type = payment_types.find((t) => t === text)
  if (type === undefined) {
    const found = text === null ? 'none' : JSON.stringify(text)
    throw new Refusal(`the local instrument (PmtTpInf/LclInstrm/Prtry) is ${found}, `
      + 'not EFT or RTC', pathOf(node, 'PmtTpInf/LclInstrm/Prtry'))
  }
  return type
}

function transfersHeader(
  document: XmlNode,
  count: number,
  tally: CreditTally,
): CreditTransfersHeader {
  const group = requiredElement(document, 'FIToFICstmrCdtTrf/GrpHdr')
  const transactionCount = requiredCount(group, 'NbOfTxs')
  checkTotal(group, 'NbOfTxs', 'the number of transactions', transactionCount, count)
  // The schema leaves the control sum out if the sender likes; the bank requires it: with the
  // count it is what shows that the message holds every transaction sent.
  const controlSum = optionalDecimal(group, 'CtrlSum')
  if (controlSum === null) throw new Refusal('CtrlSum is missing', pathOf(group, 'CtrlSum'))
  checkTotal(group, 'CtrlSum', 'the control sum (cents)', controlSum, tally.amount)
  const total = optionalAmount(group, 'TtlIntrBkSttlmAmt')
  if (total !== null) {
    checkTotal(group, 'TtlIntrBkSttlmAmt', 'the total settled (cents)', total, tally.amount)
  }
  return {
    message_id: requiredText(group, 'MsgId', 35),
    created_at: requiredDateTime(group, 'CreDtTm'),
    transaction_count: transactionCount,
    control_sum: controlSum,
  }
}

/**
 * Checks incoming credit transfers whole and resolves with the header and count; `items()`
 * then hands the transactions out in chunks. Rejects with MessageRefused.
 */
export function openCreditTransfers(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<CreditTransfersHeader, IncomingCredit>> {
  return openMessage(credit_transfers, source, limits)
}

/** Incoming credit transfers read whole into memory (an RTC: one transaction). */
export function readCreditTransfers(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: CreditTransfersHeader; items: IncomingCredit[] }> {
  return readMessage(credit_transfers, source, limits)
}
