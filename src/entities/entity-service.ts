import { randomUUID } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatOptionalTimestamp, formatTimestamp } from '../contract/format.ts'
import type { Address, Database, EntitiesTable } from '../db/schema.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { Conflict, Invalid, NotFound } from '../errors.ts'
import type { EntityCreateRequest, EntityInfo, EntityListItem } from './entity-contract.ts'

export type EntityRow = Selectable<EntitiesTable>

type Executor = Kysely<Database>

// Entities: the owners of users and accounts. Every read is scoped to the caller's
// partner; another partner's entity is answered exactly as a missing one (RULINGS).
export class EntityService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async create(partnerId: string, request: EntityCreateRequest): Promise<{ id: string }> {
    const id = randomUUID()
    const now = this.clock.now()
    if (request.entity_type === 'personal') {
      const issues = futureDateIssues(request, now)
      if (issues.length > 0) throw new Invalid(issues.map((i) => `${i.field} ${i.message}`).join('; '), issues)
    }
    try {
      await this.db.transaction().execute(async (trx) => {
        await this.insert(trx, partnerId, id, request, now, false)
        if (request.entity_type === 'personal') await insertHolder(trx, partnerId, id, request, now)
      })
    } catch (error) {
      if (isUniqueViolation(error)) {
        const field = request.entity_type === 'business' ? 'registration_number' : 'id_number'
        throw new Conflict(`an entity with this ${field} already exists`, [{ field, message: 'already exists' }])
      }
      throw error
    }
    return { id }
  }

  /** Inserts an entity row; used by `create` and by partner onboarding (root entity). */
  async insert(
    executor: Executor,
    partnerId: string,
    id: string,
    request: EntityCreateRequest,
    now: Date,
    isRoot: boolean,
  ): Promise<void> {
    const common = {
      id,
      partner_id: partnerId,
      entity_type: request.entity_type,
      is_root: isRoot,
      email: request.email,
      country: request.country,
      // A new entity's KYB/KYC documents are with the bank for review from the start.
      review_status: 'pending' as const,
      created_at: now,
    }
    if (request.entity_type === 'business') {
      await executor
        .insertInto('entities')
        .values({
          ...common,
          name: request.name,
          trading_name: request.trading_name,
          registration_number: request.registration_number,
          tax_number: request.tax_number ?? '',
        })
        .execute()
      return
    }
    await executor
      .insertInto('entities')
      .values({
        ...common,
        name: request.name ?? `${request.first_name} ${request.last_name}`,
        first_name: request.first_name,
        last_name: request.last_name,
        phone_number: request.phone_number,
        gender: request.gender,
        date_of_birth: request.date_of_birth,
        id_number: request.id_number,
        id_type: request.id_type,
        id_issue_date: request.id_issue_date,
        id_issue_expiry_date: request.id_issue_expiry_date ?? null,
        city: request.city ?? '',
        residency: request.residency ?? '',
        title: request.title ?? '',
        permit_number: request.permit_number ?? '',
      })
      .execute()
  }

  /** The partner's entity, or 404 whether it is missing or another partner's. */
  async get(partnerId: string, entityId: string, executor: Executor = this.db): Promise<EntityRow> {
    const row = await executor
      .selectFrom('entities')
      .selectAll()
      .where('id', '=', entityId)
      .where('partner_id', '=', partnerId)
      .executeTakeFirst()
    if (!row) throw new NotFound('entity')
    return row
  }

  /** For operators: any partner's entity. */
  async getAny(entityId: string, executor: Executor = this.db): Promise<EntityRow> {
    const row = await executor.selectFrom('entities').selectAll().where('id', '=', entityId).executeTakeFirst()
    if (!row) throw new NotFound('entity')
    return row
  }

  async partnerOf(entityId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('entities').select('partner_id').where('id', '=', entityId).executeTakeFirst()
    return row?.partner_id
  }

  async info(partnerId: string, entityId: string): Promise<EntityInfo> {
    return toInfo(await this.get(partnerId, entityId))
  }

  async list(partnerId: string): Promise<EntityListItem[]> {
    const rows = await this.db
      .selectFrom('entities')
      .selectAll()
      .where('partner_id', '=', partnerId)
      .orderBy('created_seq')
      .execute()
    return rows.map(toListItem)
  }

  async updateAddress(partnerId: string, entityId: string, address: Address): Promise<void> {
    const result = await this.db
      .updateTable('entities')
      .set({ address: JSON.stringify(address) })
      .where('id', '=', entityId)
      .where('partner_id', '=', partnerId)
      .executeTakeFirst()
    if (result.numUpdatedRows === 0n) throw new NotFound('entity')
  }

  /**
   * Records the bank's KYB/KYC decision. Returns the row as it was before, so the caller
   * can tell a first approval (which opens the first account) from a repeated one.
   */
  async review(
    executor: Executor,
    entityId: string,
    decision: { approve: true } | { approve: false; reason: string },
  ): Promise<{ before: EntityRow; after: EntityRow }> {
    const before = await executor
      .selectFrom('entities')
      .selectAll()
      .where('id', '=', entityId)
      .forUpdate()
      .executeTakeFirst()
    if (!before) throw new NotFound('entity')
    if (!decision.approve && before.review_status === 'approved') {
      throw new Invalid('an approved entity cannot be rejected; its accounts are open', [
        { field: 'entity_id', message: 'already approved' },
      ])
    }
    const now = this.clock.now()
    const after = await executor
      .updateTable('entities')
      .set({
        review_status: decision.approve ? 'approved' : 'rejected',
        review_reason: decision.approve ? null : decision.reason,
        reviewed_at: now,
      })
      .where('id', '=', entityId)
      .returningAll()
      .executeTakeFirstOrThrow()
    if (before.entity_type === 'personal') {
      // A personal entity's KYC is its single user's KYC: the decision covers both.
      await executor
        .updateTable('users')
        .set({
          kyc_status: decision.approve ? 'approved' : 'rejected',
          kyc_reviewed_at: now,
          kyc_rejection_reason: decision.approve ? null : decision.reason,
          verified_at: decision.approve ? now : null,
          updated_at: now,
        })
        .where('entity_id', '=', entityId)
        .where('is_entity_holder', '=', true)
        .execute()
    }
    return { before, after }
  }

  async listForOperator(partnerId: string): Promise<Array<EntityListItem & { partner_id: string; review_status: string; is_root: boolean }>> {
    const rows = await this.db
      .selectFrom('entities')
      .selectAll()
      .where('partner_id', '=', partnerId)
      .orderBy('created_seq')
      .execute()
    return rows.map((row) => ({ ...toListItem(row), partner_id: row.partner_id, review_status: row.review_status, is_root: row.is_root }))
  }
}

/**
 * A person is not born, and an identity document not issued, after today. Checked here
 * rather than in the contract because "today" is the service's clock.
 */
function futureDateIssues(
  request: Extract<EntityCreateRequest, { entity_type: 'personal' }>,
  now: Date,
): Array<{ field: string; message: string }> {
  const fields = ['date_of_birth', 'id_issue_date'] as const
  return fields
    .filter((field) => Date.parse(request[field]) > now.getTime())
    .map((field) => ({ field, message: 'must not be in the future' }))
}

async function insertHolder(
  executor: Executor,
  partnerId: string,
  entityId: string,
  request: Extract<EntityCreateRequest, { entity_type: 'personal' }>,
  now: Date,
): Promise<void> {
  // interface.md: a personal entity gets exactly one user, with the entity's personal
  // details. Its KYC was submitted with the entity, so it starts `pending`.
  await executor
    .insertInto('users')
    .values({
      id: randomUUID(),
      partner_id: partnerId,
      entity_id: entityId,
      is_entity_holder: true,
      first_name: request.first_name,
      last_name: request.last_name,
      email: request.email,
      phone_number: request.phone_number,
      gender: request.gender,
      date_of_birth: request.date_of_birth,
      country: request.country,
      city: request.city ?? '',
      residency: request.residency ?? '',
      id_number: request.id_number,
      id_type: request.id_type,
      id_issue_date: request.id_issue_date,
      id_issue_expiry_date: request.id_issue_expiry_date ?? null,
      title: request.title ?? '',
      permit_number: request.permit_number ?? '',
      kyc_status: 'pending',
      kyc_submitted_at: now,
      created_at: now,
      updated_at: now,
    })
    .execute()
}

function addressOf(row: EntityRow): EntityInfo['address'] {
  const a = row.address
  if (!a) return null
  return {
    address_line_1: a.address_line_1,
    address_line_2: a.address_line_2 ?? '',
    city: a.city ?? '',
    state: a.state ?? '',
    postcode: a.postcode ?? '',
    country: a.country ?? '',
  }
}

function toInfo(row: EntityRow): EntityInfo {
  const common = {
    id: row.id,
    date_created: formatTimestamp(row.created_at),
    name: row.name,
    email: row.email,
    approved: row.review_status === 'approved',
  }
  if (row.entity_type === 'business') {
    return { ...common, trading_name: row.trading_name, entity_type: 'business', address: addressOf(row) }
  }
  return {
    ...common,
    entity_type: 'personal',
    first_name: row.first_name,
    last_name: row.last_name,
    phone_number: row.phone_number,
    gender: row.gender,
    date_of_birth: formatOptionalTimestamp(row.date_of_birth),
    id_number: row.id_number ?? '',
    id_type: row.id_type,
    id_issue_date: formatOptionalTimestamp(row.id_issue_date),
    id_issue_expiry_date: row.id_issue_expiry_date ? formatTimestamp(row.id_issue_expiry_date) : '',
    city: row.city,
    residency: row.residency,
    title: row.title,
    permit_number: row.permit_number,
    address: addressOf(row),
  }
}

function toListItem(row: EntityRow): EntityListItem {
  // interface.md: empty strings for the other type's strings, and the zero timestamp for
  // a business's three personal dates.
  return {
    id: row.id,
    name: row.name,
    trading_name: row.trading_name,
    registration_number: row.registration_number ?? '',
    email: row.email,
    created_at: formatTimestamp(row.created_at),
    entity_type: row.entity_type === 'business' ? 'Business' : 'Personal',
    first_name: row.first_name,
    last_name: row.last_name,
    phone_number: row.phone_number,
    gender: row.gender,
    date_of_birth: formatOptionalTimestamp(row.date_of_birth),
    id_number: row.id_number ?? '',
    id_type: row.id_type,
    id_issue_date: formatOptionalTimestamp(row.id_issue_date),
    id_issue_expiry_date: formatOptionalTimestamp(row.id_issue_expiry_date),
    city: row.city,
    residency: row.residency,
    title: row.title,
    permit_number: row.permit_number,
  }
}
