import { toSast } from '../calendar/sa-calendar.ts'
import {
  camt053Chunks, type AccountEntryRow, type BankTransactionCode,
} from '../rails/iso20022/camt053-write.ts'
import { endToEndIdOf } from '../rails/iso20022/end-to-end-id.ts'
import type { AccountStatement, StatementLine } from './statement-types.ts'

// An account's statement as ISO 20022 camt.053.001.08 (BkToCstmrStmt), for partners'
// systems, written by the bank's one camt.053 writer (rails/iso20022/camt053-write.ts, which
// also writes the clearing house's statements in the sandbox): the account is its account
// number, the balances are OPBD (the opening balance, on the first day) and CLBD (the closing
// balance, on the last), and each line is one booked entry, numbered from 1 (NtryRef), booked
// and valued on its SAST posting day, with the transaction's tx_id as its reference. A tx_id is
// a UUID of 36 characters and camt's references hold 35: it is written as its 32 hex digits
// (AcctSvcrRef and TxDtls/Refs/TxId), as the bank's payments carry it on the rails
// (end-to-end-id.ts). The writer checks that the entries take the opening balance to the
// closing one.

/** The bank transaction code (BkTxCd) of a line, by what moved. */
export function bankTransactionCode(line: StatementLine): BankTransactionCode {
  const code = (domain: string, family: string, sub_family: string) =>
    ({ domain, family, sub_family })
  switch (line.tx_type) {
    case 'fee': return code('ACMT', 'MDOP', 'CHRG')
    case 'deposit': return code('PMNT', 'CNTR', 'CDPT')
    case 'card': return code('PMNT', 'CCRD', 'POSD')
    case 'refund': return code('PMNT', 'CCRD', 'RIMB')
    case 'debit_order': return code('PMNT', 'RDDT', 'PMDD')
    case 'reversal': return code('PMNT', line.credit > 0n ? 'ICDT' : 'RCDT', 'RRTN')
    case 'incoming': return code('PMNT', 'RCDT', 'DMCT')
    default: return code('PMNT', line.credit > 0n ? 'RCDT' : 'ICDT', 'DMCT')
  }
}

/** One line as a booked entry. */
export function entryOf(line: StatementLine, index: number): AccountEntryRow {
  const day = toSast(line.posted_at).date
  const reference = endToEndIdOf(line.tx_id, 'TxDtls/Refs/TxId')
  return {
    entry_reference: String(index + 1),
    amount: line.credit > 0n ? line.credit : line.debit,
    credit_debit: line.credit > 0n ? 'CRDT' : 'DBIT',
    booking_date: day,
    value_date: day,
    account_servicer_reference: reference,
    bank_transaction_code: bankTransactionCode(line),
    references: { tx_id: reference },
  }
}

/** The message's ids: `S` and the statement's id's 32 hex digits, or the range's days. */
function idsOf(statement: AccountStatement, statementId: string | undefined) {
  const compact = (day: string) => day.replaceAll('-', '')
  const range = `${statement.account_number}-${compact(statement.from)}-${compact(statement.to)}`
  const messageId = statementId === undefined
    ? `S${compact(statement.to)}${statement.generated_at.getTime()}`
    : `S${statementId.replaceAll('-', '')}`
  return { message_id: messageId.slice(0, 35), statement_id: range.slice(0, 35) }
}

/** The statement as camt.053.001.08, in chunks (camt053Chunks). */
export function statementCamtChunks(statement: AccountStatement,
    statementId?: string): AsyncGenerator<string, void, undefined> {
  return camt053Chunks({
    ...idsOf(statement, statementId),
    created_at: statement.generated_at,
    account_id: statement.account_number,
    opening_balance: { amount: statement.opening_balance, date: statement.from },
    closing_balance: { amount: statement.closing_balance, date: statement.to },
  }, statement.lines.map(entryOf))
}

/** The statement as camt.053.001.08, whole, in UTF-8. */
export async function statementCamt(statement: AccountStatement,
    statementId?: string): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const chunk of statementCamtChunks(statement, statementId)) {
    parts.push(Buffer.from(chunk, 'utf8'))
  }
  return Buffer.concat(parts)
}
