import type { Kysely } from 'kysely'
import type { AccountService } from '../accounts/account-service.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { LedgerExecutor } from '../ledger/ledger-tables.ts'
import { Invalid, NotFound } from '../errors.ts'
import { transaction_page_limit_default, transaction_unpaged_rows, type TransactionView } from './transfer-contract.ts'
import { cents, centsText } from '../ledger/cents.ts'
import { hashAt, statementPage, transactionOf, type TransactionRow } from '../ledger/ledger-store.ts'
import { rowHashHolds } from '../ledger/tx-chain.ts'
import { decodeSeqCursor, encodeSeqCursor, invalid_cursor_message } from '../contract/cursor.ts'
import { listPendingPayments, type PendingRequest } from './pending-payments.ts'

// Reading transactions: newest first by the account's sequence, keyset-paged on the
// (account_id, seq) unique index so a page costs the same on an account with a million
// rows as on one with ten. `verified` checks each row's link of the hash chain on read:
// its hash recomputed from its fields and its predecessor's hash.
//
// It lives in transfers/, not ledger/: it answers `transfers.list` and `getTransaction`
// (and the operator's `ops.account.transactions`) in the wire's shape, whose schema,
// page limits and cursor are transfer-contract.ts's. The ledger only reads the rows
// (ledger-store.ts) and checks their chain (tx-chain.ts); it formats nothing for the wire.

export interface TransactionListOptions {
  limit?: number | undefined
  cursor?: string | undefined
  /** Only rows whose acting user is one of these; empty means every row. */
  userIds?: readonly string[] | undefined
}

export interface TransactionPage {
  body: { account_id: string; transactions: TransactionView[]; next_cursor?: string }
  /** The cursor to the rows after this page, whether or not the body carries it. */
  nextCursor: string | undefined
}

export class TransactionService {
  constructor(
    private readonly db: LedgerExecutor,
    private readonly accounts: AccountService,
  ) {}

  /**
   * A page of an account's transactions. A request that names `limit` or `cursor` is paged
   * (limit default 100) and gets `next_cursor` in the body while more rows follow; one that
   * names neither (as the reference client sends) gets the newest 1000 and no such key.
   * Either way the cursor to more rows is returned apart, for the reply header.
   */
  async list(partnerId: string, accountId: string,
      options: TransactionListOptions = {}): Promise<TransactionPage> {
    await this.accounts.get(partnerId, accountId)
    const paged = options.limit !== undefined || options.cursor !== undefined
    const limit = options.limit ?? (paged ? transaction_page_limit_default
      : transaction_unpaged_rows)
    const before = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
    const userIds = options.userIds ?? []
    // One row more than the page: it tells whether another page follows and links the last row.
    const rows = await statementPage(this.db, accountId, limit, before, userIds)
    const page = rows.slice(0, limit)
    // Unfiltered, consecutive rows are neighbours in the hash chain, so each row's link to
    // its predecessor is checked too; filtered, only each row's own hash is.
    const previousSha = (row: TransactionRow, i: number) =>
      cents(row.seq) === 1n ? '' : userIds.length > 0 ? undefined : rows[i + 1]?.tx_sha
    const transactions = page.map((row, i) => toView(row, previousSha(row, i)))
    const last = page.at(-1)
    const nextCursor = rows.length > limit && last ? encodeCursor(cents(last.seq)) : undefined
    const body = { account_id: accountId, transactions,
      ...(paged && nextCursor ? { next_cursor: nextCursor } : {}) }
    return { body, nextCursor }
  }

  async get(partnerId: string, txId: string): Promise<{ transaction: TransactionView }> {
    const row = await transactionOf(this.db, partnerId, txId)
    if (!row) throw new NotFound('transaction')
    const seq = cents(row.seq)
    // A missing predecessor is a broken chain: no stored hash equals this marker.
    const previousSha = seq > 1n ? ((await hashAt(this.db, row.account_id, seq - 1n))
      ?? '\u0000missing') : ''
    return { transaction: toView(row, previousSha) }
  }

  /** `ops.payment.pending`: payments still pending across partners and accounts. */
  pending(request: PendingRequest) {
    return listPendingPayments(this.db, request)
  }
}

/**
 * `previousSha` undefined means the predecessor was not read; the row's own link is still checked.
 */
function toView(row: TransactionRow, previousSha: string | undefined): TransactionView {
  const linkHolds = previousSha === undefined || previousSha === row.prev_sha
  const verified = linkHolds && rowHashHolds(row)
  return {
    tx_id: row.id,
    parent_tx_id: row.parent_tx_id ?? '',
    date: formatTimestamp(row.created_at),
    amount: centsText(row.amount),
    ref: row.ref,
    status: row.status,
    tx_sha: row.tx_sha,
    user_id: row.user_id,
    added_by: row.added_by,
    tx_type: row.tx_type,
    tx_payment_type: row.tx_payment_type,
    fee: centsText(row.fee),
    recipient_name: row.recipient_name,
    credit: centsText(row.credit),
    debit: centsText(row.debit),
    running_balance: centsText(row.running_balance),
    verified,
  }
}

function encodeCursor(seq: bigint): string {
  return encodeSeqCursor('s', seq)
}

function decodeCursor(cursor: string): bigint {
  const seq = decodeSeqCursor('s', cursor)
  if (seq === undefined) throw Invalid.field('cursor', invalid_cursor_message)
  return seq
}
