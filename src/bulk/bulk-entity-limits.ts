import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.ts'
import { TooManyAttempts } from '../errors.ts'
import { bulk_limits } from './bulk-contract.ts'

// What one entity may do with bulk payments across its batches (docs/guides/bulk-payments.md):
//
// - PIN guessing has a budget: once the entity has given `wrong_pins_per_entity_max` (10)
//   wrong PINs within the last `wrong_pin_window_ms` (an hour), every verify of its batches
//   is 429 until the oldest of them is an hour old. The hour is rolling, on the bank's
//   clock: a wrong PIN given at 10:17:30 counts until 11:17:30. A fixed clock hour would let
//   10 guesses at 10:59 and 10 more at 11:00 through; a rolling one holds to 10 in any hour.
// - At most `pending_batches_per_entity_max` (20) of its batches wait for their PIN at once:
//   the next initiate is 429 until one of them is verified, cancelled or ends. A batch whose
//   PIN has expired no longer waits, even before the expiry job has ended it.
//
// A 429 is thrown inside the caller's transaction, so it rolls everything back: it changes
// nothing and is never counted as a wrong PIN. Both checks run under the entity's row in
// `bulk_pin_budgets`, locked for the rest of the transaction (lockEntity), so concurrent
// verifies and initiates of one entity, on any instance sharing the database, take turns:
// two wrong PINs at once cannot both be the tenth, nor two initiates both the twentieth.
// Lock order: a verify locks its batch, then the entity, then accounts; an initiate the
// entity, then accounts; nothing locks a batch after its entity.

type Executor = Kysely<Database>

/** The numbers of these limits: bulk_limits' unless the bank is configured otherwise. */
export interface EntityLimits {
  wrong_pins_per_entity_max: number
  wrong_pin_window_ms: number
  pending_batches_per_entity_max: number
}

export const entity_limits_default: EntityLimits = {
  wrong_pins_per_entity_max: bulk_limits.wrong_pins_per_entity_max,
  wrong_pin_window_ms: bulk_limits.wrong_pin_window_ms,
  pending_batches_per_entity_max: bulk_limits.pending_batches_per_entity_max,
}

/** Locks the entity's row (making it on first use) until the transaction ends. */
export async function lockEntity(trx: Executor, entityId: string): Promise<void> {
  // An upsert that updates on conflict locks the row it finds, in one statement.
  await trx
    .insertInto('bulk_pin_budgets')
    .values({ entity_id: entityId })
    .onConflict((oc) => oc.column('entity_id').doUpdateSet(
      { entity_id: (eb) => eb.ref('excluded.entity_id') }))
    .execute()
}

/** The 429 of an entity that has used its wrong-PIN budget, or undefined. Call under lockEntity. */
export async function pinBudgetRefusal(trx: Executor, entityId: string, now: Date,
    limits: EntityLimits): Promise<TooManyAttempts | undefined> {
  const windowStart = new Date(now.getTime() - limits.wrong_pin_window_ms)
  const recent = await trx
    .selectFrom('bulk_wrong_pins')
    .select('given_at')
    .where('entity_id', '=', entityId)
    .where('given_at', '>', windowStart)
    .orderBy('given_at', 'desc')
    .limit(limits.wrong_pins_per_entity_max)
    .execute()
  if (recent.length < limits.wrong_pins_per_entity_max) return undefined
  // The budget comes back when the oldest of the last ten leaves the hour.
  const oldest = new Date(recent[recent.length - 1]!.given_at)
  const retryAfterMs = oldest.getTime() + limits.wrong_pin_window_ms - now.getTime()
  return new TooManyAttempts(
    `${limits.wrong_pins_per_entity_max} wrong one-time PINs were given for this entity's ` +
    `batches within the last ${limits.wrong_pin_window_ms / 60_000} minutes; ` +
      `verify is refused until ${new Date(now.getTime() + retryAfterMs).toISOString()}`,
    retryAfterMs,
  )
}

/**
 * Counts a wrong PIN against the entity's budget and forgets those older than the window. Call
 * under lockEntity.
 */
export async function recordWrongPin(trx: Executor, entityId: string, batchId: string, now: Date,
    limits: EntityLimits): Promise<void> {
  await trx.insertInto('bulk_wrong_pins').values({ entity_id: entityId, batch_id: batchId,
    given_at: now }).execute()
  const windowStart = new Date(now.getTime() - limits.wrong_pin_window_ms)
  await trx.deleteFrom('bulk_wrong_pins').where('entity_id', '=', entityId).where('given_at', '<=',
    windowStart).execute()
}

/**
 * The 429 of an entity whose batches already wait for their PIN at the limit, or undefined. Call
 * under lockEntity.
 */
export async function pendingBatchesRefusal(trx: Executor, entityId: string, now: Date,
    limits: EntityLimits): Promise<TooManyAttempts | undefined> {
  const pending = await trx
    .selectFrom('bulk_payments')
    .select([sql<string>`count(*)`.as('count'), sql<Date | string | null>`min(otp_expires_at)`.as('first_expiry')])
    .where('entity_id', '=', entityId)
    .where('status', '=', 'pending_otp')
    .where('otp_expires_at', '>', now)
    .executeTakeFirstOrThrow()
  if (Number(pending.count) < limits.pending_batches_per_entity_max) return undefined
  // At the latest, a place frees when the first of them expires.
  const retryAfterMs = new Date(pending.first_expiry!).getTime() - now.getTime()
  return new TooManyAttempts(
    `${limits.pending_batches_per_entity_max} batches of this entity are waiting for their ` +
    `one-time PIN; ` +
      'verify or cancel one of them, or wait for one to expire, before initiating another',
    retryAfterMs,
  )
}
