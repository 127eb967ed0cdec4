import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import { partner_nats_limits_default, type PartnerNatsLimits } from './nats-claims.ts'
import type { NatsAccountsTable, NatsAuthorityTable, NatsUsersTable } from './nats-identity-tables.ts'

// The SQL of the NATS identity tables. Each function takes the executor to run on.

type Executor = Kysely<Database>
export type NatsAuthorityRow = Selectable<NatsAuthorityTable>
export type NatsAccountRow = Selectable<NatsAccountsTable>
export type NatsUserRow = Selectable<NatsUsersTable>

export async function authorityRow(executor: Executor): Promise<NatsAuthorityRow | undefined> {
  return executor.selectFrom('nats_authority').selectAll().where('id', '=', 1).executeTakeFirst()
}

export async function insertAuthority(executor: Executor,
    values: Insertable<NatsAuthorityTable>): Promise<void> {
  await executor.insertInto('nats_authority').values(values).execute()
}

/**
 * Stores the card network's account made for an authority that had none; false when another
 * run stored one first (the row keeps the first).
 */
export async function setCardNetworkAccount(executor: Executor,
    values: { card_network_account: string; card_network_seed_sealed: string }): Promise<boolean> {
  const updated = await executor.updateTable('nats_authority').set(values).where('id', '=', 1)
    .where('card_network_account', 'is', null).executeTakeFirst()
  return updated.numUpdatedRows > 0n
}

export async function insertAccount(executor: Executor,
    values: Insertable<NatsAccountsTable>): Promise<void> {
  await executor.insertInto('nats_accounts').values(values).execute()
}

/** A partner's account, locked for the rest of the transaction when `forUpdate`. */
export async function accountOf(executor: Executor, partnerId: string,
    forUpdate = false): Promise<NatsAccountRow | undefined> {
  let query = executor.selectFrom('nats_accounts').selectAll().where('partner_id', '=', partnerId)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function partnerOfAccountKey(executor: Executor,
    publicKey: string): Promise<string | undefined> {
  const row = await executor.selectFrom('nats_accounts').select('partner_id').where('public_key',
    '=', publicKey).executeTakeFirst()
  return row?.partner_id
}

export async function allAccounts(executor: Executor): Promise<Array<Pick<NatsAccountRow,
    'partner_id' | 'public_key' | 'jwt'>>> {
  return executor.selectFrom('nats_accounts').select(['partner_id', 'public_key', 'jwt']).orderBy(
    'created_at').execute()
}

export async function updateAccountJwt(executor: Executor, partnerId: string, jwt: string,
    issuedAt: number): Promise<void> {
  await executor.updateTable('nats_accounts').set({ jwt, jwt_issued_at: issuedAt }).where(
    'partner_id', '=', partnerId).execute()
}

export async function insertUser(executor: Executor,
    values: Insertable<NatsUsersTable>): Promise<void> {
  await executor.insertInto('nats_users').values(values).execute()
}

export async function usersOf(executor: Executor, partnerId: string): Promise<NatsUserRow[]> {
  return executor.selectFrom('nats_users').selectAll().where('partner_id', '=', partnerId).orderBy(
    'created_seq').execute()
}

/** The partner's revoked users, for its account JWT's revocation list. */
export async function revokedUsersOf(executor: Executor, partnerId: string): Promise<Array<{
    public_key: string; revoked_at: Date }>> {
  const rows = await executor
    .selectFrom('nats_users')
    .select(['public_key', 'revoked_at'])
    .where('partner_id', '=', partnerId)
    .where('revoked_at', 'is not', null)
    .execute()
  return rows.map((row) => ({ public_key: row.public_key, revoked_at: row.revoked_at as Date }))
}

/** One of the partner's users (another partner's is not found). */
export async function userOf(executor: Executor, partnerId: string,
    userId: string): Promise<NatsUserRow | undefined> {
  return executor.selectFrom('nats_users').selectAll().where('id', '=', userId).where('partner_id',
    '=', partnerId).executeTakeFirst()
}

export async function markUserRevoked(executor: Executor, userId: string, at: Date): Promise<void> {
  await executor.updateTable('nats_users').set({ revoked_at: at }).where('id', '=', userId)
    .execute()
}

/** The partner's row, locked: suspension and the account's JWT change together. */
export async function partnerForUpdate(executor: Executor, partnerId: string): Promise<{
    id: string; suspended_at: Date | null } | undefined> {
  return executor.selectFrom('partners').select(['id', 'suspended_at']).where('id', '=', partnerId)
    .forUpdate().executeTakeFirst()
}

export type NatsLimitName = keyof PartnerNatsLimits
export const nats_limit_names = Object.keys(partner_nats_limits_default) as NatsLimitName[]

/** A partner's NATS limits in force, and which of them an operator gave it (the rest: defaults). */
export async function natsLimitsOf(executor: Executor, partnerId: string): Promise<{
    limits: PartnerNatsLimits; own: NatsLimitName[] }> {
  const row = await executor.selectFrom('nats_limits').selectAll().where('partner_id', '=',
    partnerId).executeTakeFirst()
  const limits = { ...partner_nats_limits_default }
  const own: NatsLimitName[] = []
  for (const name of nats_limit_names) {
    const value = row?.[name]
    if (value === null || value === undefined) continue
    limits[name] = Number(value)
    own.push(name)
  }
  return { limits, own }
}

/** Gives the partner the limits named in `change`, keeping its others. */
export async function setNatsLimits(executor: Executor, partnerId: string,
    change: Partial<PartnerNatsLimits>, at: Date): Promise<void> {
  await executor.insertInto('nats_limits').values({ partner_id: partnerId, ...change,
    updated_at: at }).onConflict((oc) => oc.column('partner_id').doUpdateSet({ ...change,
    updated_at: at })).execute()
}

/** Returns the partner to the bank's defaults. */
export async function removeNatsLimits(executor: Executor, partnerId: string): Promise<void> {
  await executor.deleteFrom('nats_limits').where('partner_id', '=', partnerId).execute()
}

/** The JetStream file storage of every partner's account together (bytes). */
export async function partnersJetStreamDisk(executor: Executor): Promise<number> {
  const row = await executor.selectFrom('nats_accounts')
    .leftJoin('nats_limits', 'nats_limits.partner_id', 'nats_accounts.partner_id')
    .select(sql<string>`coalesce(sum(coalesce(nats_limits.jetstream_disk, ${
      partner_nats_limits_default.jetstream_disk}::bigint)), 0)`.as('total'))
    .executeTakeFirst()
  return Number(row?.total ?? 0)
}

/**
 * The JetStream file and memory storage of every partner's account together (bytes), but for
 * `except`'s.
 */
export async function partnersJetStream(executor: Executor,
    except: string): Promise<{ disk: number; memory: number }> {
  const row = await executor.selectFrom('nats_accounts')
    .leftJoin('nats_limits', 'nats_limits.partner_id', 'nats_accounts.partner_id')
    .where('nats_accounts.partner_id', '<>', except)
    .select([
      sql<string>`coalesce(sum(coalesce(nats_limits.jetstream_disk, ${
        partner_nats_limits_default.jetstream_disk}::bigint)), 0)`.as('disk'),
      sql<string>`coalesce(sum(coalesce(nats_limits.jetstream_memory, ${
        partner_nats_limits_default.jetstream_memory}::bigint)), 0)`.as('memory'),
    ])
    .executeTakeFirst()
  return { disk: Number(row?.disk ?? 0), memory: Number(row?.memory ?? 0) }
}
