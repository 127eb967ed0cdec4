import { formatTimestamp } from '../contract/format.ts'
import { cents } from '../ledger/cents.ts'
import type { DebitListItem, DebitStatusView, MandateView } from './debit-contract.ts'
import type { HistoryRow, MandateRow, OrderRow } from './debit-store.ts'

// How mandates and debit orders leave the service: the replies of get/list/status and the
// `data` of their events (an event's `data` is the resource as its status operation returns
// it). Amounts follow the interface, not the general money rule: `amount` is a JSON integer in
// list and status, `bank_charges` and `net_amount` are integer-cent strings.

const optionalTimestamp = (at: Date | null) => (at ? formatTimestamp(at) : null)

export function mandateView(row: MandateRow): MandateView {
  return {
    mandate_reference: row.mandate_reference,
    status: row.status,
    account_holder_name: row.account_holder_name,
    account_number: row.account_number,
    account_type: row.account_type,
    branch_code: row.branch_code,
    max_amount: cents(row.max_amount).toString(),
    frequency: row.frequency,
    first_collection_date: row.first_collection_date,
    debtor_email: row.debtor_email,
    created_at: formatTimestamp(row.created_at),
    authenticated_at: optionalTimestamp(row.authenticated_at),
    rejection_reason: row.rejection_reason,
    cancelled_at: optionalTimestamp(row.cancelled_at),
  }
}

/** Amounts are checked safe integers at create (at most 2^53−1), so a JSON number holds them. */
function amountNumber(row: OrderRow): number {
  const amount = cents(row.amount)
  const value = Number(amount)
  if (!Number.isSafeInteger(value)) throw new Error(
    `debit order ${row.id}: amount ${amount} is not a safe integer`)
  return value
}

export function statusView(row: OrderRow, history: HistoryRow[]): DebitStatusView {
  return {
    debit_order_id: row.id,
    status: row.status,
    status_history: history.map((entry) => ({
      status: entry.status,
      timestamp: formatTimestamp(entry.occurred_at),
      description: entry.description,
      ...(entry.bank_reference !== null ? { bank_reference: entry.bank_reference } : {}),
    })),
    amount: amountNumber(row),
    collection_date: row.collection_date,
    processed_date: optionalTimestamp(row.processed_at),
    bank_charges: row.bank_charges === null ? '0' : cents(row.bank_charges).toString(),
    net_amount: row.net_amount === null ? '0' : cents(row.net_amount).toString(),
  }
}

export function listItem(row: OrderRow): DebitListItem {
  return {
    debit_order_id: row.id,
    clientTxId: row.client_tx_id,
    mandate_reference: row.mandate_reference,
    amount: amountNumber(row),
    status: row.status,
    collection_date: row.collection_date,
    processed_date: optionalTimestamp(row.processed_at),
    reference: row.reference,
    account_holder_name: row.account_holder_name,
    frequency: row.frequency,
    next_collection_date: row.next_collection_date,
    created_at: formatTimestamp(row.created_at),
  }
}
