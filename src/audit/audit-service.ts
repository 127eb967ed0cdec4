import { sql, type Kysely } from 'kysely'
import { decodeSeqCursor, invalid_cursor_message, seqPage } from '../contract/cursor.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import { Invalid } from '../errors.ts'

const cursor_tag = 'a'

export interface AuditQuery {
  subject_id?: string | undefined
  actor?: string | undefined
  target?: string | undefined
  action?: string | undefined
  from?: string | undefined
  to?: string | undefined
  limit: number
  cursor?: string | undefined
}

/** `bank audit list`: the trail, newest first, filtered and paged by keyset. */
export async function listAudit(db: Kysely<Database>, request: AuditQuery) {
  let query = db.selectFrom('audit_log').selectAll().orderBy('seq', 'desc').limit(request.limit + 1)
  if (request.subject_id) query = query.where('subject_id', '=', request.subject_id)
  if (request.actor) query = query.where('actor', '=', request.actor)
  if (request.action) query = query.where('action', '=', request.action)
  if (request.target) query = query.where(sql<boolean>`targets @> ${JSON.stringify([request.target])}::jsonb`)
  if (request.from) query = query.where('at', '>=', new Date(instant(request.from, 'from')))
  if (request.to) query = query.where('at', '<', new Date(instant(request.to, 'to')))
  if (request.cursor) {
    const seq = decodeSeqCursor(cursor_tag, request.cursor)
    if (seq === undefined) throw Invalid.field('cursor', invalid_cursor_message)
    query = query.where('seq', '<', String(seq))
  }
  const { page, next_cursor } = seqPage(await query.execute(), request.limit, cursor_tag,
    (row) => row.seq)
  return {
    entries: page.map((row) => ({
      audit_id: row.id,
      at: formatTimestamp(new Date(row.at)),
      action: row.action,
      actor: row.actor,
      actor_name: row.actor_name,
      subject_id: row.subject_id,
      targets: row.targets,
      details: row.details,
      result: row.result,
    })),
    ...(next_cursor ? { next_cursor } : {}),
  }
}

/** A plain date is that day's start in SAST, the bank's business day; a timestamp is itself. */
function instant(value: string, field: string): string {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00+02:00`) : new Date(value)
  if (Number.isNaN(at.getTime())) throw Invalid.field(field, 'is not a real date')
  return at.toISOString()
}
