import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatOptionalTimestamp, formatTimestamp } from '../contract/format.ts'
import type { Database, KycStatus, UsersTable } from '../db/schema.ts'
import type { EntityService } from '../entities/entity-service.ts'
import { Invalid, NotFound } from '../errors.ts'
import { identityIssues, type UserCreateRequest, type UserRecord, type UserUpdateRequest } from './user-contract.ts'

type UserRow = Selectable<UsersTable>

// Users of entities, with their KYC state. KYC moves (RULINGS): not_started → pending →
// approved | rejected, and rejected → pending on resubmission; operators decide.
export class UserService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly entities: EntityService,
  ) {}

  async create(partnerId: string, request: UserCreateRequest): Promise<{ userId: string }> {
    const entity = await this.entities.get(partnerId, request.entity_id)
    if (entity.entity_type === 'personal') {
      throw new Invalid('a personal entity has exactly one user, created with the entity', [
        { field: 'entity_id', message: 'is a personal entity' },
      ])
    }
    const now = this.clock.now()
    const id = randomUUID()
    // `verified: true` is the partner's reliance on its own KYC (RULINGS): recorded as approved.
    const kyc: Pick<UserRow, 'kyc_status' | 'kyc_submitted_at' | 'kyc_reviewed_at' | 'verified_at'> = request.verified
      ? { kyc_status: 'approved', kyc_submitted_at: now, kyc_reviewed_at: now, verified_at: now }
      : { kyc_status: 'not_started', kyc_submitted_at: null, kyc_reviewed_at: null, verified_at: null }
    await this.db
      .insertInto('users')
      .values({
        id,
        partner_id: partnerId,
        entity_id: entity.id,
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
        permit_number: request.permit_number,
        address: request.address ? JSON.stringify(request.address) : null,
        ...kyc,
        created_at: now,
        updated_at: now,
      })
      .execute()
    return { userId: id }
  }

  async update(partnerId: string, request: UserUpdateRequest): Promise<{ userId: string }> {
    const { user_id, ...changes } = request
    return this.db.transaction().execute(async (trx) => {
      const current = await this.row(partnerId, user_id, trx, true)
      const issues = identityIssues({
        id_type: (changes.id_type ?? current.id_type) as 'National' | 'Passport',
        id_number: changes.id_number ?? current.id_number,
        id_issue_expiry_date: changes.id_issue_expiry_date ?? current.id_issue_expiry_date?.toISOString(),
      })
      if (issues.length > 0) throw new Invalid(issues.map((i) => `${i.field} ${i.message}`).join('; '), issues)
      await trx
        .updateTable('users')
        .set({ ...changes, updated_at: this.clock.now() })
        .where('id', '=', user_id)
        .execute()
      return { userId: user_id }
    })
  }

  async get(partnerId: string, userId: string): Promise<UserRecord> {
    return toRecord(await this.row(partnerId, userId))
  }

  async list(partnerId: string, entityId: string | undefined): Promise<UserRecord[]> {
    let query = this.db.selectFrom('users').selectAll().where('partner_id', '=', partnerId)
    if (entityId) query = query.where('entity_id', '=', entityId)
    const rows = await query.orderBy('created_seq').execute()
    return rows.map((row) => ({ ...toRecord(row), date_registered: formatTimestamp(row.created_at) }))
  }

  /** The operator's KYC decision (or a resubmission, `pending`). */
  async setKyc(userId: string, status: Exclude<KycStatus, 'not_started'>, reason: string | undefined): Promise<UserRecord> {
    if (status === 'rejected' && !reason) throw Invalid.field('reason', 'is required when rejecting')
    const now = this.clock.now()
    const row = await this.db
      .updateTable('users')
      .set({
        kyc_status: status,
        // A decision on KYC that was never marked submitted (the operator went straight
        // from not_started) means it was submitted now: a reviewed record must not read as
        // unsubmitted (interface.md omits kyc_submitted_at only before submission).
        kyc_submitted_at: status === 'pending' ? now : sql<Date>`coalesce(kyc_submitted_at, ${now})`,
        kyc_reviewed_at: status === 'pending' ? null : now,
        kyc_rejection_reason: status === 'rejected' ? reason : null,
        verified_at: status === 'approved' ? now : null,
        updated_at: now,
      })
      .where('id', '=', userId)
      .returningAll()
      .executeTakeFirst()
    if (!row) throw new NotFound('user')
    return toRecord(row)
  }

  private async row(partnerId: string, userId: string, executor: Kysely<Database> = this.db, lock = false): Promise<UserRow> {
    let query = executor.selectFrom('users').selectAll().where('id', '=', userId).where('partner_id', '=', partnerId)
    if (lock) query = query.forUpdate()
    const row = await query.executeTakeFirst()
    if (!row) throw new NotFound('user')
    return row
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
    birth_country: row.birth_country ?? '',
    birth_city: row.birth_city ?? '',
    date_of_birth: formatTimestamp(row.date_of_birth),
    id_issue_date: formatTimestamp(row.id_issue_date),
    id_issue_expiry: formatOptionalTimestamp(row.id_issue_expiry_date),
    kyc_status: row.kyc_status,
  }
  // interface.md: submitted-at omitted until submitted, reviewed-at omitted while pending or
  // not started, the rejection reason only when rejected.
  if (row.kyc_submitted_at) record.kyc_submitted_at = formatTimestamp(row.kyc_submitted_at)
  if (row.kyc_reviewed_at && (row.kyc_status === 'approved' || row.kyc_status === 'rejected')) {
    record.kyc_reviewed_at = formatTimestamp(row.kyc_reviewed_at)
  }
  if (row.kyc_status === 'rejected' && row.kyc_rejection_reason) record.kyc_rejection_reason = row.kyc_rejection_reason
  return record
}
