import type { Writable } from 'node:stream'
import { IsoValueError } from './iso-value-error.ts'
import { checkCents, checkText, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// The end-of-day statement of the bank's settlement account at the clearing house
// (camt.053.001.08, BkToCstmrStmt; docs/operators/rails.md): the opening and closing
// balances and one booked entry per payment settled, return and incoming credit, each naming
// the message and end-to-end id it settled, so that the bank matches it entry by entry
// against its ledger. The bank reads these (camt-read.ts); it writes them only in its
// clearing-house simulator, the sandbox's counterpart (src/rails/clearing-house/).
//
// The balances come before the entries, so the caller gives both; the writer sums what it
// writes and throws at the end when opening + credits − debits is not the closing balance
// (the reader refuses such a statement). Every entry is booked (`BOOK`): a statement of what
// settled. The entries come from an iterable, read as the message is written.

export const camt053_namespace = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08'

export type CreditDebit = 'CRDT' | 'DBIT'

/** BkTxCd/Domn: domain, family and sub-family codes (e.g. PMNT, ICDT, DMCT). */
export interface BankTransactionCode {
  domain: string
  family: string
  sub_family: string
}

/** One entry of the account (Ntry) with the one transaction it settled (NtryDtls/TxDtls). */
export interface AccountEntryRow {
  /** The entry's number in the statement (NtryRef, Max35Text), when given. */
  entry_reference?: string
  /** Integer cents, never negative: `credit_debit` says which way (Amt, ZAR). */
  amount: bigint
  credit_debit: CreditDebit
  /** `YYYY-MM-DD` (BookgDt/Dt, ValDt/Dt). */
  booking_date: string
  value_date: string
  /** The clearing house's own reference of the entry (AcctSvcrRef, Max35Text), when given. */
  account_servicer_reference?: string
  bank_transaction_code: BankTransactionCode
  /** The settled message's id, the payment's end-to-end id and tx id (Refs, each Max35Text). */
  references: { message_id?: string; end_to_end_id?: string; tx_id?: string }
}

/** A balance in cents, negative for a debit balance (`CdtDbtInd` DBIT), on a day. */
export interface BalanceRow {
  amount: bigint
  /** `YYYY-MM-DD`. */
  date: string
}

export interface Camt053Header {
  /** The message's id (MsgId, Max35Text). */
  message_id: string
  /** When it was made (GrpHdr/CreDtTm and Stmt/CreDtTm), written in UTC. */
  created_at: Date
  /** The statement's id (Stmt/Id, Max35Text). */
  statement_id: string
  /** The settlement account (Acct/Id/Othr/Id, Max34Text), in ZAR. */
  account_id: string
  /** OPBD and CLBD. */
  opening_balance: BalanceRow
  closing_balance: BalanceRow
}

/**
 * The statement in chunks. Throws IsoValueError (before the chunk that would hold it) for a
 * value the schema cannot hold, and at the end when the entries do not take the opening
 * balance to the closing one.
 */
export async function* camt053Chunks(
  header: Camt053Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): AsyncGenerator<string, void, undefined> {
  checkStatementHeader(header)
  const xml = new XmlWriter(camt053_namespace, 'BkToCstmrStmt')
  const createdAt = isoDateTime(header.created_at, 'GrpHdr/CreDtTm')
  xml.open('GrpHdr').text('MsgId', header.message_id).text('CreDtTm', createdAt).close()
  xml.open('Stmt').text('Id', header.statement_id).text('CreDtTm', createdAt)
  writeAccount(xml, header.account_id)
  writeBalance(xml, 'OPBD', header.opening_balance)
  writeBalance(xml, 'CLBD', header.closing_balance)
  let balance = header.opening_balance.amount
  for await (const entry of entries) {
    const checked = checkEntry(entry)
    balance += checked.credit_debit === 'CRDT' ? checked.amount : -checked.amount
    writeEntry(xml, checked)
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  if (balance !== header.closing_balance.amount) {
    throw new IsoValueError('Stmt/Bal', `the closing balance is ${header.closing_balance.amount} `
      + `cents; the opening balance and the entries make ${balance}`)
  }
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** The statement, whole. */
export function camt053Text(
  header: Camt053Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): Promise<string> {
  return messageText(camt053Chunks(header, entries))
}

/** Writes the statement into a Writable and ends it; see camt053Chunks. */
export async function writeCamt053(
  sink: Writable,
  header: Camt053Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): Promise<void> {
  await writeMessage(sink, camt053Chunks(header, entries))
}

function checkStatementHeader(header: Camt053Header): void {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  checkText(header.statement_id, 'Max35Text', 'Stmt/Id')
  checkText(header.account_id, 'Max34Text', 'Stmt/Acct/Id/Othr/Id')
  for (const [name, balance] of [['OPBD', header.opening_balance],
    ['CLBD', header.closing_balance]] as const) {
    if (typeof balance?.amount !== 'bigint') {
      throw new IsoValueError(`Bal[${name}]/Amt`, 'is not a bigint of cents')
    }
    checkCents(balance.amount < 0n ? -balance.amount : balance.amount, `Bal[${name}]/Amt`)
    isoDate(balance.date, `Bal[${name}]/Dt/Dt`)
  }
}

/** A balance: its type code, the amount unsigned with CRDT or DBIT, and its day. */
function writeBalance(xml: XmlWriter, code: 'OPBD' | 'CLBD', balance: BalanceRow): void {
  const debit = balance.amount < 0n
  xml.open('Bal').open('Tp').open('CdOrPrtry').text('Cd', code).close().close()
    .amount('Amt', debit ? -balance.amount : balance.amount, `Bal[${code}]/Amt`)
    .text('CdtDbtInd', debit ? 'DBIT' : 'CRDT')
    .open('Dt').text('Dt', balance.date).close()
    .close()
}

/** The account of a statement or notification: its id and currency (ZAR). */
export function writeAccount(xml: XmlWriter, accountId: string): void {
  xml.open('Acct').open('Id').open('Othr').text('Id', accountId).close().close()
    .text('Ccy', 'ZAR').close()
}

const date_pattern = /^(\d{4})-(\d{2})-(\d{2})$/
const code_pattern = /^[A-Z0-9]{4}$/

/** A day as ISODate, `YYYY-MM-DD`, that is a real day. */
function isoDate(value: string, field: string, item?: string): string {
  const parts = typeof value === 'string' ? date_pattern.exec(value) : null
  const [year, month, day] = parts === null ? [0, 0, 0] : parts.slice(1).map(Number)
  const date = new Date(Date.UTC(year!, month! - 1, day!))
  if (parts === null || date.getUTCFullYear() !== year || date.getUTCMonth() !== month! - 1
    || date.getUTCDate() !== day) {
    throw new IsoValueError(field, `${String(value)} is not a day (YYYY-MM-DD)`, item)
  }
  return value
}

/** An entry's values checked against their schema types (shared with camt054-write.ts). */
export function checkEntry(entry: AccountEntryRow): AccountEntryRow {
  const refs = entry.references ?? {}
  const item = `entry ${String(refs.end_to_end_id ?? entry.entry_reference ?? '')}`
  const optional = (value: string | undefined, field: string) =>
    value === undefined ? undefined : checkText(value, 'Max35Text', field, item)
  checkCents(entry.amount, 'Ntry/Amt', item)
  if (entry.credit_debit !== 'CRDT' && entry.credit_debit !== 'DBIT') {
    throw new IsoValueError('Ntry/CdtDbtInd', `${String(entry.credit_debit)} is not CRDT or DBIT`,
      item)
  }
  const code = entry.bank_transaction_code
  for (const part of [code?.domain, code?.family, code?.sub_family]) {
    if (typeof part !== 'string' || !code_pattern.test(part)) {
      throw new IsoValueError('Ntry/BkTxCd/Domn',
        `${String(part)} is not a bank transaction code (4 capitals or digits)`, item)
    }
  }
  return {
    entry_reference: optional(entry.entry_reference, 'Ntry/NtryRef'),
    amount: entry.amount,
    credit_debit: entry.credit_debit,
    booking_date: isoDate(entry.booking_date, 'Ntry/BookgDt/Dt', item),
    value_date: isoDate(entry.value_date, 'Ntry/ValDt/Dt', item),
    account_servicer_reference: optional(entry.account_servicer_reference, 'Ntry/AcctSvcrRef'),
    bank_transaction_code: code,
    references: {
      message_id: optional(refs.message_id, 'TxDtls/Refs/MsgId'),
      end_to_end_id: optional(refs.end_to_end_id, 'TxDtls/Refs/EndToEndId'),
      tx_id: optional(refs.tx_id, 'TxDtls/Refs/TxId'),
    },
  }
}

// The elements in the schema's order: NtryRef, Amt, CdtDbtInd, Sts, BookgDt, ValDt,
// AcctSvcrRef, BkTxCd, NtryDtls (TxDtls/Refs: MsgId, EndToEndId, TxId).
/** One booked entry, checked by checkEntry (shared with camt054-write.ts). */
export function writeEntry(xml: XmlWriter, entry: AccountEntryRow): void {
  xml.open('Ntry')
  if (entry.entry_reference !== undefined) xml.text('NtryRef', entry.entry_reference)
  xml.amount('Amt', entry.amount, 'Ntry/Amt')
    .text('CdtDbtInd', entry.credit_debit)
    .open('Sts').text('Cd', 'BOOK').close()
    .open('BookgDt').text('Dt', entry.booking_date).close()
    .open('ValDt').text('Dt', entry.value_date).close()
  if (entry.account_servicer_reference !== undefined) {
    xml.text('AcctSvcrRef', entry.account_servicer_reference)
  }
  const code = entry.bank_transaction_code
  xml.open('BkTxCd').open('Domn').text('Cd', code.domain)
    .open('Fmly').text('Cd', code.family).text('SubFmlyCd', code.sub_family).close()
    .close().close()
  const refs = entry.references
  if (refs.message_id !== undefined || refs.end_to_end_id !== undefined
    || refs.tx_id !== undefined) {
    xml.open('NtryDtls').open('TxDtls').open('Refs')
    if (refs.message_id !== undefined) xml.text('MsgId', refs.message_id)
    if (refs.end_to_end_id !== undefined) xml.text('EndToEndId', refs.end_to_end_id)
    if (refs.tx_id !== undefined) xml.text('TxId', refs.tx_id)
    xml.close().close().close()
  }
  xml.close()
}
