import { centsToIsoAmount } from '../iso20022/amount.ts'
import { IsoValueError } from '../iso20022/iso-value-error.ts'
import { pacs008_namespace, za_clearing_system } from '../iso20022/pacs008-write.ts'
import { checkCents, checkText, isoDateTime } from '../iso20022/xml-text.ts'
import { messageText, XmlWriter } from '../iso20022/xml-write.ts'

// Another bank's credit transfer to one of the bank's accounts (pacs.008.001.09), as the
// clearing-house simulator delivers it: one payment, read by the bank's pacs008-read.ts. It is
// not written by pacs008-write.ts, the bank's writer of its own payouts, because an incoming
// payment must carry its interbank settlement date (IntrBkSttlmDt: the bank's reader requires
// it, and credits the account on that day), which the bank's payouts leave out.

export interface IncomingCreditMessage {
  message_id: string
  created_at: Date
  /** The sender's EndToEndId and TxId (the simulator's `CHE…`: not of the bank's form). */
  end_to_end_id: string
  amount: bigint
  /** `YYYY-MM-DD`: the day it settles (IntrBkSttlmDt). */
  settlement_date: string
  payment_type: 'EFT' | 'RTC'
  payer: { name: string; account_number: string; branch_code: string }
  payee: { name?: string; account_number: string; branch_code: string }
  /** The payer's reference (RmtInf/Ustrd), when there is one. */
  reference?: string
}

const date_pattern = /^\d{4}-\d{2}-\d{2}$/

/** A real day as `YYYY-MM-DD`. */
function isDay(text: string): boolean {
  return typeof text === 'string' && date_pattern.test(text)
    && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))
    && new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text
}

/** The message, whole. Throws IsoValueError for a value the schema cannot hold. */
export function incomingPacs008Text(message: IncomingCreditMessage): Promise<string> {
  return messageText(incomingChunks(message))
}

// The elements in the schema's order: GrpHdr (MsgId, CreDtTm, NbOfTxs, CtrlSum, IntrBkSttlmDt,
// SttlmInf), then CdtTrfTxInf (PmtId, PmtTpInf, IntrBkSttlmAmt, IntrBkSttlmDt, ChrgBr, Dbtr,
// DbtrAcct, DbtrAgt, CdtrAgt, Cdtr, CdtrAcct, RmtInf).
async function* incomingChunks(message: IncomingCreditMessage): AsyncGenerator<string> {
  checkMessage(message)
  const amount = centsToIsoAmount(message.amount, 'IntrBkSttlmAmt')
  const xml = new XmlWriter(pacs008_namespace, 'FIToFICstmrCdtTrf')
  xml.open('GrpHdr')
    .text('MsgId', message.message_id)
    .text('CreDtTm', isoDateTime(message.created_at, 'GrpHdr/CreDtTm'))
    .text('NbOfTxs', '1')
    .text('CtrlSum', amount)
    .text('IntrBkSttlmDt', message.settlement_date)
    .open('SttlmInf').text('SttlmMtd', 'CLRG').close()
    .close()
  xml.open('CdtTrfTxInf')
    .open('PmtId').text('EndToEndId', message.end_to_end_id)
    .text('TxId', message.end_to_end_id).close()
    .open('PmtTpInf').open('LclInstrm').text('Prtry', message.payment_type).close().close()
    .amount('IntrBkSttlmAmt', message.amount)
    .text('IntrBkSttlmDt', message.settlement_date)
    .text('ChrgBr', 'SLEV')
  xml.open('Dbtr').text('Nm', message.payer.name).close()
  writeAccount(xml, 'DbtrAcct', message.payer.account_number)
  writeAgent(xml, 'DbtrAgt', message.payer.branch_code)
  writeAgent(xml, 'CdtrAgt', message.payee.branch_code)
  xml.open('Cdtr')
  if (message.payee.name !== undefined) xml.text('Nm', message.payee.name)
  xml.close()
  writeAccount(xml, 'CdtrAcct', message.payee.account_number)
  if (message.reference !== undefined) xml.open('RmtInf').text('Ustrd', message.reference).close()
  xml.end()
  yield xml.take(0)!
}

function checkMessage(message: IncomingCreditMessage): void {
  checkText(message.message_id, 'Max35Text', 'GrpHdr/MsgId')
  checkText(message.end_to_end_id, 'Max35Text', 'PmtId/EndToEndId')
  checkCents(message.amount, 'IntrBkSttlmAmt')
  if (message.amount === 0n) throw new IsoValueError('IntrBkSttlmAmt', 'is zero')
  if (!isDay(message.settlement_date)) {
    throw new IsoValueError('IntrBkSttlmDt', `${message.settlement_date} is not YYYY-MM-DD`)
  }
  if (message.payment_type !== 'EFT' && message.payment_type !== 'RTC') {
    throw new IsoValueError('PmtTpInf/LclInstrm/Prtry',
      `${String(message.payment_type)} is not EFT or RTC`)
  }
  checkText(message.payer.name, 'Max140Text', 'Dbtr/Nm')
  checkText(message.payer.account_number, 'Max34Text', 'DbtrAcct/Id/Othr/Id')
  checkText(message.payer.branch_code, 'Max35Text', 'DbtrAgt/FinInstnId/ClrSysMmbId/MmbId')
  if (message.payee.name !== undefined) checkText(message.payee.name, 'Max140Text', 'Cdtr/Nm')
  checkText(message.payee.account_number, 'Max34Text', 'CdtrAcct/Id/Othr/Id')
  checkText(message.payee.branch_code, 'Max35Text', 'CdtrAgt/FinInstnId/ClrSysMmbId/MmbId')
  if (message.reference !== undefined) checkText(message.reference, 'Max140Text', 'RmtInf/Ustrd')
}

function writeAccount(xml: XmlWriter, name: string, accountNumber: string): void {
  xml.open(name).open('Id').open('Othr').text('Id', accountNumber).close().close().close()
}

function writeAgent(xml: XmlWriter, name: string, branchCode: string): void {
  xml.open(name).open('FinInstnId').open('ClrSysMmbId')
    .open('ClrSysId').text('Cd', za_clearing_system).close()
    .text('MmbId', branchCode)
    .close().close().close()
}
