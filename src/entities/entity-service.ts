import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { formatOptionalTimestamp, formatTimestamp } from '../contract/format.ts'
import type { Address } from './entity-tables.ts'
import type { Database } from '../schema.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { Conflict, Invalid, NotFound } from '../errors.ts'
import type { z } from 'zod'
import type { EntityCreateRequest, EntityInfo, EntityListItem, entityAddress } from './entity-contract.ts'
import type { EntityHolders } from './entity-holders.ts'
import { entityScreened } from '../screening/customer-names.ts'
import type { ScreeningReviews, ScreeningStatus } from '../screening/screening-reviews.ts'

type EntityAddress = z.output<typeof entityAddress>
import {
  anyEntity,
  entitiesOf,
  entityOf,
  insertEntity,
  partnerOfEntity,
  setEntityAddress,
  setEntityReview,
  type EntityRow,
} from './entity-store.ts'

export type { EntityRow } from './entity-store.ts'

type Executor = Kysely<Database>

// Entities: the owners of users and accounts. Every read is scoped to the caller's
// partner; another partner's entity is answered exactly as a missing one (404). A
// personal entity's one user belongs to the users capability: it is created and decided
// through UserService (as EntityHolders), in the same database transaction as the entity.
export class EntityService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly users: EntityHolders,
    private readonly screening: ScreeningReviews,
  ) {}

  /**
   * Creates the entity (and a personal one's user) with its sanctions screening, in one
   * transaction: a hit holds it in review (`screening_status: 'review'`).
   */
  async create(partnerId: string, request: EntityCreateRequest): Promise<{
      id: string; user_ready?: boolean; user_id?: string; screening_status: ScreeningStatus }> {
    const id = randomUUID()
    let userId: string | undefined
    let screening: ScreeningStatus = 'clear'
    const now = this.clock.now()
    if (request.entity_type === 'personal') {
      const issues = futureDateIssues(request, now)
      if (issues.length > 0) throw new Invalid(issues.map((i) => `${i.field} ${i.message}`).join(
        '; '), issues)
    }
    const checked = await this.screening.check({ partnerId, entityId: id, subject: 'entity',
      subjectId: id, cause: 'create', screened: entityScreened(request) })
    try {
      await this.db.transaction().execute(async (trx) => {
        await this.insert(trx, partnerId, id, request, now, false)
        if (request.entity_type === 'personal') userId = await this.users.createHolder(trx,
          partnerId, id, request, now)
        screening = (await this.screening.hold(trx, checked)).status
      })
    } catch (error) {
      if (isUniqueViolation(error)) {
        const field = request.entity_type === 'business' ? 'registration_number' : 'id_number'
        throw new Conflict(`an entity with this ${field} already exists`,
          [{ field, message: 'already exists' }])
      }
      throw error
    }
    return userId === undefined ? { id, screening_status: screening }
      : { id, user_ready: true, user_id: userId, screening_status: screening }
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
      tax_number: request.tax_number ?? '',
      purpose: request.purpose ?? '',
      address: request.address ? JSON.stringify(request.address) : null,
    }
    if (request.entity_type === 'business') {
      await insertEntity(executor, {
        ...common,
        name: request.name,
        trading_name: request.trading_name,
        registration_number: request.registration_number,
      })
      return
    }
    await insertEntity(executor, {
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
  }

  /** The partner's entity, or 404 whether it is missing or another partner's. */
  async get(partnerId: string, entityId: string, executor: Executor = this.db): Promise<EntityRow> {
    const row = await entityOf(executor, partnerId, entityId)
    if (!row) throw new NotFound('entity')
    return row
  }

  /** For operators: any partner's entity. */
  async getAny(entityId: string, executor: Executor = this.db, lock = false): Promise<EntityRow> {
    const row = await anyEntity(executor, entityId, lock)
    if (!row) throw new NotFound('entity')
    return row
  }

  /** The names of the entities, by id (a clearing file names each payer); absent ids left out. */
  async namesOf(entityIds: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(entityIds)]
    const found = new Map<string, string>()
    for (let start = 0; start < unique.length; start += 1000) {
      const rows = await this.db.selectFrom('entities').select(['id', 'name'])
        .where('id', 'in', unique.slice(start, start + 1000)).execute()
      for (const row of rows) found.set(row.id, row.name)
    }
    return found
  }

  async partnerOf(entityId: string): Promise<string | undefined> {
    return partnerOfEntity(this.db, entityId)
  }

  async info(partnerId: string, entityId: string): Promise<EntityInfo & {
      screening_status: ScreeningStatus }> {
    const row = await this.get(partnerId, entityId)
    return { ...toInfo(row), screening_status: await this.screeningStatus(entityId) }
  }

  /** Where the entity's sanctions screening stands (its users' reviews hold it too). */
  async screeningStatus(entityId: string, executor: Executor = this.db): Promise<ScreeningStatus> {
    return (await this.screening.heldStatus(executor, entityId)) ?? 'clear'
  }

  async list(partnerId: string): Promise<EntityListItem[]> {
    const rows = await entitiesOf(this.db, partnerId)
    return rows.map(toListItem)
  }

  async address(partnerId: string, entityId: string): Promise<{
      entity_id: string; address: EntityAddress }> {
    return { entity_id: entityId, address: addressOf(await this.get(partnerId, entityId)) }
  }

  async updateAddress(partnerId: string, entityId: string, address: Address): Promise<void> {
    if (!(await setEntityAddress(this.db, partnerId, entityId, address))) throw new NotFound(
      'entity')
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
    const before = await anyEntity(executor, entityId, true)
    if (!before) throw new NotFound('entity')
    if (!decision.approve && before.review_status === 'approved') {
      throw new Invalid('an approved entity cannot be rejected; its accounts are open', [
        { field: 'entity_id', message: 'already approved' },
      ])
    }
    const now = this.clock.now()
    const after = await setEntityReview(executor, entityId, {
      review_status: decision.approve ? 'approved' : 'rejected',
      review_reason: decision.approve ? null : decision.reason,
      reviewed_at: now,
    })
    // A personal entity's KYC is its single user's KYC: the decision covers both.
    if (before.entity_type === 'personal') await this.users.decideHolderKyc(executor, entityId,
      decision, now)
    return { before, after }
  }

  async listForOperator(
    partnerId: string,
  ): Promise<Array<EntityListItem & { partner_id: string; review_status: string; is_root: boolean;
      tax_number: string; purpose: string }>> {
    const rows = await entitiesOf(this.db, partnerId)
    return rows.map((row) => ({
      ...toListItem(row),
      partner_id: row.partner_id,
      review_status: row.review_status,
      is_root: row.is_root,
      tax_number: row.tax_number,
      purpose: row.purpose,
    }))
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

function addressOf(row: EntityRow): EntityAddress {
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
    return { ...common, trading_name: row.trading_name, entity_type: 'business' }
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
  }
}

function toListItem(row: EntityRow): EntityListItem {
  // Empty strings for the other type's strings, and the zero timestamp for
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
