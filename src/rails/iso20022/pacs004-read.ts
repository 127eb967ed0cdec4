import {
  checkTotal, elementAt, joinedText, optionalAmount, optionalChoice, optionalDecimal, optionalText,
  requiredAmount, requiredCount, requiredDateTime, requiredElement, requiredText, type CodeChoice,
} from './xml-read-fields.ts'
import {
  openMessage, pathOf, readMessage, Refusal, type MessageSource, type MessageSpec,
  type OpenedMessage, type ReadLimits, type XmlNode,
} from './xml-read.ts'

// The reader of `pacs.004.001.10`, a payment return: a payment that settled is sent back by
// the recipient's bank, with the ISO reason code kept (docs/operators/rails.md: `pacs.004`
// after success → `Reversed`). A return names the payment by the original message's id and
// its end-to-end id.

export const pacs004_message = 'pacs.004.001.10'

export interface PaymentReturnHeader {
  message_id: string
  /** `CreDtTm` as written (ISODateTime; without a zone it is the sender's local time). */
  created_at: string
  /** `NbOfTxs`, checked against the returns. */
  transaction_count: number
  /** `CtrlSum` in cents, checked against the returned amounts, if given. */
  control_sum: bigint | null
}

export interface PaymentReturn {
  return_id: string
  /** `OrgnlGrpInf/OrgnlMsgId` of the return, else of the message. */
  original_message_id: string
  original_end_to_end_id: string
  original_tx_id: string | null
  /** `RtrdIntrBkSttlmAmt` in cents (ZAR). */
  amount: bigint
  /** `RtrRsnInf/Rsn` (Cd, or Prtry when proprietary) of the return, else of the message. */
  reason: CodeChoice
  /** That `RtrRsnInf`'s `AddtlInf` texts, joined by a space. */
  reason_text: string | null
}

interface ReturnTally {
  amount: bigint
}

const payment_return: MessageSpec<PaymentReturnHeader, PaymentReturn, ReturnTally> = {
  message: pacs004_message,
  item_path: ['Document', 'PmtRtr', 'TxInf'],
  item: paymentReturn,
  tally: () => ({ amount: 0n }),
  add: (tally, item) => {
    tally.amount += item.amount
  },
  header: returnHeader,
}

function paymentReturn(node: XmlNode): PaymentReturn {
  // The message's own original group and reason apply to each return that names none.
  const message = node.parent!
  const originalGroup = elementAt(node, 'OrgnlGrpInf') ?? elementAt(message, 'OrgnlGrpInf')
  if (originalGroup === undefined) {
    throw new Refusal('OrgnlGrpInf is missing (of the return and of the message)',
      pathOf(node, 'OrgnlGrpInf'))
  }
  const reasonInformation = firstChild(node, 'RtrRsnInf')
    ?? firstChild(elementAt(message, 'OrgnlGrpInf'), 'RtrRsnInf')
  const reason = reasonInformation === undefined ? null
    : optionalChoice(reasonInformation, 'Rsn')
  if (reasonInformation === undefined || reason === null) {
    throw new Refusal('a return without a reason code', pathOf(node, 'RtrRsnInf/Rsn'))
  }
  return {
    return_id: requiredText(node, 'RtrId', 35),
    original_message_id: requiredText(originalGroup, 'OrgnlMsgId', 35),
    original_end_to_end_id: requiredText(node, 'OrgnlEndToEndId', 35),
    original_tx_id: optionalText(node, 'OrgnlTxId', 35),
    amount: requiredAmount(node, 'RtrdIntrBkSttlmAmt'),
    reason,
    reason_text: joinedText(reasonInformation, 'AddtlInf', 105),
  }
}

function firstChild(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return node?.children.find((child) => child.name === name)
}

function returnHeader(document: XmlNode, count: number, tally: ReturnTally): PaymentReturnHeader {
  const group = requiredElement(document, 'PmtRtr/GrpHdr')
  const transactionCount = requiredCount(group, 'NbOfTxs')
  checkTotal(group, 'NbOfTxs', 'the number of returns', transactionCount, count)
  const controlSum = optionalDecimal(group, 'CtrlSum')
  if (controlSum !== null) {
    checkTotal(group, 'CtrlSum', 'the control sum (cents)', controlSum, tally.amount)
  }
  const total = optionalAmount(group, 'TtlRtrdIntrBkSttlmAmt')
  if (total !== null) {
    checkTotal(group, 'TtlRtrdIntrBkSttlmAmt', 'the total returned (cents)', total, tally.amount)
  }
  return {
    message_id: requiredText(group, 'MsgId', 35),
    created_at: requiredDateTime(group, 'CreDtTm'),
    transaction_count: transactionCount,
    control_sum: controlSum,
  }
}

/**
 * Checks a return message whole (count and sums against the returns) and resolves with its
 * header and count; `items()` then hands the returns out in chunks. Rejects with
 * MessageRefused.
 */
export function openPaymentReturn(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<PaymentReturnHeader, PaymentReturn>> {
  return openMessage(payment_return, source, limits)
}

/** A return message read whole into memory. */
export function readPaymentReturn(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: PaymentReturnHeader; items: PaymentReturn[] }> {
  return readMessage(payment_return, source, limits)
}
