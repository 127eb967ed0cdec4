import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { DocumentView, SubmissionView } from './kyc-contract.ts'
import type { FrozenDocument } from './document-files.ts'
import type { KybDirectorTable, KycDocumentTable, KycSubmissionTable } from './kyc-migration.ts'

// The SQL of the KYC/KYB tables, which this capability owns. Each function takes the
// executor to run on, so a caller writes in its own database transaction.

type Executor = Kysely<Database>
export type SubmissionRow = Selectable<KycSubmissionTable>
export type DocumentRow = Omit<Selectable<KycDocumentTable>, 'content'>
export type DirectorRow = Selectable<KybDirectorTable>

/** Every column of a document but its bytes. */
const documentColumns = [
  'id', 'submission_id', 'position', 'partner_id', 'owner_id', 'director_id', 'doc_type', 'name',
    'original_filename', 'content_type',
  'size', 'sha256', 'decision', 'rejection_reason', 'submitted_at', 'deleted_at',
] as const

/**
 * The owner's latest submission (any state), or undefined; `lock` holds it to the transaction's
 * end.
 */
export async function latestSubmission(executor: Executor, ownerId: string,
    lock = false): Promise<SubmissionRow | undefined> {
  let query = executor.selectFrom('kyc_submissions').selectAll().where('owner_id', '=', ownerId)
    .orderBy('seq', 'desc').limit(1)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/**
 * Records a new submission with its documents and supersedes the owner's earlier pending
 * or rejected one. The caller holds the owner's row locked.
 */
export async function insertSubmission(
  executor: Executor,
  submission: { partnerId: string; ownerKind: 'user' | 'entity'; ownerId: string;
    submittedBy: string; at: Date },
  documents: FrozenDocument[],
): Promise<{ submissionId: string; documentIds: string[] }> {
  await executor
    .updateTable('kyc_submissions')
    .set({ state: 'superseded', superseded_at: submission.at })
    .where('owner_id', '=', submission.ownerId)
    .where('state', 'in', ['pending', 'rejected'])
    .execute()
  const submissionId = randomUUID()
  await executor
    .insertInto('kyc_submissions')
    .values({
      id: submissionId,
      partner_id: submission.partnerId,
      owner_kind: submission.ownerKind,
      owner_id: submission.ownerId,
      state: 'pending',
      submitted_at: submission.at,
      submitted_by: submission.submittedBy,
    })
    .execute()
  const documentIds = documents.map(() => randomUUID())
  // One insert per document: a document may be 10 MB, and one statement of many would be one huge
  // message.
  for (const [i, d] of documents.entries()) {
    await executor
      .insertInto('kyc_documents')
      .values({
        id: documentIds[i]!,
        submission_id: submissionId,
        position: i,
        partner_id: submission.partnerId,
        owner_id: submission.ownerId,
        director_id: d.directorId,
        doc_type: d.docType,
        name: d.name,
        original_filename: d.originalFilename,
        content_type: d.contentType,
        size: d.bytes.length,
        sha256: d.sha256,
        content: d.bytes,
        submitted_at: submission.at,
      })
      .execute()
  }
  return { submissionId, documentIds }
}

export async function decideSubmission(
  executor: Executor,
  submissionId: string,
  decision: { state: 'approved' | 'rejected'; reason: string | null; by: string; at: Date },
): Promise<void> {
  await executor
    .updateTable('kyc_submissions')
    .set({ state: decision.state, rejection_reason: decision.reason, decided_by: decision.by,
      decided_at: decision.at })
    .where('id', '=', submissionId)
    .execute()
}

export async function documentsOf(executor: Executor,
    submissionId: string): Promise<DocumentRow[]> {
  return executor.selectFrom('kyc_documents').select(documentColumns).where('submission_id', '=',
    submissionId).orderBy('position').execute()
}

export async function documentRow(executor: Executor,
    documentId: string): Promise<DocumentRow | undefined> {
  return executor.selectFrom('kyc_documents').select(documentColumns).where('id', '=', documentId)
    .executeTakeFirst()
}

/**
 * Up to `length` bytes of a document from `offset` (empty past its end), or null once retention
 * deleted them.
 */
export async function documentBytes(executor: Executor, documentId: string, offset: number,
    length: number): Promise<Uint8Array | null> {
  // substring on bytea is 1-based; only the asked part leaves the database.
  const row = await executor
    .selectFrom('kyc_documents')
    .select(sql<Uint8Array | null>`substring(content from ${offset + 1} for ${length})`.as('part'))
    .where('id', '=', documentId)
    .executeTakeFirst()
  return row?.part ?? null
}

export async function decideDocument(executor: Executor, documentId: string,
    decision: 'approved' | 'rejected', reason: string | null): Promise<void> {
  await executor.updateTable('kyc_documents').set({ decision, rejection_reason: reason }).where(
    'id', '=', documentId).execute()
}

/** Marks every undecided document of a submission approved. */
export async function approveUndecided(executor: Executor, submissionId: string): Promise<void> {
  await executor.updateTable('kyc_documents').set({ decision: 'approved' }).where('submission_id',
    '=', submissionId).where('decision', 'is', null).execute()
}

/** Submissions of one kind in one state, oldest first, with their document counts. */
export async function submissionsIn(
  executor: Executor,
  ownerKind: 'user' | 'entity',
  state: SubmissionRow['state'],
  partnerId: string | undefined,
  limit: number,
): Promise<Array<SubmissionRow & { documents: number }>> {
  let query = executor
    .selectFrom('kyc_submissions as s')
    .selectAll('s')
    .select((eb) => eb.selectFrom('kyc_documents as d').select(eb.fn.countAll<string>().as('n'))
      .whereRef('d.submission_id', '=', 's.id').as('documents'))
    .where('s.owner_kind', '=', ownerKind)
    .where('s.state', '=', state)
  if (partnerId) query = query.where('s.partner_id', '=', partnerId)
  const rows = await query.orderBy('s.seq').limit(limit).execute()
  return rows.map((row) => ({ ...row, documents: Number(row.documents ?? 0) }))
}

// --- Retention

/**
 * Deletes the bytes of documents whose submission was rejected or superseded before
 * `before` (their metadata and hash stay, for the audit trail). Resolves with their ids.
 */
export async function deleteExpiredContent(executor: Executor, before: Date, now: Date,
    limit: number): Promise<string[]> {
  const rows = await executor
    .updateTable('kyc_documents')
    .set({ content: null, deleted_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('kyc_documents as d')
        .innerJoin('kyc_submissions as s', 's.id', 'd.submission_id')
        .select('d.id')
        .where('d.deleted_at', 'is', null)
        .where((w) =>
          w.or([
            w.and([w('s.state', '=', 'rejected'), w('s.decided_at', '<', before)]),
            // A superseded submission left review when its successor came: its period runs from
            // then.
            w.and([w('s.state', '=', 'superseded'), w('s.superseded_at', '<', before)]),
          ]),
        )
        .limit(limit),
    )
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

// --- KYB profiles and directors

export async function kybMetadataOf(executor: Executor, entityId: string): Promise<Record<string,
    unknown>> {
  const row = await executor.selectFrom('kyb_profiles').select('metadata').where('entity_id', '=',
    entityId).executeTakeFirst()
  return (row?.metadata as Record<string, unknown> | undefined) ?? {}
}

export async function setKybMetadata(executor: Executor, entityId: string, partnerId: string,
    metadata: Record<string, unknown>, at: Date): Promise<void> {
  await executor
    .insertInto('kyb_profiles')
    .values({ entity_id: entityId, partner_id: partnerId, metadata: JSON.stringify(metadata),
      updated_at: at })
    .onConflict((oc) => oc.column('entity_id').doUpdateSet({ metadata: JSON.stringify(metadata),
      updated_at: at }))
    .execute()
}

export async function directorsOf(executor: Executor, entityId: string): Promise<DirectorRow[]> {
  return executor.selectFrom('kyb_directors').selectAll().where('entity_id', '=', entityId).orderBy(
    'position').execute()
}

/** Records the registry's directors once (a second caller's rows are kept, not doubled). */
export async function insertDirectors(
  executor: Executor,
  entityId: string,
  directors: Array<{ id: string; name: string; id_type: string }>,
  at: Date,
): Promise<void> {
  if (directors.length === 0) return
  await executor
    .insertInto('kyb_directors')
    .values(
      directors.map((d, position) => ({
        entity_id: entityId,
        director_id: d.id,
        position,
        name: d.name,
        id_type: d.id_type,
        metadata: '{}',
        created_at: at,
        updated_at: at,
      })),
    )
    .onConflict((oc) => oc.columns(['entity_id', 'director_id']).doNothing())
    .execute()
}

export async function updateDirector(
  executor: Executor,
  entityId: string,
  directorId: string,
  changes: { full_name?: string; email?: string; metadata?: Record<string,
    unknown>; approved?: boolean; verified?: boolean; verification_sent?: boolean },
  at: Date,
): Promise<boolean> {
  const { metadata, ...rest } = changes
  const result = await executor
    .updateTable('kyb_directors')
    .set({ ...rest, ...(metadata ? { metadata: JSON.stringify(metadata) } : {}), updated_at: at })
    .where('entity_id', '=', entityId)
    .where('director_id', '=', directorId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

// --- Audit trail: the chain's writer (audit/audit-chain.ts)

export { appendAudit } from '../audit/audit-chain.ts'

// --- Views

export function documentViewOf(row: DocumentRow): DocumentView {
  return {
    document_id: row.id,
    name: row.name,
    doc_type: row.doc_type,
    director_id: row.director_id,
    original_filename: row.original_filename,
    content_type: row.content_type,
    size: row.size,
    sha256: row.sha256,
    decision: row.decision,
    rejection_reason: row.rejection_reason,
    submitted_at: formatTimestamp(row.submitted_at),
    deleted_at: row.deleted_at ? formatTimestamp(row.deleted_at) : null,
  }
}

export function submissionViewOf(row: SubmissionRow): SubmissionView {
  return {
    submission_id: row.id,
    state: row.state,
    submitted_at: formatTimestamp(row.submitted_at),
    submitted_by: row.submitted_by,
    decided_at: row.decided_at ? formatTimestamp(row.decided_at) : null,
    decided_by: row.decided_by,
    rejection_reason: row.rejection_reason,
  }
}
