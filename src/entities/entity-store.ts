import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { Address, EntitiesTable } from './entity-tables.ts'
import type { Database } from '../schema.ts'

// The SQL of the `entities` table, which the entities capability owns: other capabilities
// read an entity through these functions or through EntityService, and none writes it.
// Each function takes the executor to run on, so a caller can use its own transaction.

export type EntityRow = Selectable<EntitiesTable>

type Executor = Kysely<Database>

export async function insertEntity(executor: Executor,
    values: Insertable<EntitiesTable>): Promise<void> {
  await executor.insertInto('entities').values(values).execute()
}

/** The partner's entity, or undefined whether it is missing or another partner's. */
export async function entityOf(executor: Executor, partnerId: string,
    entityId: string): Promise<EntityRow | undefined> {
  return executor
    .selectFrom('entities')
    .selectAll()
    .where('id', '=', entityId)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst()
}

/** Any partner's entity; `lock` holds its row until the caller's transaction ends. */
export async function anyEntity(executor: Executor, entityId: string,
    lock = false): Promise<EntityRow | undefined> {
  let query = executor.selectFrom('entities').selectAll().where('id', '=', entityId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function partnerOfEntity(executor: Executor,
    entityId: string): Promise<string | undefined> {
  const row = await executor.selectFrom('entities').select('partner_id').where('id', '=', entityId)
    .executeTakeFirst()
  return row?.partner_id
}

/** A partner's entities in the order they were created. */
export async function entitiesOf(executor: Executor, partnerId: string): Promise<EntityRow[]> {
  return executor.selectFrom('entities').selectAll().where('partner_id', '=', partnerId).orderBy(
    'created_seq').execute()
}

/** False when the partner has no such entity. */
export async function setEntityAddress(executor: Executor, partnerId: string, entityId: string,
    address: Address): Promise<boolean> {
  const result = await executor
    .updateTable('entities')
    .set({ address: JSON.stringify(address) })
    .where('id', '=', entityId)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Writes a review decision's columns and returns the row as it is now. */
export async function setEntityReview(
  executor: Executor,
  entityId: string,
  review: Pick<Updateable<EntitiesTable>, 'review_status' | 'review_reason' | 'reviewed_at'>,
): Promise<EntityRow> {
  return executor.updateTable('entities').set(review).where('id', '=', entityId).returningAll()
    .executeTakeFirstOrThrow()
}
