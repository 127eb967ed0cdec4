import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import { toSast } from '../calendar/sa-calendar.ts'
import type { Clock } from '../clock.ts'
import { formatTimestamp } from '../contract/format.ts'
import { accountOf } from '../accounts/account-store.ts'
import { appendAudit } from '../audit/audit-chain.ts'
import { entityOf } from '../entities/entity-store.ts'
import { Invalid, InvalidState, NotFound, Unprocessable } from '../errors.ts'
import { appendEvent } from '../events/event-outbox.ts'
import type { Database } from '../schema.ts'
import { userOf } from '../users/user-store.ts'
import {
  type CardFeatures,
  type CardLimits,
  type CardRequestRequest,
  type CardRequestView,
  type CardStatus,
  type CardView,
  type EditRequest,
  type RespondRequest,
} from './card-contract.ts'
import {
  expiryOf,
  keyedHash,
  mmyyOf,
  newCvv,
  newPan,
  sameHash,
  type CardSecrets,
} from './card-numbers.ts'
import type { CardsTable, CardRequestsTable } from './card-tables.ts'

// Issuing cards: a partner requests a card on an account for its holder; a user of the
// entity approves it (for a business, not the holder: four eyes) and the card is issued,
// active if virtual, inactive until activated with its last four digits if physical. The
// partner edits its name, features, limits and auto-lock time, freezes and unfreezes it,
// ends it (stopped when lost or stolen, cancelled), sets its PIN, and reads its number and
// CVV with the card_details permission only, each read audited.

export type CardRow = Selectable<CardsTable>
type RequestRow = Selectable<CardRequestsTable>

/** Every feature on, no limit: what a request leaves unsaid. */
const defaultFeatures: CardFeatures = {
  domestic: true,
  international: true,
  e_commerce: true,
  atm: true,
  pos: true,
  contactless: true,
}
const noLimits: CardLimits = {
  transaction_enabled: false,
  transaction: 0,
  daily_enabled: false,
  daily: 0,
  monthly_enabled: false,
  monthly: 0,
  yearly_enabled: false,
  yearly: 0,
}

function newRequest(
  partnerId: string,
  entityId: string,
  holderId: string,
  r: CardRequestRequest,
  now: Date,
): RequestRow {
  return {
    id: randomUUID(),
    created_seq: '0',
    partner_id: partnerId,
    entity_id: entityId,
    account_id: r.account_id,
    holder_user_id: holderId,
    requested_by: holderId,
    name: r.name,
    type: r.type,
    use_type: r.use_type,
    features: { ...defaultFeatures, ...r.features },
    limits: { ...noLimits, ...r.limits },
    auto_lock: r.extras?.auto_lock ? new Date(r.extras.auto_lock) : null,
    status: 'pending',
    decided_by: null,
    decided_at: null,
    card_id: null,
    created_at: now,
  }
}

/** Statuses a card can leave; `stopped`, `cancelled` and `expired` are final. */
const live: ReadonlySet<CardStatus> = new Set(['inactive', 'active', 'frozen'])

const four_eyes =
  "must be another user of the entity than the card's holder (a business's cards need four eyes)"

/** How many times a new number is drawn when one is already taken (a 1 in 10^9 event). */
const pan_draws_max = 5

export interface CardSettings {
  /** The card numbers' first six digits. */
  bin: string
}

export class CardService {
  private readonly panKey: Buffer
  readonly pinKey: Buffer

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly secrets: CardSecrets,
    private readonly settings: CardSettings,
  ) {
    this.panKey = secrets.derivedKey('card-pan')
    this.pinKey = secrets.derivedKey('card-pin')
  }

  async request(partnerId: string, r: CardRequestRequest): Promise<{ id: string }> {
    return this.db.transaction().execute(async (trx) => {
      const account = await accountOf(trx, partnerId, r.account_id)
      if (!account) throw new NotFound('account')
      const holder = await approvedUser(trx, partnerId, account.entity_id, r.user_id, 'user_id')
      if (r.type === 1 && !holder.address) {
        throw Invalid.field(
          'type',
          "a physical card needs the holder's address (set it with the user's update)",
        )
      }
      const now = this.clock.now()
      const row = newRequest(partnerId, account.entity_id, holder.id, r, now)
      const { created_seq: _seq, ...values } = row
      await trx
        .insertInto('card_requests')
        .values({
          ...values,
          features: JSON.stringify(row.features),
          limits: JSON.stringify(row.limits),
        })
        .execute()
      await appendEvent(trx, {
        type: 'card.request.created',
        partner_id: partnerId,
        resource_id: row.id,
        data: requestView(row),
        occurred_at: now,
      })
      return { id: row.id }
    })
  }

  async listRequests(
    partnerId: string,
    r: { account_id: string; user_ids?: string[] | undefined },
  ): Promise<{ id: string; requests: CardRequestView[] }> {
    const account = await accountOf(this.db, partnerId, r.account_id)
    if (!account) throw new NotFound('account')
    let query = this.db
      .selectFrom('card_requests')
      .selectAll()
      .where('account_id', '=', account.id)
      .where('partner_id', '=', partnerId)
    if (r.user_ids && r.user_ids.length > 0) query = query.where('holder_user_id', 'in', r.user_ids)
    const rows = await query.orderBy('created_seq', 'desc').execute()
    return { id: account.id, requests: rows.map(requestView) }
  }

  async respond(partnerId: string, r: RespondRequest): Promise<Record<string, never>> {
    await this.db.transaction().execute(async (trx) => {
      const account = await accountOf(trx, partnerId, r.account_id)
      if (!account || account.entity_id !== r.entity_id) throw new NotFound('account')
      const request = await pendingRequest(trx, partnerId, account.id, r.request_id)
      const initiator = await approvedUser(
        trx,
        partnerId,
        account.entity_id,
        r.initiator,
        'initiator',
      )
      const entity = await entityOf(trx, partnerId, account.entity_id)
      if (entity?.entity_type === 'business' && initiator.id === request.holder_user_id) {
        throw Invalid.field('initiator', four_eyes)
      }
      const now = this.clock.now()
      if (!r.approved) {
        await trx
          .updateTable('card_requests')
          .set({ status: 'rejected', decided_by: initiator.id, decided_at: now })
          .where('id', '=', request.id)
          .execute()
        return
      }
      const card = await this.issue(trx, request, now)
      await trx
        .updateTable('card_requests')
        .set({ status: 'approved', decided_by: initiator.id, decided_at: now, card_id: card.id })
        .where('id', '=', request.id)
        .execute()
      await appendEvent(trx, {
        type: 'card.issued',
        partner_id: partnerId,
        resource_id: card.id,
        data: cardView(card, now),
        occurred_at: now,
      })
    })
    return {}
  }

  private async issue(trx: Kysely<Database>, request: RequestRow, now: Date): Promise<CardRow> {
    const { expires_on } = expiryOf(toSast(now).date)
    const id = randomUUID()
    for (let draw = 1; ; draw++) {
      const pan = newPan(this.settings.bin)
      const panHash = keyedHash(this.panKey, pan)
      const taken = await trx
        .selectFrom('cards')
        .select('id')
        .where('pan_hash', '=', panHash)
        .executeTakeFirst()
      if (taken) {
        if (draw >= pan_draws_max)
          throw new Unprocessable('no free card number was found; try again')
        continue
      }
      const row = {
        id,
        partner_id: request.partner_id,
        entity_id: request.entity_id,
        account_id: request.account_id,
        holder_user_id: request.holder_user_id,
        request_id: request.id,
        name: request.name,
        type: request.type,
        use_type: request.use_type,
        auto_lock: request.auto_lock,
        status: (request.type === 1 ? 'inactive' : 'active') as CardStatus,
        last_4: pan.slice(-4),
        pan_hash: panHash,
        pan_sealed: this.secrets.seal(pan, id),
        cvv_sealed: this.secrets.seal(newCvv(), id),
        expires_on,
        pin_hash: null,
        wrong_pins: 0,
        created_at: now,
        updated_at: now,
      }
      await trx
        .insertInto('cards')
        .values({
          ...row,
          features: JSON.stringify(request.features),
          limits: JSON.stringify(request.limits),
        })
        .execute()
      const stored = { ...row, created_seq: '0', version: '0' }
      return { ...stored, features: request.features, limits: request.limits }
    }
  }

  async edit(partnerId: string, r: EditRequest): Promise<Record<string, never>> {
    await this.db.transaction().execute(async (trx) => {
      const card = await cardOf(trx, partnerId, r.card_id, true)
      if (!card || card.entity_id !== r.entity_id) throw new NotFound('card')
      if (!live.has(effectiveStatus(card, this.clock.now())))
        throw new InvalidState(`the card is ${card.status}: it can no longer be changed`, [], 409)
      const changes: Record<string, unknown> = { updated_at: this.clock.now() }
      changes['version'] = nextVersion
      if (r.name !== undefined) changes['name'] = r.name
      if (r.features) changes['features'] = JSON.stringify({ ...card.features, ...r.features })
      if (r.limits) changes['limits'] = JSON.stringify({ ...card.limits, ...r.limits })
      if (r.extras) changes['auto_lock'] = r.extras.auto_lock ? new Date(r.extras.auto_lock) : null
      await trx.updateTable('cards').set(changes).where('id', '=', card.id).execute()
    })
    return {}
  }

  async list(
    partnerId: string,
    r: { entity_id: string; account_id: string; user_ids?: string[] | undefined },
  ): Promise<{ id: string; cards: CardView[] }> {
    const account = await accountOf(this.db, partnerId, r.account_id)
    if (!account || account.entity_id !== r.entity_id) throw new NotFound('account')
    let query = this.db
      .selectFrom('cards')
      .selectAll()
      .where('account_id', '=', account.id)
      .where('partner_id', '=', partnerId)
    if (r.user_ids && r.user_ids.length > 0) query = query.where('holder_user_id', 'in', r.user_ids)
    const rows = await query.orderBy('created_seq', 'desc').execute()
    const now = this.clock.now()
    return { id: account.entity_id, cards: rows.map((row) => cardView(row, now)) }
  }

  /** The number, expiry and CVV; each read is in the audit trail with the credential that asked. */
  async details(
    partnerId: string,
    credentialId: string,
    r: CardAction,
  ): Promise<{ card_number: string; expiry_date: string; cvv: string }> {
    return this.db.transaction().execute(async (trx) => {
      const card = await this.actionCard(trx, partnerId, r, false)
      const now = this.clock.now()
      await appendAudit(trx, {
        subjectId: card.id,
        action: 'card.details_read',
        actor: credentialId,
        at: now,
        details: { partner_id: partnerId, account_id: card.account_id, initiator: r.initiator },
      })
      return {
        card_number: this.secrets.open(card.pan_sealed, card.id),
        expiry_date: mmyyOf(card.expires_on),
        cvv: this.secrets.open(card.cvv_sealed, card.id),
      }
    })
  }

  async updateStatus(
    partnerId: string,
    r: CardAction & { status: CardStatus },
  ): Promise<Record<string, never>> {
    await this.db.transaction().execute(async (trx) => {
      const card = await this.actionCard(trx, partnerId, r, true)
      const now = this.clock.now()
      const current = effectiveStatus(card, now)
      if (current === r.status) return
      const allowed =
        (r.status === 'frozen' && current === 'active') ||
        (r.status === 'active' && current === 'frozen') ||
        ((r.status === 'stopped' || r.status === 'cancelled') && live.has(current))
      if (!allowed) {
        if (r.status === 'inactive' || r.status === 'expired')
          throw Invalid.field('status', 'must be active, frozen, stopped or cancelled')
        throw new InvalidState(`a ${current} card cannot become ${r.status}`, [], 409)
      }
      // Unfreezing clears a passed auto-lock time, or the card would freeze again at once.
      const autoLock =
        r.status === 'active' && card.auto_lock && card.auto_lock <= now ? { auto_lock: null } : {}
      await this.setStatus(trx, card, r.status, now, autoLock)
    })
    return {}
  }

  async activate(
    partnerId: string,
    r: CardAction & { last_4: string },
  ): Promise<Record<string, never>> {
    await this.db.transaction().execute(async (trx) => {
      const card = await this.actionCard(trx, partnerId, r, true)
      if (card.type !== 1)
        throw new InvalidState(
          'only a physical card is activated; a virtual card is active when issued', [], 409,
        )
      if (card.status !== 'inactive') throw new InvalidState(
        `the card is ${card.status}, not inactive`, [], 409)
      if (card.last_4 !== r.last_4) throw Invalid.field('last_4', "is not the card's last 4 digits")
      await this.setStatus(trx, card, 'active', this.clock.now())
    })
    return {}
  }

  async setPin(partnerId: string, r: CardAction & { pin: string }): Promise<Record<string, never>> {
    await this.db.transaction().execute(async (trx) => {
      const card = await this.actionCard(trx, partnerId, r, true)
      if (!live.has(effectiveStatus(card, this.clock.now())))
        throw new InvalidState(`the card is ${card.status}: its PIN cannot be set`, [], 409)
      await trx
        .updateTable('cards')
        .set({
          pin_hash: pinHash(this.pinKey, card.id, r.pin),
          wrong_pins: 0,
          updated_at: this.clock.now(),
          version: nextVersion,
        })
        .where('id', '=', card.id)
        .execute()
    })
    return {}
  }

  /** Cancels the account's live cards (its closure), each announced; how many. */
  async cancelAllOf(trx: Kysely<Database>, accountId: string): Promise<number> {
    const now = this.clock.now()
    const cards = await trx.selectFrom('cards').selectAll().where('account_id', '=', accountId)
      .where('status', 'in', [...live]).orderBy('id').forUpdate().execute()
    let cancelled = 0
    for (const card of cards) {
      if (!live.has(effectiveStatus(card, now))) continue
      await this.setStatus(trx, card, 'cancelled', now)
      cancelled++
    }
    return cancelled
  }

  /** Records a new status with its `card.status_changed` event. */
  async setStatus(
    trx: Kysely<Database>,
    card: CardRow,
    status: CardStatus,
    now: Date,
    extra: { auto_lock?: null } = {},
  ): Promise<void> {
    await trx
      .updateTable('cards')
      .set({ status, updated_at: now, version: nextVersion, ...extra })
      .where('id', '=', card.id)
      .execute()
    const changed = { ...card, status, updated_at: now, ...extra }
    await appendEvent(trx, {
      type: 'card.status_changed',
      partner_id: card.partner_id,
      resource_id: card.id,
      data: { ...cardView(changed, now), previous_status: card.status },
      occurred_at: now,
    })
  }

  /**
   * The card an action names on its account, the initiator checked: the holder or a
   * KYC-approved user of the entity.
   */
  private async actionCard(
    trx: Kysely<Database>,
    partnerId: string,
    r: CardAction,
    lock: boolean,
  ): Promise<CardRow> {
    const card = await cardOf(trx, partnerId, r.id, lock)
    if (!card || card.account_id !== r.account_id) throw new NotFound('card')
    if (r.initiator !== card.holder_user_id)
      await approvedUser(trx, partnerId, card.entity_id, r.initiator, 'initiator')
    return card
  }
}

interface CardAction {
  account_id: string
  initiator: string
  id: string
}

export function pinHash(key: Buffer, cardId: string, pin: string): string {
  return keyedHash(key, cardId, pin)
}

export function pinMatches(
  key: Buffer,
  card: Pick<CardRow, 'id' | 'pin_hash'>,
  pin: string,
): boolean {
  return card.pin_hash !== null && sameHash(card.pin_hash, pinHash(key, card.id, pin))
}

/** The pending request, locked; 404 when the account has none such, 409 once decided. */
async function pendingRequest(
  trx: Kysely<Database>,
  partnerId: string,
  accountId: string,
  id: string,
) {
  const request = await trx
    .selectFrom('card_requests')
    .selectAll()
    .where('id', '=', id)
    .where('partner_id', '=', partnerId)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst()
  if (!request) throw new NotFound('card request')
  if (request.status !== 'pending')
    throw new InvalidState(`the card request is already ${request.status}`, [], 409)
  return request
}

/** Every change to a card raises its version (card-memory.ts). */
export const nextVersion = sql<string>`version + 1`

export async function cardOf(
  executor: Kysely<Database>,
  partnerId: string | null,
  cardId: string,
  lock: boolean,
): Promise<CardRow | undefined> {
  let query = executor.selectFrom('cards').selectAll().where('id', '=', cardId)
  if (partnerId !== null) query = query.where('partner_id', '=', partnerId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** A user of the partner in the entity, KYC-approved; else a refusal naming `field`. */
async function approvedUser(
  trx: Kysely<Database>,
  partnerId: string,
  entityId: string,
  userId: string,
  field: string,
) {
  const user = await userOf(trx, partnerId, userId)
  if (!user) throw new NotFound('user')
  if (user.entity_id !== entityId)
    throw Invalid.field(field, "is not a user of the account's entity")
  if (user.kyc_status !== 'approved')
    throw Invalid.field(field, `is a user whose KYC is ${user.kyc_status}, not approved`)
  return user
}

/**
 * The status a card has now: a live card past its expiry date is `expired`, and an active
 * one past its auto-lock time is `frozen`, whether or not the row says so yet.
 */
export function effectiveStatus(
  card: Pick<CardRow, 'status' | 'expires_on' | 'auto_lock'>,
  now: Date,
): CardStatus {
  if (live.has(card.status) && card.expires_on < toSast(now).date) return 'expired'
  if (card.status === 'active' && card.auto_lock && card.auto_lock <= now) return 'frozen'
  return card.status
}

export function cardView(row: Omit<CardRow, 'created_seq'>, now: Date): CardView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    use_type: row.use_type,
    last_4: row.last_4,
    date_created: formatTimestamp(row.created_at),
    user_id: row.holder_user_id,
    org_id: row.entity_id,
    features: row.features,
    limits: row.limits,
    extras: { auto_lock: row.auto_lock ? formatTimestamp(row.auto_lock) : null },
    status: effectiveStatus(row, now),
  }
}

function requestView(row: RequestRow): CardRequestView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    use_type: row.use_type,
    created_at: formatTimestamp(row.created_at),
    requested_by: row.requested_by,
    assigned_to: row.holder_user_id,
    features: row.features,
    limits: row.limits,
    extras: { auto_lock: row.auto_lock ? formatTimestamp(row.auto_lock) : null },
    status: row.status,
  }
}

