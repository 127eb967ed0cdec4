import { hash, randomInt, randomUUID } from 'node:crypto'
import { CompiledQuery, type Kysely } from 'kysely'
import type { RunQuery } from '../db/commit-hooks.ts'
import { arrayParameter, type PgType } from '../db/speed/arrays.ts'
import { assert } from '../errors.ts'
import type { Database } from '../schema.ts'
import type { AuditRow } from './audit-tables.ts'

// The audit trail is a hash chain, as each account's transactions are (`tx_sha`): every
// row's `sha` covers its fields and the previous row's `sha`, so editing, removing or
// reordering any row breaks every later link, and `ledger verify` recomputes the chain.
// The trail is `audit_chains` chains (as the ledger is one chain per account): each row
// is on one (`chain`), and each chain's head (a row of `audit_chain_head`) is locked by the
// transaction appending to it, so within a chain the order of `seq` is the order of the
// links, across instances. A transaction takes the first head no other holds (SKIP LOCKED),
// and waits only when every head is held: operator actions in concurrent transactions
// (a busy operator's script, card authorizations decided in parallel groups) then commit
// side by side instead of one behind another's commit, and a transaction that appends
// twice finds the head it holds. An append comes last in its transaction (operator actions
// write theirs just before the commit), so a head is held only for the moment of the commit.

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
    const field = (key: string) =>
      `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`
    return `{${keys.map(field).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** How many chains the trail has (the migration 0026_audit_chains makes their heads). */
export const audit_chains = 8

const freeHead = CompiledQuery.raw(
  'select id, sha from audit_chain_head order by id limit 1 for update skip locked',
  [],
)

/**
 * Locks a chain's head for the transaction: the first that no other transaction holds (its
 * own are never skipped), else, when all are held, a random one, waiting for it.
 */
async function lockHead(run: RunQuery): Promise<{ chain: number; prev: string }> {
  let head = (await run(freeHead)).rows[0] as { id: number; sha: string } | undefined
  if (!head) {
    const chain = randomInt(1, audit_chains + 1)
    const query = 'select id, sha from audit_chain_head where id = $1 for update'
    head = (await run(CompiledQuery.raw(query, [chain]))).rows[0] as typeof head
  }
  assert(head, 'every chain of the audit trail has its head')
  return { chain: Number(head.id), prev: head.sha }
}

/** Appends one row to a chain, over the connection of the transaction it belongs to. */
export async function appendAuditRow(run: RunQuery, entry: AuditEntry): Promise<void> {
  const { chain, prev } = await lockHead(run)
  const sha = auditSha(prev, entry)
  await run(
    CompiledQuery.raw(
      `with head as (update audit_chain_head set sha = $1 where id = $12)
       insert into audit_log
         (id, subject_id, action, actor, actor_name, targets, at, details, result, prev_sha, sha,
          chain)
       values ($2, $3, $4, $5, $6, $7::jsonb, $8::timestamptz, $9::jsonb, $10, $11, $1, $12)`,
      [
        sha,
        entry.id,
        entry.subjectId,
        entry.action,
        entry.actor,
        entry.actorName,
        JSON.stringify(entry.targets),
        entry.at.toISOString(),
        JSON.stringify(entry.details),
        entry.result,
        prev,
        chain,
      ],
    ),
  )
}

/**
 * Appends rows to the chain in their order, over the connection of the transaction they
 * belong to: one lock of the head and one statement for all of them (a group's members).
 */
export async function appendAuditRows(
  run: RunQuery,
  entries: readonly AuditEntry[],
): Promise<void> {
  if (entries.length <= 1) {
    if (entries[0]) await appendAuditRow(run, entries[0])
    return
  }
  const head = await lockHead(run)
  let prev = head.prev
  const prevs: string[] = []
  const shas: string[] = []
  for (const entry of entries) {
    prevs.push(prev)
    prev = auditSha(prev, entry)
    shas.push(prev)
  }
  await run(insertRows(head.chain, entries, prevs, shas))
}

/** The rows in one statement (one array per column, in order), the head moved to the last. */
function insertRows(
  chain: number,
  entries: readonly AuditEntry[],
  prevs: string[],
  shas: string[],
) {
  const column = <K extends keyof AuditEntry>(type: PgType, key: K, json = false) =>
    arrayParameter(
      type,
      entries.map((e) => (json ? JSON.stringify(e[key]) : e[key])),
    )
  return CompiledQuery.raw(
    `with head as (update audit_chain_head set sha = $1 where id = $13)
     insert into audit_log
       (id, subject_id, action, actor, actor_name, targets, at, details, result, prev_sha, sha,
        chain)
     select id, subject_id, action, actor, actor_name, targets::jsonb, at, details::jsonb,
            result, prev_sha, sha, $13
     from unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
                 $8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::text[])
       with ordinality as v(id, subject_id, action, actor, actor_name, targets, at, details,
                            result, prev_sha, sha, n)
     order by n`,
    [
      shas[shas.length - 1],
      column('uuid', 'id'),
      column('uuid', 'subjectId'),
      column('text', 'action'),
      column('text', 'actor'),
      column('text', 'actorName'),
      column('text', 'targets', true),
      column('timestamptz', 'at'),
      column('text', 'details', true),
      column('text', 'result'),
      arrayParameter('text', prevs),
      arrayParameter('text', shas),
      chain,
    ],
  )
}

/** Appends a row inside a Kysely transaction (a capability's own decision). */
export function appendAudit(
  executor: Kysely<Database>,
  entry: Omit<AuditEntry, 'id' | 'actorName' | 'targets' | 'result'> &
    Partial<Pick<AuditEntry, 'actorName' | 'targets' | 'result'>>,
): Promise<void> {
  return appendAuditRow((query) => executor.executeQuery(query), {
    id: randomUUID(),
    actorName: '',
    targets: entry.subjectId ? [entry.subjectId] : [],
    result: 'ok',
    ...entry,
  })
}

/** A stored row as the chain covers it. */
export function auditEntryOf(
  row: Omit<AuditRow, 'seq' | 'prev_sha' | 'sha' | 'chain'>,
): AuditEntry {
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
