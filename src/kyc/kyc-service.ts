import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { RequestOf } from '../contract/operation.ts'
import type { Database } from '../schema.ts'
import { Conflict, Invalid, InvalidState, NotFound, type FieldIssue } from '../errors.ts'
import { appendEvent } from '../events/event-outbox.ts'
import type { PartnerService } from '../partners/partner-service.ts'
import type { UserService } from '../users/user-service.ts'
import type { UserRecord } from '../users/user-contract.ts'
import { freezeDocuments, type NamedDocument } from './document-files.ts'
import { kycBucket, type Dropbox } from './dropbox.ts'
import type { DocumentView, reviewOperations } from './kyc-contract.ts'
import {
  appendAudit,
  approveUndecided,
  decideDocument,
  decideSubmission,
  documentBytes,
  documentRow,
  documentsOf,
  documentViewOf,
  insertSubmission,
  latestSubmission,
  submissionsIn,
  submissionViewOf,
  type DocumentRow,
  type SubmissionRow,
} from './kyc-store.ts'

// A user's KYC evidence: the partner's submission (the reference SDK's
// `upload_kyc_documents`), and the operators' review of it. A submission copies the named
// objects out of the user's dropbox into the bank's store, so the documents reviewed are
// exactly the ones submitted, whatever happens to the bucket afterwards.

type DecideRequest = RequestOf<typeof reviewOperations.kycDecide>
export type DocumentDecision = NonNullable<DecideRequest['documents']>[number]

export class KycService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly dropbox: Dropbox,
    private readonly users: UserService,
    private readonly partners: PartnerService,
  ) {}

  /** `svc.user.<partner_id>.upload_kyc_documents`. */
  async submit(caller: Caller,
      request: { user_id: string; id_document: string; proof_of_residence: string }) {
    const partnerId = caller.partnerId as string
    const user = await this.users.get(partnerId, request.user_id)
    if (user.kyc_status === 'approved') throw new InvalidState(
      "this user's KYC is already approved; nothing to submit", [], 409)
    const bucket = kycBucket(request.user_id)
    const named: NamedDocument[] = [
      { field: 'id_document', name: request.id_document, directorId: null },
      { field: 'proof_of_residence', name: request.proof_of_residence, directorId: null },
    ]
    // The back of the id card, which the reference SDK uploads beside the front but does not name.
    const back = await this.idBack(partnerId, bucket, request.user_id, named)
    if (back) named.push({ field: 'id_back', name: back, directorId: null })
    const frozen = await freezeDocuments(this.dropbox, partnerId, bucket, named,
      () => request.user_id)
    const now = this.clock.now()
    const { record, documentIds } = await this.db.transaction().execute(async (trx) => {
      const record = await this.users.submitKyc(trx, partnerId, request.user_id, now)
      const { submissionId, documentIds } = await insertSubmission(
        trx,
        { partnerId, ownerKind: 'user', ownerId: request.user_id, submittedBy: caller.credentialId,
          at: now },
        frozen,
      )
      await appendEvent(trx, { type: 'kyc.submitted', partner_id: partnerId,
        resource_id: request.user_id, data: record, occurred_at: now })
      await appendAudit(trx, {
        subjectId: request.user_id,
        action: 'kyc.submitted',
        actor: caller.credentialId,
        at: now,
        details: { submission_id: submissionId, documents: frozen.map((d, i) => (
          { document_id: documentIds[i], name: d.name, sha256: d.sha256, size: d.bytes.length })) },
      })
      return { record, documentIds }
    })
    return {
      success: true,
      message: `${documentIds.length} documents received; KYC of user ${record.id} is pending ` +
        `review`,
    }
  }

  /** The newest `kyc_id_back_<user_id>_…` object (links left out) not already named, if any. */
  private async idBack(partnerId: string, bucket: string, userId: string,
      named: NamedDocument[]): Promise<string | undefined> {
    const prefix = `kyc_id_back_${userId}_`
    const taken = new Set(named.map((n) => n.name))
    const backs = (await this.dropbox.entries(partnerId, bucket)).filter(
      (e) => e.name.startsWith(prefix) && !taken.has(e.name) && e.size > 0)
    backs.sort((a, b) => (a.mtime < b.mtime ? 1 : a.mtime > b.mtime ? -1 : 0))
    return backs[0]?.name
  }

  // --- Operators

  async list(request: { partner_id?: string | undefined; state: 'pending' | 'approved' | 'rejected';
      limit?: number | undefined }) {
    const rows = await submissionsIn(this.db, 'user', request.state, request.partner_id,
      request.limit ?? 100)
    const applications = []
    for (const row of rows) {
      const user = await this.users.getAny(row.owner_id)
      applications.push({
        user_id: row.owner_id,
        entity_id: user.entityId,
        partner_id: row.partner_id,
        name: `${user.record.first_name} ${user.record.last_name}`.trim(),
        kyc_status: user.record.kyc_status,
        submitted_at: formatTimestamp(row.submitted_at),
        documents: row.documents,
      })
    }
    return { applications }
  }

  async show(userId: string) {
    const user = await this.users.getAny(userId)
    const submission = await latestSubmission(this.db, userId)
    return {
      user: user.record,
      partner_id: user.partnerId,
      entity_holder: user.isHolder,
      submission: submission ? submissionViewOf(submission) : null,
      documents: submission ? (await documentsOf(this.db, submission.id)).map(documentViewOf) : [],
    }
  }

  async decide(caller: Caller, request: DecideRequest) {
    const now = this.clock.now()
    return this.db.transaction().execute(async (trx) => {
      const user = await this.users.getAny(request.user_id, trx, true)
      const submission = await pendingSubmission(trx, request.user_id, 'KYC')
      const documents = await applyDocumentDecisions(trx, submission, request, caller.credentialId,
        now)
      const approve = request.decision === 'approve'
      await decideSubmission(trx, submission.id, { state: approve ? 'approved' : 'rejected',
        reason: request.reason ?? null, by: caller.credentialId, at: now })
      // A person's KYC is their personal entity's: the entity's decision covers both, and its
      // approval opens the first account.
      let account = null
      let record: UserRecord
      if (user.isHolder) {
        account = (await this.partners.reviewIn(trx, user.entityId, request.decision,
          request.reason)).account
        record = (await this.users.getAny(request.user_id, trx)).record
      } else {
        record = await this.users.decideKyc(trx, request.user_id, approve ? 'approved' : 'rejected',
          request.reason, now)
      }
      await appendEvent(trx, { type: approve ? 'kyc.approved' : 'kyc.rejected',
        partner_id: user.partnerId, resource_id: request.user_id, data: record, occurred_at: now })
      await appendAudit(trx, {
        subjectId: request.user_id,
        action: approve ? 'kyc.approved' : 'kyc.rejected',
        actor: caller.credentialId,
        at: now,
        details: { submission_id: submission.id, reason: request.reason ?? null,
          account_id: account?.account_id ?? null },
      })
      return { user: record, documents, account }
    })
  }

  /**
   * `ops.user.kyc`: an operator sets a user's KYC state without a document review (a
   * resubmission, or a decision on evidence seen elsewhere). A pending submission takes
   * the decision too; it is recorded in the audit trail like every decision.
   */
  async setStatus(caller: Caller, userId: string, status: 'pending' | 'approved' | 'rejected',
      reason: string | undefined): Promise<UserRecord> {
    const now = this.clock.now()
    return this.db.transaction().execute(async (trx) => {
      const user = await this.users.getAny(userId, trx, true)
      const record = await this.users.setKyc(userId, status, reason, trx)
      const submission = await latestSubmission(trx, userId, true)
      if (submission?.state === 'pending' && status !== 'pending') {
        await decideSubmission(trx, submission.id, { state: status, reason: reason ?? null,
          by: caller.credentialId, at: now })
        if (status === 'approved') await approveUndecided(trx, submission.id)
      }
      if (status !== 'pending') {
        await appendEvent(trx, { type: status === 'approved' ? 'kyc.approved' : 'kyc.rejected',
          partner_id: user.partnerId, resource_id: userId, data: record, occurred_at: now })
      }
      await appendAudit(trx,
        { subjectId: userId, action: `kyc.${status === 'pending' ? 'reopened' : status}`,
        actor: caller.credentialId, at: now, details: { reason: reason ?? null,
        via: 'ops.user.kyc' } })
      return record
    })
  }

  /** Part of a document's bytes (any document: KYC or KYB), for operators. */
  async documentChunk(request: { document_id: string; offset: number; length: number }) {
    const row = await documentRow(this.db, request.document_id)
    if (!row) throw new NotFound('document')
    if (row.deleted_at) throw new Conflict(`the bytes of this document were deleted ` +
      `on ${formatTimestamp(row.deleted_at)} under the retention rule; its metadata and hash ` +
      `remain`)
    if (request.offset > row.size) throw Invalid.field('offset',
      `is past the document's end (${row.size} bytes)`)
    const part = (await documentBytes(this.db, request.document_id, request.offset,
      request.length)) ?? new Uint8Array()
    const end = request.offset + part.length
    return { ...documentViewOf(row), offset: request.offset, data: Buffer.from(part).toString(
      'base64'), next_offset: end < row.size ? end : null }
  }

}

/** The owner's submission waiting for review, held to the transaction's end; else 409. */
export async function pendingSubmission(trx: Kysely<Database>, ownerId: string,
    what: 'KYC' | 'KYB'): Promise<SubmissionRow> {
  const submission = await latestSubmission(trx, ownerId, true)
  if (!submission || submission.state !== 'pending') {
    throw new InvalidState(`no ${what} submission waits for ` +
      `review${submission ? ` (the latest is ${submission.state})` : ''}`, [], 409)
  }
  return submission
}

/**
 * Applies the per-document decisions of an operator's decision on a submission: each named
 * document must be one of it; an approval may not keep a rejected document, and approves
 * every document not named. Resolves with the submission's documents as decided.
 */
export async function applyDocumentDecisions(
  trx: Kysely<Database>,
  submission: SubmissionRow,
  request: { decision: 'approve' | 'reject'; documents?: DocumentDecision[] | undefined },
  actor: string,
  now: Date,
): Promise<DocumentView[]> {
  const rows = await documentsOf(trx, submission.id)
  const byId = new Map<string, DocumentRow>(rows.map((row) => [row.id, row]))
  const issues: FieldIssue[] = []
  const decisions = request.documents ?? []
  decisions.forEach((d, i) => {
    if (!byId.has(d.document_id)) issues.push({ field: `documents[${i}].document_id`,
      message: 'is not a document of the submission under review' })
    else if (request.decision === 'approve' && d.decision === 'reject') {
      issues.push({ field: `documents[${i}].decision`,
        message: 'an approval cannot keep a rejected document; reject the submission instead' })
    }
  })
  if (issues.length > 0) throw new Invalid(`${issues[0]!.field}: ${issues[0]!.message}`, issues)
  for (const d of decisions) {
    const state = d.decision === 'approve' ? 'approved' : 'rejected'
    await decideDocument(trx, d.document_id, state, d.decision === 'reject' ? (d.reason ?? null)
      : null)
    await appendAudit(trx, {
      subjectId: d.document_id,
      action: `document.${state}`,
      actor,
      at: now,
      details: { submission_id: submission.id, owner_id: submission.owner_id, reason: d.reason
        ?? null },
    })
  }
  if (request.decision === 'approve') await approveUndecided(trx, submission.id)
  return (await documentsOf(trx, submission.id)).map(documentViewOf)
}
