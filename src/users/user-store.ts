import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable, type UpdateObject } from 'kysely'
import type { Database } from '../schema.ts'
import type { UsersTable } from './user-tables.ts'

// The SQL of the `users` table, which the users capability owns: other capabilities reach
// users through UserService. Each function takes the executor to run on, so a caller can
// write a user in the same database transaction as its own change.

export type UserRow = Selectable<UsersTable>

/** Column changes of one users row, values or SQL expressions. */
export type UserChanges = UpdateObject<Database, 'users'>

type Executor = Kysely<Database>

export async function insertUser(executor: Executor,
    values: Insertable<UsersTable>): Promise<void> {
  await executor.insertInto('users').values(values).execute()
}

/** The partner's user, or undefined; `lock` holds its row until the caller's transaction ends. */
export async function userOf(executor: Executor, partnerId: string, userId: string,
    lock = false): Promise<UserRow | undefined> {
  let query = executor.selectFrom('users').selectAll().where('id', '=', userId).where('partner_id',
    '=', partnerId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** A partner's users, of one entity when `entityId` is given, in the order they were created. */
export async function usersOf(executor: Executor, partnerId: string,
    entityId: string | undefined): Promise<UserRow[]> {
  let query = executor.selectFrom('users').selectAll().where('partner_id', '=', partnerId)
  if (entityId) query = query.where('entity_id', '=', entityId)
  return query.orderBy('created_seq').execute()
}

/** Changes any partner's user; undefined when there is no such user. */
export async function updateUser(executor: Executor, userId: string,
    changes: UserChanges): Promise<UserRow | undefined> {
  return executor.updateTable('users').set(changes).where('id', '=', userId).returningAll()
    .executeTakeFirst()
}

/** Changes the user a personal entity holds (its one automatic user), if it has one. */
export async function updateEntityHolder(executor: Executor, entityId: string,
    changes: UserChanges): Promise<void> {
  await executor.updateTable('users').set(changes).where('entity_id', '=', entityId).where(
    'is_entity_holder', '=', true).execute()
}

/** The recorded KYC submission time, or `at` when none was recorded. */
export function submittedAtOr(at: Date): RawBuilder<Date> {
  return sql<Date>`coalesce(kyc_submitted_at, ${at})`
}
