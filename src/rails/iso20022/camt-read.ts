import {
  checkTotal, elementAt, elementsAt, optionalChoice, optionalCount, optionalDateChoice,
  optionalDecimal, optionalText, requiredAmount, requiredDateTime, requiredElement,
  requiredOneOf, requiredText, rail_currency,
} from './xml-read-fields.ts'
import {
  openMessage, pathOf, readMessage, Refusal, type MessageSource, type MessageSpec,
  type OpenedMessage, type ReadLimits, type XmlNode,
} from './xml-read.ts'

// The readers of `camt.053.001.08` (the end-of-day statement) and `camt.054.001.08` (an
// intraday notification) of the bank's settlement account at the clearing house, whose
// entries are matched one by one against the ledger (docs/operators/rails.md). A message
// holds one account's statement (or notification): a second one refuses it. A statement's
// entries must add up: opening balance + booked credits − booked debits = closing balance,
// and the transaction summary, when given, must count and sum the entries it holds.

export const camt053_message = 'camt.053.001.08'
export const camt054_message = 'camt.054.001.08'

const credit_debit = ['CRDT', 'DBIT'] as const
export type CreditDebit = (typeof credit_debit)[number]

/** A balance in cents, negative when it is a debit balance (`CdtDbtInd` DBIT). */
export interface Balance {
  amount: bigint
  /** `Dt/Dt` or `Dt/DtTm` as written. */
  date: string
}

export interface AccountReportHeader {
  message_id: string
  /** `CreDtTm` as written (ISODateTime; without a zone it is the sender's local time). */
  created_at: string
  /** The statement's or notification's `Id`. */
  report_id: string
  /** `Acct/Id/Othr/Id` or `Acct/Id/IBAN`. */
  account_id: string
}

export interface StatementHeader extends AccountReportHeader {
  /** The `OPBD` balance (or `PRCD`, the previous day's closing, when there is no OPBD). */
  opening_balance: Balance
  /** The `CLBD` balance. */
  closing_balance: Balance
}

/** The references of one transaction in an entry's details (`NtryDtls/TxDtls/Refs`). */
export interface EntryReference {
  message_id: string | null
  end_to_end_id: string | null
  tx_id: string | null
}

export interface AccountEntry {
  entry_reference: string | null
  /** `Amt` in cents (ZAR), never negative: `credit_debit` says which way. */
  amount: bigint
  credit_debit: CreditDebit
  /** `RvslInd`: the entry reverses an earlier one (of the other direction). */
  reversal: boolean
  /** `Sts/Cd` (BOOK, PDNG, INFO, FUTR) or `Sts/Prtry`. */
  status: string
  /** `BookgDt` and `ValDt` (`Dt` or `DtTm`) as written. */
  booking_date: string | null
  value_date: string | null
  account_servicer_reference: string | null
  /** Each `NtryDtls/TxDtls` with references, in order (one for an entry of one payment). */
  references: EntryReference[]
}

interface EntryTally {
  booked_credits: bigint
  booked_debits: bigint
  credits: { count: number; sum: bigint }
  debits: { count: number; sum: bigint }
}

function entryTally(): EntryTally {
  return {
    booked_credits: 0n,
    booked_debits: 0n,
    credits: { count: 0, sum: 0n },
    debits: { count: 0, sum: 0n },
  }
}

function addEntry(tally: EntryTally, entry: AccountEntry): void {
  const side = entry.credit_debit === 'CRDT' ? tally.credits : tally.debits
  side.count += 1
  side.sum += entry.amount
  if (entry.status !== 'BOOK') return
  if (entry.credit_debit === 'CRDT') tally.booked_credits += entry.amount
  else tally.booked_debits += entry.amount
}

function accountEntry(node: XmlNode): AccountEntry {
  const status = optionalChoice(node, 'Sts')
  if (status === null) throw new Refusal('Sts is missing', pathOf(node, 'Sts'))
  return {
    entry_reference: optionalText(node, 'NtryRef', 35),
    amount: requiredAmount(node, 'Amt'),
    credit_debit: requiredOneOf(node, 'CdtDbtInd', credit_debit),
    reversal: reversal(node),
    status: status.code,
    booking_date: optionalDateChoice(node, 'BookgDt'),
    value_date: optionalDateChoice(node, 'ValDt'),
    account_servicer_reference: optionalText(node, 'AcctSvcrRef', 35),
    references: elementsAt(node, 'NtryDtls/TxDtls').flatMap(entryReference),
  }
}

/** `RvslInd`, an xs:boolean: `true` or `1`; false when absent. */
function reversal(node: XmlNode): boolean {
  if (elementAt(node, 'RvslInd') === undefined) return false
  const value = requiredOneOf(node, 'RvslInd', ['true', 'false', '1', '0'])
  return value === 'true' || value === '1'
}

function entryReference(details: XmlNode): EntryReference[] {
  const refs = elementAt(details, 'Refs')
  if (refs === undefined) return []
  return [{
    message_id: optionalText(refs, 'MsgId', 35),
    end_to_end_id: optionalText(refs, 'EndToEndId', 35),
    tx_id: optionalText(refs, 'TxId', 35),
  }]
}

/** The one report (`Stmt` or `Ntfctn`) of the message and its common header. */
function reportHeader(document: XmlNode, message: string, report: string): {
  header: AccountReportHeader
  report: XmlNode
} {
  const body = requiredElement(document, message)
  const group = requiredElement(body, 'GrpHdr')
  const node = requiredElement(body, report)
  const account = requiredElement(node, 'Acct')
  const currency = optionalText(account, 'Ccy', 3)
  if (currency !== null && currency !== rail_currency) {
    throw new Refusal(`the account's currency ${currency} is not ${rail_currency}`,
      pathOf(account, 'Ccy'))
  }
  const iban = elementAt(account, 'Id/IBAN')
  const header: AccountReportHeader = {
    message_id: requiredText(group, 'MsgId', 35),
    created_at: requiredDateTime(group, 'CreDtTm'),
    report_id: requiredText(node, 'Id', 35),
    account_id: iban === undefined ? requiredText(account, 'Id/Othr/Id', 34)
      : requiredText(account, 'Id/IBAN', 34),
  }
  return { header, report: node }
}

/** The summary's counts and sums, when given, against the entries. */
function checkSummary(report: XmlNode, count: number, tally: EntryTally): void {
  const summary = elementAt(report, 'TxsSummry')
  if (summary === undefined) return
  const all = { count, sum: tally.credits.sum + tally.debits.sum }
  const parts = [['TtlNtries', all], ['TtlCdtNtries', tally.credits],
    ['TtlDbtNtries', tally.debits]] as const
  for (const [name, found] of parts) {
    const total = elementAt(summary, name)
    if (total === undefined) continue
    const entries = optionalCount(total, 'NbOfNtries')
    if (entries !== null) checkTotal(total, 'NbOfNtries', `${name} entries`, entries, found.count)
    const sum = optionalDecimal(total, 'Sum')
    if (sum !== null) checkTotal(total, 'Sum', `${name} sum (cents)`, sum, found.sum)
  }
}

function balance(report: XmlNode, codes: readonly string[]): Balance | null {
  for (const code of codes) {
    const found = elementsAt(report, 'Bal').filter((b) => {
      const type = optionalChoice(b, 'Tp/CdOrPrtry')
      return type !== null && !type.proprietary && type.code === code
    })
    if (found.length > 1) throw new Refusal(`more than one ${code} balance`, pathOf(report, 'Bal'))
    const node = found[0]
    if (node === undefined) continue
    const amount = requiredAmount(node, 'Amt')
    const sign = requiredOneOf(node, 'CdtDbtInd', credit_debit) === 'DBIT' ? -1n : 1n
    const date = optionalDateChoice(node, 'Dt')
    if (date === null) throw new Refusal('the balance has no date (Dt)', pathOf(node, 'Dt'))
    return { amount: sign * amount, date }
  }
  return null
}

function statementHeader(document: XmlNode, count: number, tally: EntryTally): StatementHeader {
  const { header, report } = reportHeader(document, 'BkToCstmrStmt', 'Stmt')
  checkSummary(report, count, tally)
  const opening = balance(report, ['OPBD', 'PRCD'])
  const closing = balance(report, ['CLBD'])
  if (opening === null || closing === null) {
    throw new Refusal(`the ${opening === null ? 'opening (OPBD or PRCD)' : 'closing (CLBD)'} `
      + 'balance is missing', pathOf(report, 'Bal'))
  }
  const booked = opening.amount + tally.booked_credits - tally.booked_debits
  checkTotal(report, 'Bal', 'the closing balance (cents)', closing.amount, booked)
  return { ...header, opening_balance: opening, closing_balance: closing }
}

function notificationHeader(
  document: XmlNode,
  count: number,
  tally: EntryTally,
): AccountReportHeader {
  const { header, report } = reportHeader(document, 'BkToCstmrDbtCdtNtfctn', 'Ntfctn')
  checkSummary(report, count, tally)
  return header
}

const statement: MessageSpec<StatementHeader, AccountEntry, EntryTally> = {
  message: camt053_message,
  item_path: ['Document', 'BkToCstmrStmt', 'Stmt', 'Ntry'],
  item: accountEntry,
  tally: entryTally,
  add: addEntry,
  header: statementHeader,
}

const notification: MessageSpec<AccountReportHeader, AccountEntry, EntryTally> = {
  message: camt054_message,
  item_path: ['Document', 'BkToCstmrDbtCdtNtfctn', 'Ntfctn', 'Ntry'],
  item: accountEntry,
  tally: entryTally,
  add: addEntry,
  header: notificationHeader,
}

/**
 * Checks a camt.053 statement whole (one account; the summary and the balances against the
 * entries) and resolves with its header and count; `items()` then hands the entries out in
 * chunks. Rejects with MessageRefused.
 */
export function openStatement(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<StatementHeader, AccountEntry>> {
  return openMessage(statement, source, limits)
}

export function readStatement(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: StatementHeader; items: AccountEntry[] }> {
  return readMessage(statement, source, limits)
}

/** Checks a camt.054 notification whole, as openStatement does (it has no balances). */
export function openNotification(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<OpenedMessage<AccountReportHeader, AccountEntry>> {
  return openMessage(notification, source, limits)
}

export function readNotification(
  source: MessageSource,
  limits?: ReadLimits,
): Promise<{ header: AccountReportHeader; items: AccountEntry[] }> {
  return readMessage(notification, source, limits)
}
