import { assert } from '../errors.ts'
import type { PostedRow } from './statements-store.ts'
import type { AccountStatement, StatementLine } from './statement-types.ts'
import type { StatementTotals } from './statements-tables.ts'

// The pure part of a statement: its lines from the ledger's posted rows, its totals, and the
// invariant every statement keeps (RULINGS "Account lifecycle", Statements): opening balance +
// credits − debits = closing balance, each line's running balance the one before it plus its
// credit less its debit, and the closing balance the ledger's running balance after the last
// line. A statement that breaks it is a ledger in doubt: an assertion, never a reply.

/** What the customer reads on a line: the reference, and the other party where there is one. */
export function descriptionOf(row: PostedRow): string {
  // A payer's own reference (own_ref) is the one meant for its own statement.
  const reference = row.debit > 0n && row.own_ref !== '' ? row.own_ref : row.ref
  const parts = [reference, row.recipient_name].filter((part) => part !== '')
  return parts.length > 0 ? parts.join(' · ') : row.tx_type
}

export function lineOf(row: PostedRow): StatementLine {
  return {
    tx_id: row.id, posted_at: row.posted_at, tx_type: row.tx_type,
    payment_type: row.tx_payment_type, description: descriptionOf(row), credit: row.credit,
    debit: row.debit, running_balance: row.running_balance,
  }
}

/**
 * The fee a posted row charged: a `fee` row's debit; a debit-order collection's charges (its
 * credit is the net); a bulk batch's funding (its one debit is the payments and their fees).
 * A payout's own row names its fee too, but the fee is charged by its own `fee` row.
 */
export function feeOf(row: PostedRow): bigint {
  if (row.tx_type === 'fee') return row.debit
  if (row.tx_type === 'debit_order') return row.fee
  if (row.tx_type === 'bulk_payment' && row.debit > 0n) return row.fee
  return 0n
}

/** The statement's lines and sums, its invariant asserted. */
export function statementOf(head: Omit<AccountStatement, 'lines' | 'closing_balance' | 'credits'
    | 'debits' | 'fees'>, rows: readonly PostedRow[], ledgerClosing: bigint): AccountStatement {
  const credits = { count: 0, sum: 0n }
  const debits = { count: 0, sum: 0n }
  let fees = 0n
  let balance = head.opening_balance
  let order: bigint | undefined
  const lines: StatementLine[] = []
  for (const row of rows) {
    assert(order === undefined || row.posted_order === order + 1n,
      `statement of ${head.account_id}: posted row ${row.posted_order} follows ${order}`)
    order = row.posted_order
    balance += row.credit - row.debit
    assert(balance === row.running_balance, `statement of ${head.account_id}: row ${row.id} ` +
      `runs to ${row.running_balance}, the lines before it to ${balance}`)
    if (row.credit > 0n) { credits.count++; credits.sum += row.credit }
    if (row.debit > 0n) { debits.count++; debits.sum += row.debit }
    fees += feeOf(row)
    lines.push(lineOf(row))
  }
  assert(head.opening_balance + credits.sum - debits.sum === balance, 'opening + credits − ' +
    'debits is the closing balance')
  assert(balance === ledgerClosing, `statement of ${head.account_id}: closing ${balance}, the ` +
    `ledger's running balance ${ledgerClosing}`)
  return { ...head, closing_balance: balance, credits, debits, fees, lines }
}

/** The statement's totals as the replies and the stored row carry them. */
export function totalsOf(statement: AccountStatement): StatementTotals {
  return {
    opening_balance: statement.opening_balance.toString(),
    closing_balance: statement.closing_balance.toString(),
    credits_count: statement.credits.count,
    credits_sum: statement.credits.sum.toString(),
    debits_count: statement.debits.count,
    debits_sum: statement.debits.sum.toString(),
    fees: statement.fees.toString(),
    held_at_end: statement.held_at_end.toString(),
    lines: statement.lines.length,
  }
}
