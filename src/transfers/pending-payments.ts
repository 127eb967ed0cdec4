import type { z } from 'zod'
import { formatTimestamp } from '../contract/format.ts'
import {
  decodeTimeIdCursor,
  encodeTimeIdCursor,
  invalid_cursor_message,
} from '../contract/cursor.ts'
import { Invalid } from '../errors.ts'
import { centsText } from '../ledger/cents.ts'
import type { TransactionRow } from '../ledger/ledger-store.ts'
import type { LedgerExecutor } from '../ledger/ledger-tables.ts'
import { pendingTransactionPage } from '../ledger/pending-store.ts'
import {
  pending_payment_kinds,
  type pendingPaymentOperations,
  type PendingPaymentView,
} from './pending-payment-contract.ts'

// `ops.payment.pending`: the ledger's Pending rows across accounts (ledger/pending-store.ts
// reads them) in the wire's shape, keyset-paged newest first on (created_at, id). It lives
// in transfers/, as the account's transaction list does: the ledger formats nothing.

export type PendingRequest = z.output<typeof pendingPaymentOperations.pending.request>

/** The cursor's tag: a cursor of another list is refused. */
const cursor_tag = 'p'

export async function listPendingPayments(db: LedgerExecutor, request: PendingRequest) {
  const before = request.cursor === undefined ? undefined : decodeCursor(request.cursor)
  const filter = {
    partnerId: request.partner_id,
    accountId: request.account_id,
    paymentType: request.rail,
    txTypes: request.kind ? [request.kind] : pending_payment_kinds,
  }
  const rows = await pendingTransactionPage(db, filter, request.limit, before)
  const page = rows.slice(0, request.limit)
  const last = page.at(-1)
  const more = rows.length > request.limit && last !== undefined
  return {
    payments: page.map(toView),
    ...(more ? { next_cursor: encodeTimeIdCursor(cursor_tag, last.created_at, last.id) } : {}),
  }
}

function decodeCursor(cursor: string) {
  const position = decodeTimeIdCursor(cursor_tag, cursor)
  if (!position) throw Invalid.field('cursor', invalid_cursor_message)
  return position
}

function toView(row: TransactionRow): PendingPaymentView {
  return {
    tx_id: row.id,
    parent_tx_id: row.parent_tx_id,
    partner_id: row.partner_id,
    account_id: row.account_id,
    kind: row.tx_type as PendingPaymentView['kind'],
    rail: row.tx_payment_type,
    amount: centsText(row.amount),
    fee: centsText(row.fee),
    held: centsText(row.hold_amount),
    ref: row.ref,
    recipient_name: row.recipient_name,
    recipient_account: row.recipient_account,
    recipient_branch: row.recipient_branch,
    added_by: row.added_by,
    created_at: formatTimestamp(row.created_at),
  }
}
