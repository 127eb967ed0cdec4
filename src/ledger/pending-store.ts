import type { LedgerExecutor, TxPaymentType, TxType } from './ledger-tables.ts'
import type { TransactionRow } from './ledger-store.ts'

// One of the ledger's read functions (beside ledger-store.ts): the rows still Pending across
// every account, for the operators' list of pending payments (transfers/pending-payments.ts
// formats them for the wire). Pending rows are few beside the ledger (they wait for a
// clearing cycle, a rail or a card clearing), and the partial index `transactions_pending`
// holds exactly them, so a page reads that index and sorts what it found, never the ledger.

export interface PendingFilter {
  partnerId?: string | undefined
  accountId?: string | undefined
  paymentType?: TxPaymentType | undefined
  /** The kinds listed: at least one. */
  txTypes: readonly TxType[]
}

/** Where the previous page ended: its last row's time and id. */
export interface PendingPosition {
  at: Date
  id: string
}

/**
 * Pending rows newest first (created_at, then id, both descending), after `before` when
 * given; `limit + 1` rows at most, the extra one saying that another page follows.
 */
export async function pendingTransactionPage(
  db: LedgerExecutor,
  filter: PendingFilter,
  limit: number,
  before?: PendingPosition,
): Promise<TransactionRow[]> {
  let query = db
    .selectFrom('transactions')
    .selectAll()
    .where('status', '=', 'Pending')
    .where('tx_type', 'in', filter.txTypes)
  if (filter.partnerId) query = query.where('partner_id', '=', filter.partnerId)
  if (filter.accountId) query = query.where('account_id', '=', filter.accountId)
  if (filter.paymentType) query = query.where('tx_payment_type', '=', filter.paymentType)
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.at, before.id)),
    )
  }
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute()
}
