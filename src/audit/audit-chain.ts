import { hash, randomUUID } from 'node:crypto'
import { CompiledQuery, type Kysely } from 'kysely'
import type { RunQuery } from '../db/commit-hooks.ts'
import type { Database } from '../schema.ts'
import type { AuditRow } from './audit-tables.ts'

// The audit trail is a hash chain, as each account's transactions are (`tx_sha`): every
// row's `sha` covers its fields and the previous row's `sha`, so editing, removing or
// reordering any row breaks every later link, and `ledger verify` recomputes the chain.
// Rows are appended one at a time: the chain's head (one row, `audit_chain_head`) is
// locked by the appending transaction, so the order of `seq` is the order of the chain,
// across instances. An append comes last in its transaction (operator actions write theirs
// just before the commit), so the head is held only for the moment of the commit.

export interface AuditEntry {
  id: string
  at: Date
  /** The one subject of a capability's own row (a user, an entity, a document), if any. */
  subjectId: string | null
  action: string
  /** A credential id, or `system` for the bank's own work. */
  actor: string
  actorName: string
  targets: readonly string[]
  details: Record<string, unknown>
  /** `ok`, or the refusal (`403 forbidden: …`). */
  result: string
}

/** The fields as the chain covers them: fixed for ever, like `tx_sha`'s canonical form. */
export function auditCanonicalForm(prevSha: string, entry: AuditEntry): string {
  return JSON.stringify([
    prevSha,
    entry.id,
    entry.at.toISOString(),
    entry.subjectId ?? '',
    entry.action,
    entry.actor,
    entry.actorName,
    [...entry.targets],
    canonicalJson(entry.details),
    entry.result,
  ])
}

export function auditSha(prevSha: string, entry: AuditEntry): string {
  return hash('sha256', auditCanonicalForm(prevSha, entry), 'hex')
}

/** JSON with every object's keys in order: the same text for a value and its jsonb round trip. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

const lockHead = CompiledQuery.raw('select sha from audit_chain_head where id = 1 for update', [])

/** Appends one row to the chain, over the connection of the transaction it belongs to. */
export async function appendAuditRow(run: RunQuery, entry: AuditEntry): Promise<void> {
  const head = await run(lockHead)
  const prev = (head.rows[0] as { sha: string } | undefined)?.sha ?? ''
  const sha = auditSha(prev, entry)
  await run(
    CompiledQuery.raw(
      `with head as (update audit_chain_head set sha = $1 where id = 1)
       insert into audit_log (id, subject_id, action, actor, actor_name, targets, at, details, result, prev_sha, sha)
       values ($2, $3, $4, $5, $6, $7::jsonb, $8::timestamptz, $9::jsonb, $10, $11, $1)`,
      [sha, entry.id, entry.subjectId, entry.action, entry.actor, entry.actorName, JSON.stringify(entry.targets), entry.at.toISOString(), JSON.stringify(entry.details), entry.result, prev],
    ),
  )
}

/** Appends a row inside a Kysely transaction (a capability's own decision). */
export function appendAudit(
  executor: Kysely<Database>,
  entry: Omit<AuditEntry, 'id' | 'actorName' | 'targets' | 'result'> & Partial<Pick<AuditEntry, 'actorName' | 'targets' | 'result'>>,
): Promise<void> {
  return appendAuditRow((query) => executor.executeQuery(query), {
    id: randomUUID(),
    actorName: '',
    targets: entry.subjectId ? [entry.subjectId] : [],
    result: 'ok',
    ...entry,
  })
}

export interface AuditChainReport {
  rows: number
  problems: Array<{ audit_id: string; message: string }>
}

const page_rows = 5000

/** A stored row as the chain covers it. */
export function auditEntryOf(row: Omit<AuditRow, 'seq' | 'prev_sha' | 'sha'>): AuditEntry {
  return {
    id: row.id,
    at: new Date(row.at),
    subjectId: row.subject_id,
    action: row.action,
    actor: row.actor,
    actorName: row.actor_name,
    targets: row.targets,
    details: row.details,
    result: row.result,
  }
}

/** Walks the whole chain: every row's hash, every link, and the head at its end. */
export async function verifyAuditChain(db: Kysely<Database>, problemsMax: number): Promise<AuditChainReport> {
  const problems: AuditChainReport['problems'] = []
  let prev = ''
  let rows = 0
  for (let after = '0'; ; ) {
    const page = await db.selectFrom('audit_log').selectAll().where('seq', '>', after).orderBy('seq').limit(page_rows).execute()
    for (const row of page) {
      rows++
      const entry = auditEntryOf(row)
      if (row.prev_sha !== prev && problems.length < problemsMax) {
        problems.push({ audit_id: row.id, message: 'does not follow the row before it in the audit chain (a row was removed or reordered)' })
      }
      if (auditSha(row.prev_sha, entry) !== row.sha && problems.length < problemsMax) {
        problems.push({ audit_id: row.id, message: 'its hash does not match its fields (the row was changed)' })
      }
      prev = row.sha
    }
    if (page.length < page_rows) break
    after = String(page[page.length - 1]!.seq)
  }
  const head = await db.selectFrom('audit_chain_head').select('sha').where('id', '=', 1).executeTakeFirst()
  if ((head?.sha ?? '') !== prev && problems.length < problemsMax) {
    problems.push({ audit_id: '', message: 'the chain ends before its recorded head (rows were removed from its end)' })
  }
  return { rows, problems }
}
