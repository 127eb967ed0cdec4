import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { pacs008_message_name } from './iso20022/pacs008-write.ts'

// The SQL of what operators read of the rail (rails-ops.ts): the messages newest first, one
// message's payouts in order, the refusals newest first and the payouts still unanswered
// oldest first, each keyset-paged. A payout's final answers are ACSC, ACCC and RJCT; any
// other status (PDNG, ACSP…) is no answer yet, as the metrics count them. The predicate is
// written as index rail_submissions_open's (rail-ops-migration.ts), so that index serves it.

type Db = Kysely<Database>

/** Where a page of messages starts: after this message, newest first. */
export interface MessagePosition {
  at: Date
  direction: 'out' | 'in'
  message_id: string
}

export interface MessageFilter {
  direction?: 'out' | 'in' | undefined
  /** A kind's name (`pacs.008`, every version) or name and version (`pacs.008.001.09`). */
  kind?: string | undefined
  payment_type?: 'EFT' | 'RTC' | undefined
  tx_id?: string | undefined
}

/** The payouts of a message still without a final answer, counted through the partial index. */
const open_payouts = sql<string | number | bigint>`(select count(*) from rail_submissions s
  where s.message_id = m.message_id
    and (s.status is null or s.status not in ('ACSC', 'ACCC', 'RJCT')))`

/** Rows of `rail_messages` with `open` (a pacs.008 the bank sent; null for any other). */
function messagesQuery(db: Db) {
  return db.selectFrom('rail_messages as m').selectAll('m').select(sql<string | number | bigint
    | null>`case when m.direction = 'out' and m.kind = ${pacs008_message_name}
      then ${open_payouts} end`.as('open'))
}

export type MessageRow = Awaited<ReturnType<ReturnType<typeof messagesQuery>['execute']>>[number]

/** A page of messages newest first: `limit + 1` rows, so the caller knows whether more follow. */
export function messagePage(db: Db, filter: MessageFilter, limit: number,
    after: MessagePosition | undefined): Promise<MessageRow[]> {
  let query = messagesQuery(db)
  if (filter.direction) query = query.where('m.direction', '=', filter.direction)
  if (filter.kind) {
    query = /^\w+\.\d+$/.test(filter.kind)
      ? query.where('m.kind', 'like', `${filter.kind}.%`)
      : query.where('m.kind', '=', filter.kind)
  }
  if (filter.payment_type) query = query.where('m.payment_type', '=', filter.payment_type)
  if (filter.tx_id) {
    const carried = db.selectFrom('rail_submissions').select('message_id')
      .where('tx_id', '=', filter.tx_id)
    query = query.where('m.direction', '=', 'out').where('m.message_id', 'in', carried)
  }
  if (after) {
    query = query.where(sql<boolean>`(m.created_at, m.direction, m.message_id)
      < (${after.at}::timestamptz, ${after.direction}::text, ${after.message_id}::text)`)
  }
  return query.orderBy('m.created_at', 'desc').orderBy('m.direction', 'desc')
    .orderBy('m.message_id', 'desc').limit(limit + 1).execute()
}

/** The messages of this id (at most one each way), of one direction when given. */
export function messagesById(db: Db, messageId: string,
    direction: 'out' | 'in' | undefined): Promise<MessageRow[]> {
  let query = messagesQuery(db).where('m.message_id', '=', messageId)
  if (direction) query = query.where('m.direction', '=', direction)
  return query.orderBy('m.direction', 'desc').limit(2).execute()
}

/** A message's payouts from `position` on, in order: `limit + 1` rows. */
export function paymentPage(db: Db, messageId: string, position: number, limit: number) {
  return db.selectFrom('rail_submissions')
    .select(['tx_id', 'position', 'source', 'amount', 'status', 'reason_code', 'answered_at',
      'returned_reason_code'])
    .where('message_id', '=', messageId).where('position', '>=', position)
    .orderBy('position').limit(limit + 1).execute()
}

/** A page of refusals newest first, before the refusal `before` (its id) when given. */
export function refusalPage(db: Db, limit: number, before: bigint | undefined) {
  let query = db.selectFrom('rail_refusals').selectAll()
  if (before !== undefined) query = query.where('id', '<', before.toString())
  return query.orderBy('id', 'desc').limit(limit + 1).execute()
}

export interface UnansweredFilter {
  /** Sent at or before this time. */
  sentBy: Date
  partner_id?: string | undefined
  payment_type?: 'EFT' | 'RTC' | undefined
}

/** The payouts sent by `filter.sentBy` with no final answer, joined to their message and row. */
function unansweredQuery(db: Db, filter: UnansweredFilter) {
  let query = db.selectFrom('rail_submissions as s')
    .innerJoin('rail_messages as m', (join) => join.onRef('m.message_id', '=', 's.message_id')
      .on('m.direction', '=', 'out'))
    .leftJoin('transactions as t', 't.id', 's.tx_id')
    .where(sql<boolean>`(s.status is null or s.status not in ('ACSC', 'ACCC', 'RJCT'))`)
    .where('m.created_at', '<=', filter.sentBy)
  if (filter.partner_id) query = query.where('t.partner_id', '=', filter.partner_id)
  if (filter.payment_type) query = query.where('m.payment_type', '=', filter.payment_type)
  return query
}

/** A page of unanswered payouts oldest first, after (sent_at, tx_id) when given. */
export function unansweredPage(db: Db, filter: UnansweredFilter, limit: number,
    after: { at: Date; id: string } | undefined) {
  let query = unansweredQuery(db, filter)
    .select(['s.tx_id', 's.source', 's.amount', 's.debtor_account', 's.creditor_name',
      's.status', 's.message_id', 'm.file_name', 'm.payment_type', 'm.created_at',
      't.partner_id', 't.account_id'])
  if (after) {
    query = query.where(sql<boolean>`(m.created_at, s.tx_id)
      > (${after.at}::timestamptz, ${after.id}::uuid)`)
  }
  return query.orderBy('m.created_at').orderBy('s.tx_id').limit(limit + 1).execute()
}

/** How many payouts the filter matches, on every page. */
export async function unansweredCount(db: Db, filter: UnansweredFilter): Promise<number> {
  const row = await unansweredQuery(db, filter)
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}
