import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import { unnestRows } from '../db/speed/arrays.ts'
import type { Database } from '../schema.ts'
import type { RailMessagesTable, RailRefusalsTable, RailSubmissionsTable } from './rail-tables.ts'

// The SQL of the ISO 20022 rail's own tables (rail-tables.ts); nothing else writes them.

type Db = Kysely<Database>
type Submission = Selectable<RailSubmissionsTable>

/** The most submissions read at once when a message's file is written. */
const submissions_page = 1000

/** Records an outbound message and its payouts (in the caller's transaction). */
export async function insertOutbound(
  trx: Db,
  message: Omit<Insertable<RailMessagesTable>, 'direction' | 'sha256'>,
  submissions: Array<Insertable<RailSubmissionsTable>>,
): Promise<void> {
  await trx.insertInto('rail_messages').values({ ...message, direction: 'out' }).execute()
  for (let start = 0; start < submissions.length; start += submissions_page) {
    await trx.insertInto('rail_submissions')
      .values(submissions.slice(start, start + submissions_page)).execute()
  }
}

export function outboundMessage(db: Db, messageId: string) {
  return db.selectFrom('rail_messages').selectAll().where('direction', '=', 'out')
    .where('message_id', '=', messageId).executeTakeFirst()
}

/** A message's payouts in its order, a page at a time (keyset on its position). */
export async function* submissionsOf(db: Db, messageId: string): AsyncGenerator<Submission[]> {
  let after = -1
  for (;;) {
    const page = await db.selectFrom('rail_submissions').selectAll()
      .where('message_id', '=', messageId).where('position', '>', after)
      .orderBy('position').limit(submissions_page).execute()
    if (page.length === 0) return
    yield page
    after = page.at(-1)!.position
  }
}

export async function markWritten(db: Db, messageId: string, at: Date): Promise<void> {
  await db.updateTable('rail_messages').set({ written_at: at }).where('direction', '=', 'out')
    .where('message_id', '=', messageId).execute()
}

/** The outbound messages recorded whose file was never written whole, oldest first. */
export async function unwrittenMessages(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('rail_messages').select('message_id')
    .where('direction', '=', 'out').where('written_at', 'is', null)
    .orderBy('created_at').execute()
  return rows.map((row) => row.message_id)
}

/** A payout's submission, if it was sent. */
export function submissionOf(db: Db, txId: string): Promise<Submission | undefined> {
  return db.selectFrom('rail_submissions').selectAll().where('tx_id', '=', txId)
    .executeTakeFirst()
}

export async function submittedTxIds(db: Db, txIds: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>()
  for (let start = 0; start < txIds.length; start += submissions_page) {
    const rows = await db.selectFrom('rail_submissions').select('tx_id')
      .where('tx_id', 'in', txIds.slice(start, start + submissions_page)).execute()
    for (const row of rows) found.add(row.tx_id)
  }
  return found
}

export async function submissionsByEndToEnd(db: Db,
    endToEndIds: readonly string[]): Promise<Map<string, Submission>> {
  const found = new Map<string, Submission>()
  const unique = [...new Set(endToEndIds)]
  for (let start = 0; start < unique.length; start += submissions_page) {
    const rows = await db.selectFrom('rail_submissions').selectAll()
      .where('end_to_end_id', 'in', unique.slice(start, start + submissions_page)).execute()
    for (const row of rows) found.set(row.end_to_end_id, row)
  }
  return found
}

/** The SHA-256 of the inbound message applied under this id, if one was. */
export async function inboundApplied(db: Db, messageId: string): Promise<string | undefined> {
  const row = await db.selectFrom('rail_messages').select('sha256')
    .where('direction', '=', 'in').where('message_id', '=', messageId).executeTakeFirst()
  return row === undefined ? undefined : (row.sha256 ?? '')
}

/** Records an inbound message applied; false when it was recorded before. */
export async function insertInbound(trx: Db, message: {
  message_id: string; kind: string; file_name: string; transaction_count: number
  created_at: Date; sha256: string
}): Promise<boolean> {
  const result = await trx.insertInto('rail_messages')
    .values({ ...message, direction: 'in', control_sum: 0, payment_type: null,
      settlement_date: null, written_at: null })
    .onConflict((oc) => oc.columns(['direction', 'message_id']).doNothing())
    .returning('message_id')
    .executeTakeFirst()
  return result !== undefined
}

/** The statuses a report gave, on the payouts not answered before. */
export async function answerSubmissions(trx: Db, statuses: ReadonlyArray<{ tx_id: string;
    status: string; reason_code: string | null }>, at: Date): Promise<void> {
  for (let start = 0; start < statuses.length; start += submissions_page) {
    const page = statuses.slice(start, start + submissions_page)
    await sql`
      update rail_submissions as s
      set status = v.status, reason_code = v.reason_code, answered_at = ${at}
      from ${unnestRows(page.map((p) => ({ tx_id: p.tx_id, status: p.status,
        reason_code: p.reason_code })), [['tx_id', 'uuid'], ['status', 'text'],
        ['reason_code', 'text']])}
      where s.tx_id = v.tx_id
        and (s.status is null or s.status not in ('ACSC', 'ACCC', 'RJCT'))`.execute(trx)
  }
}

export async function returnSubmissions(trx: Db,
    returns: ReadonlyArray<{ tx_id: string; reason_code: string }>, at: Date): Promise<void> {
  for (let start = 0; start < returns.length; start += submissions_page) {
    const page = returns.slice(start, start + submissions_page)
    await sql`
      update rail_submissions as s set returned_reason_code = v.reason_code, returned_at = ${at}
      from ${unnestRows(page.map((r) => ({ tx_id: r.tx_id, reason_code: r.reason_code })),
        [['tx_id', 'uuid'], ['reason_code', 'text']])}
      where s.tx_id = v.tx_id and s.status in ('ACSC', 'ACCC')`.execute(trx)
  }
}

export async function recordRefusal(db: Db,
    refusal: Insertable<RailRefusalsTable>): Promise<void> {
  await db.insertInto('rail_refusals').values(refusal).execute()
}

/** The latest refusals, newest first (operators' view). */
export function refusals(db: Db, limit: number) {
  return db.selectFrom('rail_refusals').selectAll().orderBy('id', 'desc').limit(limit).execute()
}

