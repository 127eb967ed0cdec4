import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import { luhnCheckDigit } from '../contract/fields.ts'
import { formatTimestamp } from '../contract/format.ts'
import type { Database } from '../schema.ts'
import type { EntityRow, EntityService } from '../entities/entity-service.ts'
import { Invalid, NotFound, ScreeningHeld, Unavailable } from '../errors.ts'
import type { AccountCreated, AccountDetails } from './account-contract.ts'
import { accountIdByNumber, accountIdsByNumbers, accountOf, accountsOfEntity, insertAccount, nextAccountNumberValue, partnerOfAccount, type AccountRow } from './account-store.ts'

export type { AccountRow } from './account-store.ts'

export interface AccountNumberPool {
  first: number
  last: number
}

// Accounts belong to approved entities. Numbers come from a configured range
// (`BANK_ACCOUNT_NUMBER_FIRST`..`_LAST`) through a database sequence, so every instance
// draws from one pool without collisions; a Luhn check digit is appended so that a
// mistyped account number is caught before money moves.
export class AccountService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly entities: EntityService,
    private readonly pool: AccountNumberPool,
    private readonly defaultCountry: string,
  ) {}

  async create(partnerId: string, entityId: string): Promise<AccountCreated> {
    return this.db.transaction().execute(async (trx) => {
      const entity = await this.entities.get(partnerId, entityId, trx)
      await this.assertNotHeld(trx, entity.id)
      if (entity.review_status !== 'approved') {
        throw new Invalid('the entity is not approved yet (KYB/KYC pending or rejected)', [
          { field: 'entity_id', message: 'entity is not approved' },
        ])
      }
      return toCreated(await this.open(trx, entity, 'standard'))
    })
  }

  /**
   * Opens an account for an entity whose approval the caller has checked. The root
   * entity's first account is the partner's pool account (docs/guides/decisions.md). No
   * account opens for an entity held by its sanctions screening (422 `screening_review`).
   */
  async open(executor: Kysely<Database>, entity: EntityRow,
      kind: AccountRow['kind']): Promise<AccountRow> {
    await this.assertNotHeld(executor, entity.id)
    return insertAccount(executor, {
      id: randomUUID(),
      partner_id: entity.partner_id,
      entity_id: entity.id,
      account_number: await this.nextAccountNumber(executor),
      country: entity.country || this.defaultCountry,
      kind,
      metadata: JSON.stringify({ currency: 'ZAR', kind }),
      created_at: this.clock.now(),
    })
  }

  /** 422 `screening_review` while the entity is held by its sanctions screening. */
  private async assertNotHeld(executor: Kysely<Database>, entityId: string): Promise<void> {
    const screening = await this.entities.screeningStatus(entityId, executor)
    if (screening !== 'clear') throw new ScreeningHeld(entityId, screening)
  }

  async byEntity(partnerId: string, entityId: string) {
    await this.entities.get(partnerId, entityId)
    const rows = await this.list(entityId)
    return { entity_id: entityId, accounts: rows.map(accountItem) }
  }

  /**
   * An entity's accounts, of any partner, for `bank account list`: with their statuses and
   * balances, read from the same rows (the partner's get_by_entity lists none: its reference
   * client reads strict records).
   */
  async listForOperator(entityId: string) {
    await this.entities.getAny(entityId)
    const rows = await this.list(entityId)
    return {
      entity_id: entityId,
      accounts: rows.map((row) => ({ ...accountItem(row), kind: row.kind,
        partner_id: row.partner_id, status: row.status, ...balancesOf(row) })),
    }
  }

  /** One account of any partner with its balances, for `bank account show`. */
  async showForOperator(accountId: string) {
    const partnerId = await this.partnerOf(accountId)
    // The balances come from the partner's own view (get_details), so both read alike.
    const [row, details] = await Promise.all([this.get(partnerId, accountId),
      this.details(partnerId, accountId)])
    return { ...details, partner_id: partnerId, entity_id: row.entity_id, kind: row.kind,
      country: row.country, created_at: formatTimestamp(row.created_at) }
  }

  /**
   * The partner an account belongs to, so that an operator can read it through the
   * partner-scoped services (accounts, transactions); 404 when there is no such account.
   */
  async partnerOf(accountId: string): Promise<string> {
    const partnerId = await partnerOfAccount(this.db, accountId)
    if (partnerId === undefined) throw new NotFound('account')
    return partnerId
  }

  /** Oldest first by `created_at`, as get_by_entity promises. */
  async list(entityId: string, executor: Kysely<Database> = this.db): Promise<AccountRow[]> {
    return accountsOfEntity(executor, entityId)
  }

  /** The partner's account, or 404 whether it is missing or another partner's. */
  async get(partnerId: string, accountId: string,
      executor: Kysely<Database> = this.db): Promise<AccountRow> {
    const row = await accountOf(executor, partnerId, accountId)
    if (!row) throw new NotFound('account')
    return row
  }

  /** The accounts' numbers and entities, by id (a clearing file names each payer's account). */
  async numbersOf(accountIds: readonly string[]): Promise<Map<string, { account_number: string;
      entity_id: string }>> {
    const unique = [...new Set(accountIds)]
    const found = new Map<string, { account_number: string; entity_id: string }>()
    for (let start = 0; start < unique.length; start += 1000) {
      const rows = await this.db.selectFrom('accounts')
        .select(['id', 'account_number', 'entity_id'])
        .where('id', 'in', unique.slice(start, start + 1000)).execute()
      for (const row of rows) found.set(row.id, { account_number: row.account_number,
        entity_id: row.entity_id })
    }
    return found
  }

  /**
   * The id of the account with this number, of any partner: how an internal payment finds
   * its payee. Callers must not show the payee's details to the payer.
   */
  async idByNumber(accountNumber: string): Promise<string | undefined> {
    return accountIdByNumber(this.db, accountNumber)
  }

  /** The ids of the accounts with these numbers, of any partner, by number (a credit file). */
  idsByNumbers(accountNumbers: readonly string[],
      executor: Kysely<Database> = this.db): Promise<Map<string, string>> {
    return accountIdsByNumbers(executor, accountNumbers)
  }

  /** The account's details, and its status (sent as the `Account-Status` reply header). */
  async details(partnerId: string,
      accountId: string): Promise<AccountDetails & { status: AccountRow['status'] }> {
    const row = await this.get(partnerId, accountId)
    return {
      status: row.status,
      account_id: row.id,
      account_number: row.account_number,
      ...balancesOf(row),
      account_type: 'current',
      metadata: metadataOf(row),
    }
  }

  private async nextAccountNumber(executor: Kysely<Database>): Promise<string> {
    const offset = (await nextAccountNumberValue(executor)) - 1n
    const value = BigInt(this.pool.first) + offset
    if (value > BigInt(this.pool.last)) throw new Unavailable(
      'the account number pool is exhausted; the bank must widen it')
    const body = value.toString().padStart(String(this.pool.last).length, '0')
    return body + luhnCheckDigit(body)
  }
}

function toCreated(row: AccountRow): AccountCreated {
  return {
    account_id: row.id,
    entity_id: row.entity_id,
    account_number: row.account_number,
    country: row.country,
    created_at: formatTimestamp(row.created_at),
    account_type: 'current',
  }
}

/** The balance and the available balance (the balance less holds), in cents as strings. */
function balancesOf(row: Pick<AccountRow, 'balance' | 'held'>) {
  const balance = BigInt(row.balance)
  return { balance: balance.toString(), available_balance: (balance - BigInt(row.held)).toString() }
}

/** The stored metadata with every value as a string, as replies carry it. */
export function metadataOf(row: Pick<AccountRow, 'metadata'>): Record<string, string> {
  return Object.fromEntries(Object.entries(row.metadata ?? {}).map(
    ([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]))
}

/** An account as get_by_entity lists it (and a partner's onboarding answers its pool account). */
export function accountItem(row: AccountRow) {
  return {
    account_id: row.id,
    account_number: row.account_number,
    created_at: formatTimestamp(row.created_at),
    account_type: 'current' as const,
    metadata: metadataOf(row),
  }
}
