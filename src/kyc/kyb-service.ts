import { randomUUID } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { RequestOf } from '../contract/operation.ts'
import type { Database } from '../schema.ts'
import type { EntitiesTable } from '../entities/entity-tables.ts'
import type { EntityService } from '../entities/entity-service.ts'
import { Invalid, InvalidState, NotFound, type FieldIssue } from '../errors.ts'
import { appendEvent } from '../events/event-outbox.ts'
import type { Notifier } from '../notify/notifier.ts'
import type { PartnerService } from '../partners/partner-service.ts'
import type { UserService } from '../users/user-service.ts'
import { usersOf } from '../users/user-store.ts'
import type { CompanyRegistry } from './company-registry.ts'
import { freezeDocuments, type NamedDocument } from './document-files.ts'
import { kybBucket, type Dropbox } from './dropbox.ts'
import { kyb_documents_max, type KybState, type kybOperations, type reviewOperations } from './kyc-contract.ts'
import { applyDocumentDecisions, pendingSubmission } from './kyc-service.ts'
import {
  appendAudit,
  approveUndecided,
  decideSubmission,
  directorsOf,
  documentsOf,
  documentViewOf,
  insertDirectors,
  insertSubmission,
  kybMetadataOf,
  latestSubmission,
  setKybMetadata,
  submissionsIn,
  submissionViewOf,
  updateDirector,
  type DirectorRow,
  type DocumentRow,
  type SubmissionRow,
} from './kyc-store.ts'

// A business entity's KYB, the way the reference SDK's KYBService drives it: `get` shows
// the directors the company registry names (so the partner knows whose documents to
// upload), `submit` names the business's and each director's documents in the entity's
// dropbox, `update`/`update_director` add what the partner knows, and operators decide.
// State (docs/guides/kyc-kyb.md): not_started → submitted → approved | rejected; a
// rejected one may be submitted again. An entity approved by an operator directly
// (`ops.entity.review`) reads approved too.

type EntityRow = Selectable<EntitiesTable>
type KybDecideRequest = RequestOf<typeof reviewOperations.kybDecide>

export class KybService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly dropbox: Dropbox,
    private readonly registry: CompanyRegistry,
    private readonly entities: EntityService,
    private readonly partners: PartnerService,
    private readonly notifier: Notifier,
    private readonly users: UserService,
  ) {}

  async get(partnerId: string, entityId: string) {
    const entity = await this.business(partnerId, entityId)
    const directors = await this.directors(entity)
    return this.partnerView(this.db, entity, directors)
  }

  async submit(caller: Caller, request: RequestOf<typeof kybOperations.submit>) {
    const partnerId = caller.partnerId as string
    const entity = await this.business(partnerId, request.entity_id)
    if (entity.review_status === 'approved') throw new InvalidState(
      "this entity's KYB is already approved; nothing to submit", [], 409)
    const directors = await this.directors(entity)
    const known = new Set(directors.map((d) => d.director_id))
    const named: NamedDocument[] =
      request.documents.map((name, i) => ({ field: `documents[${i}]`, name, directorId: null }))
    const issues: FieldIssue[] = []
    for (const [directorId, names] of Object.entries(request.directors ?? {})) {
      if (!known.has(directorId)) issues.push({ field: `directors.${directorId}`,
        message: 'is not a director of this entity on record (see svc.kyb.<partner_id>.get)' })
      names.forEach((name, j) => named.push({ field: `directors.${directorId}[${j}]`, name,
        directorId }))
    }
    if (named.length > kyb_documents_max) issues.push({ field: 'documents',
      message: `a submission may name at most ${kyb_documents_max} documents in all` })
    if (issues.length > 0) throw new Invalid(`${issues[0]!.field}: ${issues[0]!.message}`, issues)
    const frozen = await freezeDocuments(this.dropbox, partnerId, kybBucket(entity.id), named,
      (d) => d.directorId)
    const now = this.clock.now()
    await this.db.transaction().execute(async (trx) => {
      const locked = await this.entities.getAny(entity.id, trx, true)
      if (locked.review_status === 'approved') throw new InvalidState(
        "this entity's KYB is already approved; nothing to submit", [], 409)
      const { submissionId, documentIds } = await insertSubmission(
        trx,
        { partnerId, ownerKind: 'entity', ownerId: entity.id, submittedBy: caller.credentialId,
          at: now },
        frozen,
      )
      const view = await this.partnerView(trx, locked, await directorsOf(trx, entity.id))
      await appendEvent(trx, { type: 'kyb.submitted', partner_id: partnerId, resource_id: entity.id,
        data: view, occurred_at: now })
      await appendAudit(trx, {
        subjectId: entity.id,
        action: 'kyb.submitted',
        actor: caller.credentialId,
        at: now,
        details: {
          submission_id: submissionId,
          documents: frozen.map((d, i) => ({ document_id: documentIds[i], name: d.name,
            director_id: d.directorId, sha256: d.sha256, size: d.bytes.length })),
        },
      })
    })
    return {}
  }

  async update(partnerId: string, request: { entity_id: string; metadata: Record<string,
      unknown> }) {
    const entity = await this.business(partnerId, request.entity_id)
    await setKybMetadata(this.db, entity.id, partnerId, request.metadata, this.clock.now())
    const { state: _state, rejection_reason: _reason, ...view } = await this.partnerView(this.db,
      entity, await directorsOf(this.db, entity.id))
    return view
  }

  async updateDirector(partnerId: string, request: RequestOf<typeof kybOperations.updateDirector>) {
    const entity = await this.business(partnerId, request.entity_id)
    await this.director(entity, request.director_id)
    const changes = {
      ...(request.full_name !== undefined ? { full_name: request.full_name } : {}),
      ...(request.email !== undefined ? { email: request.email } : {}),
      ...(request.metadata !== undefined ? { metadata: request.metadata } : {}),
    }
    await updateDirector(this.db, entity.id, request.director_id, changes, this.clock.now())
    return {}
  }

  async sendVerificationEmail(partnerId: string,
      request: { entity_id: string; director_id: string; email?: string | undefined }) {
    const entity = await this.business(partnerId, request.entity_id)
    const director = await this.director(entity, request.director_id)
    const to = request.email ?? director.email
    if (!to) throw Invalid.field('email', 'is required: no e-mail address is on record for this ' +
      'director (set one with update_director)')
    const name = director.full_name ?? director.name
    await this.notifier.send({
      key: `kyb-director-verification:${entity.id}:${director.director_id}:${randomUUID()}`,
      to,
      subject: `Please verify your identity as a director of ${entity.name}`,
      text:
        `Dear ${name},\n\n${entity.name} (registration ${entity.registration_number ?? ''}) is ` +
          `opening a business account with us, ` +
        'and you are on record as one of its directors. Before the account can be opened we need ' +
        'to verify your identity. Please give the company the documents it asks you for (your ' +
        'identity document, a recent photograph and a proof of address); they reach us through ' +
          'the company.\n\nNo action is needed if you are not a director of this company: tell ' +
            'us by replying to this message.\n',
    })
    await updateDirector(this.db, entity.id, director.director_id, { verification_sent: true,
      ...(request.email ? { email: request.email } : {}) }, this.clock.now())
    return {}
  }

  // --- Operators

  async list(request: { partner_id?: string | undefined;
      state: 'submitted' | 'approved' | 'rejected'; limit?: number | undefined }) {
    const state = request.state === 'submitted' ? 'pending' : request.state
    const rows = await submissionsIn(this.db, 'entity', state, request.partner_id, request.limit
      ?? 100)
    const applications = []
    for (const row of rows) {
      const entity = await this.entities.getAny(row.owner_id)
      applications.push({
        entity_id: entity.id,
        partner_id: entity.partner_id,
        name: entity.name,
        registration_number: entity.registration_number ?? '',
        state: kybStateOf(entity, row).state,
        submitted_at: formatTimestamp(row.submitted_at),
        documents: row.documents,
      })
    }
    return { applications }
  }

  async show(entityId: string) {
    const entity = await this.entities.getAny(entityId)
    if (entity.entity_type !== 'business') throw personalEntity()
    return this.operatorView(this.db, entity, await this.directors(entity))
  }

  async decide(caller: Caller, request: KybDecideRequest) {
    const now = this.clock.now()
    return this.db.transaction().execute(async (trx) => {
      const entity = await this.entities.getAny(request.entity_id, trx, true)
      if (entity.entity_type !== 'business') throw personalEntity()
      const submission = await pendingSubmission(trx, entity.id, 'KYB')
      const directors = await directorsOf(trx, entity.id)
      const known = new Set(directors.map((d) => d.director_id))
      const unknown = (request.directors ?? []).findIndex((d) => !known.has(d.director_id))
      if (unknown >= 0) throw Invalid.field(`directors[${unknown}].director_id`,
        'is not a director of this entity')
      await applyDocumentDecisions(trx, submission, request, caller.credentialId, now)
      for (const d of request.directors ?? []) {
        const changes = { ...(d.approved !== undefined ? { approved: d.approved } : {}),
          ...(d.verified !== undefined ? { verified: d.verified } : {}) }
        await updateDirector(trx, entity.id, d.director_id, changes, now)
      }
      const approve = request.decision === 'approve'
      await decideSubmission(trx, submission.id, { state: approve ? 'approved' : 'rejected',
        reason: request.reason ?? null, by: caller.credentialId, at: now })
      const { account } = await this.partners.reviewIn(trx, entity.id, request.decision,
        request.reason)
      const after = await this.entities.getAny(entity.id, trx)
      const afterDirectors = await directorsOf(trx, entity.id)
      await appendEvent(trx, {
        type: approve ? 'kyb.approved' : 'kyb.rejected',
        partner_id: entity.partner_id,
        resource_id: entity.id,
        data: await this.partnerView(trx, after, afterDirectors),
        occurred_at: now,
      })
      await appendAudit(trx, {
        subjectId: entity.id,
        action: approve ? 'kyb.approved' : 'kyb.rejected',
        actor: caller.credentialId,
        at: now,
        details: { submission_id: submission.id, reason: request.reason ?? null,
          directors: request.directors ?? [], account_id: account?.account_id ?? null },
      })
      return { ...(await this.operatorView(trx, after, afterDirectors)), account }
    })
  }

  /**
   * `ops.entity.review`: an operator decides an entity directly. The application under
   * review goes with the decision — a business's KYB submission, a person's KYC — so that
   * it does not stay waiting in `kyb list`/`kyc list`, and the decision is audited and,
   * when it decided an application, announced (kyb.* or kyc.*).
   */
  async reviewEntity(caller: Caller, entityId: string, decision: 'approve' | 'reject',
      reason: string | undefined) {
    const now = this.clock.now()
    return this.db.transaction().execute(async (trx) => {
      const result = await this.partners.reviewIn(trx, entityId, decision, reason)
      const entity = await this.entities.getAny(entityId, trx)
      const approve = decision === 'approve'
      const business = entity.entity_type === 'business'
      // Read in the transaction: PGlite has one connection, which the transaction holds.
      const ownerId = business ? entity.id
        : (await usersOf(trx, entity.partner_id, entity.id))[0]?.id
      const submission = ownerId ? await latestSubmission(trx, ownerId, true) : undefined
      const decided = submission?.state === 'pending' ? submission : undefined
      if (decided) {
        await decideSubmission(trx, decided.id, { state: approve ? 'approved' : 'rejected',
          reason: reason ?? null, by: caller.credentialId, at: now })
        if (approve) await approveUndecided(trx, decided.id)
        const data = business
          ? await this.partnerView(trx, entity, await directorsOf(trx, entity.id))
          : (await this.users.getAny(ownerId!, trx)).record
        const type = business ? (approve ? 'kyb.approved' : 'kyb.rejected') : approve
          ? 'kyc.approved' : 'kyc.rejected'
        await appendEvent(trx, { type, partner_id: entity.partner_id, resource_id: ownerId!, data,
          occurred_at: now })
      }
      await appendAudit(trx, {
        subjectId: entityId,
        action: approve ? 'entity.approved' : 'entity.rejected',
        actor: caller.credentialId,
        at: now,
        details: { reason: reason ?? null, via: 'ops.entity.review', submission_id: decided?.id
          ?? null, account_id: result.account?.account_id ?? null },
      })
      return result
    })
  }

  // --- Views

  private async partnerView(executor: Kysely<Database>, entity: EntityRow,
      directors: DirectorRow[]) {
    const submission = await latestSubmission(executor, entity.id)
    const rows = submission ? await documentsOf(executor, submission.id) : []
    const { state, rejection_reason } = kybStateOf(entity, submission)
    return {
      entity_id: entity.id,
      documents: rows.filter((r) => r.director_id === null).map(sdkDocument),
      directors: directors.map((d) => ({
        id: d.director_id,
        name: d.name,
        approved: d.approved,
        verified: d.verified,
        documents: rows.filter((r) => r.director_id === d.director_id).map(sdkDocument),
        verification_sent: d.verification_sent,
        id_type: d.id_type,
        metadata: d.metadata as Record<string, unknown>,
      })),
      metadata: await kybMetadataOf(executor, entity.id),
      state,
      rejection_reason,
    }
  }

  private async operatorView(executor: Kysely<Database>, entity: EntityRow,
      directors: DirectorRow[]) {
    const submission = await latestSubmission(executor, entity.id)
    const rows = submission ? await documentsOf(executor, submission.id) : []
    const { state, rejection_reason } = kybStateOf(entity, submission)
    return {
      entity_id: entity.id,
      partner_id: entity.partner_id,
      name: entity.name,
      registration_number: entity.registration_number ?? '',
      state,
      rejection_reason,
      metadata: await kybMetadataOf(executor, entity.id),
      submission: submission ? submissionViewOf(submission) : null,
      documents: rows.filter((r) => r.director_id === null).map(documentViewOf),
      directors: directors.map((d) => ({
        director_id: d.director_id,
        name: d.name,
        full_name: d.full_name,
        email: d.email,
        id_type: d.id_type,
        approved: d.approved,
        verified: d.verified,
        verification_sent: d.verification_sent,
        metadata: d.metadata as Record<string, unknown>,
        documents: rows.filter((r) => r.director_id === d.director_id).map(documentViewOf),
      })),
    }
  }

  private async business(partnerId: string, entityId: string): Promise<EntityRow> {
    const entity = await this.entities.get(partnerId, entityId)
    if (entity.entity_type !== 'business') throw personalEntity()
    return entity
  }

  /**
   * The entity's directors: asked of the registry once, then kept (an empty answer is asked again
   * next time).
   */
  private async directors(entity: EntityRow): Promise<DirectorRow[]> {
    const stored = await directorsOf(this.db, entity.id)
    if (stored.length > 0 || !entity.registration_number) return stored
    const found = await this.registry.directors(entity.registration_number)
    await insertDirectors(this.db, entity.id, found, this.clock.now())
    return directorsOf(this.db, entity.id)
  }

  private async director(entity: EntityRow, directorId: string): Promise<DirectorRow> {
    const director = (await this.directors(entity)).find((d) => d.director_id === directorId)
    if (!director) throw new NotFound('director')
    return director
  }
}

/** KYB state from the entity's review and its latest submission. */
export function kybStateOf(entity: EntityRow, submission: SubmissionRow | undefined): {
    state: KybState; rejection_reason: string | null } {
  if (entity.review_status === 'approved') return { state: 'approved', rejection_reason: null }
  if (submission?.state === 'pending') return { state: 'submitted', rejection_reason: null }
  if (submission?.state === 'rejected') return { state: 'rejected',
    rejection_reason: submission.rejection_reason }
  if (entity.review_status === 'rejected') return { state: 'rejected',
    rejection_reason: entity.review_reason }
  return { state: 'not_started', rejection_reason: null }
}

function sdkDocument(row: DocumentRow) {
  return { key: row.name, doc_type: row.doc_type, rejection_reason: row.rejection_reason,
    approved: row.decision === 'approved' }
}

function personalEntity(): Invalid {
  return Invalid.field('entity_id', 'is a personal entity: a person\'s KYC is submitted with ' +
    'svc.user.<partner_id>.upload_kyc_documents')
}
