import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatOptionalTimestamp, formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import type { KycStatus } from './user-tables.ts'
import type { EntityHolders, HolderDetails } from '../entities/entity-holders.ts'
import { entityOf } from '../entities/entity-store.ts'
import { Invalid, InvalidState, NotFound } from '../errors.ts'
import { personScreened } from '../screening/customer-names.ts'
import type { CheckedSubject, ScreeningReviews,
  ScreeningStatus } from '../screening/screening-reviews.ts'
import { identityIssues, type UserCreateRequest, type UserRecord, type UserUpdateRequest } from './user-contract.ts'
import { insertUser, submittedAtOr, updateEntityHolder, updateUser, userOf, usersOf, type UserChanges, type UserRow } from './user-store.ts'

type Executor = Kysely<Database>

// Users of entities, with their KYC state. KYC moves: not_started → pending →
// approved | rejected, and rejected → pending on resubmission; operators decide. A
// personal entity's one user is created and decided with the entity, through
// `createHolder` and `decideHolderKyc`, in the entity's database transaction.
export class UserService implements EntityHolders {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly screening: ScreeningReviews,
  ) {}

  /** Creates a user of a business entity with its sanctions screening, in one transaction. */
  async create(partnerId: string, request: UserCreateRequest): Promise<{ userId: string;
      screening_status: ScreeningStatus }> {
    // Read through the entities' store, not EntityService, which itself uses this service.
    const entity = await entityOf(this.db, partnerId, request.entity_id)
    if (!entity) throw new NotFound('entity')
    if (entity.entity_type === 'personal') {
      throw new Invalid('a personal entity has exactly one user, created with the entity', [
        { field: 'entity_id', message: 'is a personal entity' },
      ])
    }
    const now = this.clock.now()
    const id = randomUUID()
    // `verified: true` is the partner's reliance on its own KYC: recorded as approved.
    const kyc: Pick<UserRow,
      'kyc_status' | 'kyc_submitted_at' | 'kyc_reviewed_at' | 'verified_at'> = request.verified
      ? { kyc_status: 'approved', kyc_submitted_at: now, kyc_reviewed_at: now, verified_at: now }
      : { kyc_status: 'not_started', kyc_submitted_at: null, kyc_reviewed_at: null,
        verified_at: null }
    const checked = await this.checkUser({ partnerId, entityId: entity.id, userId: id,
      cause: 'create', person: request })
    return this.db.transaction().execute(async (trx) => {
      await insertUser(trx, this.newUser(id, partnerId, entity.id, request, kyc, now))
      return { userId: id, screening_status: await this.holdUser(trx, checked) }
    })
  }

  private newUser(id: string, partnerId: string, entityId: string, request: UserCreateRequest,
      kyc: Pick<UserRow, 'kyc_status' | 'kyc_submitted_at' | 'kyc_reviewed_at' | 'verified_at'>,
      now: Date) {
    return {
      id,
      partner_id: partnerId,
      entity_id: entityId,
      first_name: request.first_name,
      last_name: request.last_name,
      email: request.email,
      phone_number: request.phone_number,
      gender: request.gender,
      date_of_birth: request.date_of_birth,
      country: request.country,
      city: request.city,
      residency: request.residency,
      id_number: request.id_number,
      id_type: request.id_type,
      id_issue_date: request.id_issue_date,
      id_issue_expiry_date: request.id_issue_expiry_date ?? null,
      title: request.title,
      permit_number: request.permit_number ?? '',
      address: request.address ? JSON.stringify(request.address) : null,
      ...kyc,
      created_at: now,
      updated_at: now,
    }
  }

  /** Screens a user, before the transaction that writes it (screening-reviews.ts, `check`). */
  private async checkUser(user: { partnerId: string; entityId: string; userId: string;
      cause: 'create' | 'update'; person: Parameters<typeof personScreened>[0] })
      : Promise<CheckedSubject> {
    return this.screening.check({ partnerId: user.partnerId, entityId: user.entityId,
      subject: 'user', subjectId: user.userId, cause: user.cause,
      screened: personScreened(user.person) })
  }

  /** Holds a user whose screening hit (in the caller's transaction); where it stands. */
  private async holdUser(trx: Executor, checked: CheckedSubject): Promise<ScreeningStatus> {
    const outcome = await this.screening.hold(trx, checked)
    return outcome.status === 'clear' ? this.screening.statusOf(trx, checked.subject.subjectId)
      : outcome.status
  }

  /** Where the user's sanctions screening stands (its latest review's status, or clear). */
  async screeningStatus(partnerId: string, userId: string): Promise<ScreeningStatus> {
    await this.row(partnerId, userId)
    return this.screening.statusOf(this.db, userId)
  }

  /**
   * The automatic user of a new personal entity (exactly one, with the
   * entity's personal details). Its KYC was submitted with the entity, so it starts
   * `pending`. Runs on the caller's executor: the entity and its user commit together.
   */
  /** Creates a personal entity's one user; returns its id. */
  async createHolder(executor: Executor, partnerId: string, entityId: string, person: HolderDetails,
      now: Date): Promise<string> {
    const id = randomUUID()
    await insertUser(executor, {
      id,
      partner_id: partnerId,
      entity_id: entityId,
      is_entity_holder: true,
      first_name: person.first_name,
      last_name: person.last_name,
      email: person.email,
      phone_number: person.phone_number,
      gender: person.gender,
      date_of_birth: person.date_of_birth,
      country: person.country,
      city: person.city ?? '',
      residency: person.residency ?? '',
      id_number: person.id_number,
      id_type: person.id_type,
      id_issue_date: person.id_issue_date,
      id_issue_expiry_date: person.id_issue_expiry_date ?? null,
      title: person.title ?? '',
      permit_number: person.permit_number ?? '',
      kyc_status: 'pending',
      kyc_submitted_at: now,
      created_at: now,
      updated_at: now,
    })
    return id
  }

  /**
   * A personal entity's KYC is its single user's KYC: the bank's decision on the entity
   * is recorded on its automatic user too, on the caller's executor.
   */
  async decideHolderKyc(
    executor: Executor,
    entityId: string,
    decision: { approve: true } | { approve: false; reason: string },
    now: Date,
  ): Promise<void> {
    const status = decision.approve ? 'approved' : 'rejected'
    await updateEntityHolder(executor, entityId, kycChanges(status, decision.approve ? undefined
      : decision.reason, now))
  }

  async update(partnerId: string, request: UserUpdateRequest): Promise<{ userId: string;
      screening_status: ScreeningStatus }> {
    const { user_id, address, ...fields } = request
    // Stored as create stores it: the JSON of the address, which a physical card needs.
    const changes: UserChanges = address ? { ...fields, address: JSON.stringify(address) } : fields
    // A change of a screened fact is screened before the transaction, on the facts as they
    // will be (a concurrent update of the same user may change other facts: each is screened).
    const renamed = (['first_name', 'last_name', 'date_of_birth', 'id_number'] as const)
      .some((field) => fields[field] !== undefined)
    const before = renamed ? await this.row(partnerId, user_id) : undefined
    const checked = before && await this.checkUser({ partnerId, entityId: before.entity_id,
      userId: user_id, cause: 'update', person: {
        first_name: fields.first_name ?? before.first_name,
        last_name: fields.last_name ?? before.last_name,
        date_of_birth: fields.date_of_birth ?? before.date_of_birth,
        id_number: fields.id_number ?? before.id_number } })
    return this.db.transaction().execute(async (trx) => {
      const current = await this.row(partnerId, user_id, trx, true)
      const issues = identityIssues({
        id_type: (fields.id_type ?? current.id_type) as 'National' | 'Passport',
        id_number: fields.id_number ?? current.id_number,
        id_issue_expiry_date: fields.id_issue_expiry_date
          ?? current.id_issue_expiry_date?.toISOString(),
      })
      if (issues.length > 0) throw new Invalid(issues.map((i) => `${i.field} ${i.message}`).join(
        '; '), issues)
      await updateUser(trx, user_id, { ...changes, updated_at: this.clock.now() })
      const screening_status = checked ? await this.holdUser(trx, checked)
        : await this.screening.statusOf(trx, user_id)
      return { userId: user_id, screening_status }
    })
  }

  async get(partnerId: string, userId: string): Promise<UserRecord> {
    return toRecord(await this.row(partnerId, userId))
  }

  /** Kept off the user record: the incumbent's reference client reads records that lack them. */
  async birthDetails(partnerId: string, userId: string): Promise<{
      user_id: string; birth_country: string; birth_city: string }> {
    const row = await this.row(partnerId, userId)
    return { user_id: row.id, birth_country: row.birth_country ?? '', birth_city: row.birth_city
      ?? '' }
  }

  async list(partnerId: string, entityId: string | undefined): Promise<UserRecord[]> {
    const rows = await usersOf(this.db, partnerId, entityId)
    return rows.map(
      (row) => ({ ...toRecord(row), date_registered: formatTimestamp(row.created_at) }))
  }

  /**
   * Marks the partner's user's KYC submitted (`pending`), holding the user's row to the end
   * of the caller's transaction; an approved KYC is not submitted again (409).
   */
  async submitKyc(executor: Executor, partnerId: string, userId: string,
      now: Date): Promise<UserRecord> {
    const row = await this.row(partnerId, userId, executor, true)
    if (row.kyc_status === 'approved') throw new InvalidState(
      'this user\'s KYC is already approved; nothing to submit', [], 409)
    return toRecord((await updateUser(executor, userId, kycChanges('pending', undefined, now)))!)
  }

  /**
   * For operators: any partner's user, with the row facts a KYC decision needs; `lock` holds it.
   */
  async getAny(userId: string, executor: Executor = this.db, lock = false): Promise<{
      record: UserRecord; partnerId: string; entityId: string; isHolder: boolean }> {
    let query = executor.selectFrom('users').selectAll().where('id', '=', userId)
    if (lock) query = query.forUpdate()
    const row = await query.executeTakeFirst()
    if (!row) throw new NotFound('user')
    return { record: toRecord(row), partnerId: row.partner_id, entityId: row.entity_id,
      isHolder: row.is_entity_holder }
  }

  /** Records an operator's decision on a user's KYC in the caller's transaction. */
  async decideKyc(executor: Executor, userId: string, status: 'approved' | 'rejected',
      reason: string | undefined, now: Date): Promise<UserRecord> {
    const row = await updateUser(executor, userId, kycChanges(status, reason, now))
    if (!row) throw new NotFound('user')
    return toRecord(row)
  }

  /** The operator's KYC decision (or a resubmission, `pending`). */
  async setKyc(userId: string, status: Exclude<KycStatus, 'not_started'>,
      reason: string | undefined, executor: Executor = this.db): Promise<UserRecord> {
    if (status === 'rejected' && !reason) throw Invalid.field('reason',
      'is required when rejecting')
    const row = await updateUser(executor, userId, kycChanges(status, reason, this.clock.now()))
    if (!row) throw new NotFound('user')
    return toRecord(row)
  }

  private async row(partnerId: string, userId: string, executor: Executor = this.db,
      lock = false): Promise<UserRow> {
    const row = await userOf(executor, partnerId, userId, lock)
    if (!row) throw new NotFound('user')
    return row
  }
}

/** The columns a KYC state records, for a decision or (`pending`) a resubmission. */
function kycChanges(status: Exclude<KycStatus, 'not_started'>, reason: string | undefined,
    now: Date): UserChanges {
  return {
    kyc_status: status,
    // A decision on KYC that was never marked submitted (the operator went straight
    // from not_started) means it was submitted now: a reviewed record must not read as
    // unsubmitted (a user record omits kyc_submitted_at only before submission).
    kyc_submitted_at: status === 'pending' ? now : submittedAtOr(now),
    kyc_reviewed_at: status === 'pending' ? null : now,
    kyc_rejection_reason: status === 'rejected' ? reason : null,
    verified_at: status === 'approved' ? now : null,
    updated_at: now,
  }
}

function toRecord(row: UserRow): UserRecord {
  const record: UserRecord = {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone_number: row.phone_number,
    entity_id: row.entity_id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    verified: row.kyc_status === 'approved',
    verified_at: formatOptionalTimestamp(row.verified_at),
    gender: row.gender,
    country: row.country,
    city: row.city,
    residency: row.residency,
    id_number: row.id_number,
    id_type: row.id_type,
    title: row.title,
    permit_number: row.permit_number,
    date_of_birth: formatTimestamp(row.date_of_birth),
    id_issue_date: formatTimestamp(row.id_issue_date),
    id_issue_expiry: formatOptionalTimestamp(row.id_issue_expiry_date),
    kyc_status: row.kyc_status,
  }
  // The user record: submitted-at omitted until submitted, reviewed-at omitted while pending or
  // not started, the rejection reason only when rejected.
  if (row.kyc_submitted_at) record.kyc_submitted_at = formatTimestamp(row.kyc_submitted_at)
  if (row.kyc_reviewed_at && (row.kyc_status === 'approved' || row.kyc_status === 'rejected')) {
    record.kyc_reviewed_at = formatTimestamp(row.kyc_reviewed_at)
  }
  if (row.kyc_status === 'rejected' && row.kyc_rejection_reason) record.kyc_rejection_reason =
    row.kyc_rejection_reason
  return record
}
