import type { Kysely, Selectable } from 'kysely'
import type { LedgerExecutor, TransactionsTable, TxPaymentType, TxStatus } from './ledger-tables.ts'
import type { PendingPayout, ReturnedPayout } from './payment-journals.ts'
import { cents } from './cents.ts'

// The ledger's read functions: every read of `transactions` outside the ledger's own
// writer goes through here, so the ledger alone knows how its rows are stored. Writes stay
// in ledger-batch.ts. Each function takes the executor to run on, so a caller can read
// inside its own database transaction (under the account locks LedgerBatch.open took).

export type TransactionRow = Selectable<TransactionsTable>

type Executor = LedgerExecutor

/** What a rail is told of a payout (rails/rail.ts RailPayment has this shape). */
export interface PayoutInstruction {
  tx_id: string
  payment_type: 'EFT' | 'RTC'
  amount: bigint
  account_number: string
  branch_code: string
  name: string
  ref: string
}

/** A payout waiting for its rail, with what the rail is to be told. */
export interface PendingPayoutWork {
  payout: PendingPayout
  payment: PayoutInstruction
  /** When it was taken (its place in the pending queue). */
  created_at: Date
}

/**
 * Payouts of one payment type still `Pending` and taken at or before `takenBefore`,
 * oldest first, at most `limit`, after the payout `after` names when given (its taken time
 * and id: a clearing run pages past those it already sent): the EFTs a clearing cycle
 * submits, or the RTCs that lost their settle step. A payout taken by an earlier version
 * carries the id of its Pending fee row, settled with it; since, the fee's row is written
 * when the payout settles.
 */
export async function pendingPayouts(
  db: Executor,
  paymentType: 'EFT' | 'RTC',
  takenBefore: Date,
  limit: number,
  after?: PayoutCursor,
  partnerId?: string,
): Promise<PendingPayoutWork[]> {
  let query = payoutQuery(db)
    .where('t.status', '=', 'Pending')
    .where('t.tx_payment_type', '=', paymentType)
    .where('t.created_at', '<=', takenBefore)
  // A partner's own clearing cycle (its sandbox clock's): its payouts only.
  if (partnerId !== undefined) query = query.where('t.partner_id', '=', partnerId)
  if (after) {
    query = query.where((eb) => eb.or([eb('t.created_at', '>', after.created_at),
      eb.and([eb('t.created_at', '=', after.created_at), eb('t.id', '>', after.tx_id)])]))
  }
  const rows = await query.orderBy('t.created_at').orderBy('t.id').limit(limit).execute()
  return rows.map(payoutWork)
}

/** Where a page of pending payouts ended: its last payout's taken time and id. */
export interface PayoutCursor {
  created_at: Date
  tx_id: string
}

/**
 * The named payouts still `Pending` (a status report's payments), any payment type, oldest
 * first (they settle in the order they were taken, as a cycle sends them).
 */
export async function pendingPayoutsByIds(db: Executor,
    txIds: readonly string[]): Promise<PendingPayoutWork[]> {
  if (txIds.length === 0) return []
  const rows = await payoutQuery(db).where('t.status', '=', 'Pending')
    .where('t.id', 'in', txIds).orderBy('t.created_at').orderBy('t.id').execute()
  return rows.map(payoutWork)
}

function payoutQuery(db: Executor) {
  return db
    .selectFrom('transactions as t')
    .leftJoin('transactions as f', (join) => join.onRef('f.parent_tx_id', '=', 't.id').on(
      'f.tx_type', '=', 'fee'))
    .select([
      't.id', 't.account_id', 't.amount', 't.fee', 't.hold_amount', 't.ref',
      't.recipient_account', 't.recipient_branch', 't.recipient_name', 't.added_by',
      't.tx_payment_type', 't.created_at', 'f.id as fee_tx_id',
    ])
    .where('t.tx_type', '=', 'transfer')
}

type PayoutQueryRow = Awaited<ReturnType<ReturnType<typeof payoutQuery>['execute']>>[number]

function payoutWork(row: PayoutQueryRow): PendingPayoutWork {
  const paymentType = row.tx_payment_type as 'EFT' | 'RTC'
  const payout: PendingPayout = {
    tx_id: row.id,
    fee_tx_id: row.fee_tx_id,
    account_id: row.account_id,
    added_by: row.added_by,
    payment_type: paymentType,
    amount: cents(row.amount),
    fee: cents(row.fee),
    hold_amount: cents(row.hold_amount),
  }
  const payment: PayoutInstruction = {
    tx_id: row.id,
    payment_type: paymentType,
    amount: payout.amount,
    account_number: row.recipient_account,
    branch_code: row.recipient_branch,
    name: row.recipient_name,
    ref: row.ref,
  }
  return { payout, payment, created_at: new Date(row.created_at) }
}

/**
 * The status and hold of each named transaction, by id; ids without a row are absent.
 * Every status change happens under the account lock, so read inside a transaction that
 * holds the accounts' locks (LedgerBatch.open) the answer is final until it commits.
 */
export async function statusesUnderLock(
  trx: Executor,
  txIds: readonly string[],
): Promise<Map<string, { status: TxStatus; hold_amount: bigint; amount: bigint;
    account_id: string }>> {
  if (txIds.length === 0) return new Map()
  const rows = await trx
    .selectFrom('transactions')
    .select(['id', 'status', 'hold_amount', 'amount', 'account_id'])
    .where('id', 'in', txIds)
    .execute()
  const found = (row: (typeof rows)[number]) => ({
    status: row.status,
    hold_amount: cents(row.hold_amount),
    amount: cents(row.amount),
    account_id: row.account_id,
  })
  return new Map(rows.map((row) => [row.id, found(row)]))
}

/** A settled payout as a return from its rail needs it: what to reverse and whom to credit. */
export type PayoutToReverse = ReturnedPayout

/** The payouts named by a rail's returns (any status; the caller re-checks under lock). */
export async function payoutsByIds(db: Executor,
    txIds: readonly string[]): Promise<PayoutToReverse[]> {
  if (txIds.length === 0) return []
  const rows = await db
    .selectFrom('transactions')
    .select(['id', 'account_id', 'amount', 'tx_payment_type', 'ref', 'recipient_name'])
    .where('id', 'in', txIds)
    .execute()
  return rows.map((row) => ({
    tx_id: row.id,
    account_id: row.account_id,
    amount: cents(row.amount),
    payment_type: row.tx_payment_type as Extract<TxPaymentType, 'EFT' | 'RTC'>,
    ref: row.ref,
    recipient_name: row.recipient_name,
  }))
}

/**
 * One page of an account's statement, newest first by its sequence, starting below
 * `beforeSeq` when given. It returns `limit + 1` rows at most: the extra row tells that
 * another page follows and carries the hash the page's oldest row links to. Keyset paging
 * on the (account_id, seq) unique index costs the same on any account size.
 */
export async function statementPage(
  db: Executor,
  accountId: string,
  limit: number,
  beforeSeq: bigint | undefined,
  userIds?: readonly string[],
): Promise<TransactionRow[]> {
  let query = db.selectFrom('transactions').selectAll().where('account_id', '=', accountId)
  if (beforeSeq !== undefined) query = query.where('seq', '<', beforeSeq.toString())
  if (userIds && userIds.length > 0) query = query.where('user_id', 'in', userIds)
  return query.orderBy('seq', 'desc').limit(limit + 1).execute()
}

/** The partner's transaction by id, or undefined whether missing or another partner's. */
export async function transactionOf(db: Executor, partnerId: string,
    txId: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('transactions').selectAll().where('id', '=', txId).where('partner_id', '=',
    partnerId).executeTakeFirst()
}

/** The `tx_sha` of an account's row at `seq`, or undefined when there is none. */
export async function hashAt(db: Executor, accountId: string, seq: bigint): Promise<string
    | undefined> {
  const row = await db
    .selectFrom('transactions')
    .select('tx_sha')
    .where('account_id', '=', accountId)
    .where('seq', '=', seq.toString())
    .executeTakeFirst()
  return row?.tx_sha
}

// Reads behind `ledger verify`: sums over postings and the accounts' chain heads.

/** The sum of postings, of one customer account when `accountId` is given, else of all. */
export async function postingsTotal(db: Executor, accountId?: string): Promise<bigint> {
  let query = db.selectFrom('postings').select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount'),
    eb.lit(0)).as('t'))
  if (accountId !== undefined) query = query.where('account_id', '=', accountId)
  return cents((await query.executeTakeFirstOrThrow()).t)
}

export interface AccountLedgerHead {
  id: string
  balance: bigint
  held: bigint
  /** What its active legal holds hold (legal-holds.ts): part of `held`. */
  legal_held: bigint
  last_seq: bigint
  last_sha: string
}

/** Every customer account's balance, hold and chain head, by id. */
export async function accountHeads(db: Executor): Promise<AccountLedgerHead[]> {
  const rows = await db.selectFrom('accounts as a').select((eb) => ['a.id', 'a.balance',
    'a.held', 'a.last_seq', 'a.last_sha',
    eb.selectFrom('legal_holds as h').select((h) => h.fn.sum<string>('h.amount').as('s'))
      .whereRef('h.account_id', '=', 'a.id').where('h.released_at', 'is', null)
      .as('legal_held')]).orderBy('a.id').execute()
  return rows.map((row) => ({
    id: row.id,
    balance: cents(row.balance),
    held: cents(row.held),
    legal_held: cents(row.legal_held ?? 0),
    last_seq: cents(row.last_seq),
    last_sha: row.last_sha,
  }))
}

