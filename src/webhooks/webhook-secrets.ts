import { randomBytes, randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import type { SecretBox } from '../secrets/secret-box.ts'

// Each partner's webhook signing secrets, in the Standard Webhooks format (`whsec_` and
// the base64 of 32 random bytes). A partner has one current secret, made at onboarding in
// the partner's own transaction and shown once in that reply. A rotation makes a new
// current secret (shown once) and lets the one before sign beside it for
// `webhook_secret_overlap_ms` on the bank's clock, so receivers can switch over without
// dropping a delivery; a secret older than that is deleted at the next rotation. Secrets
// are stored sealed (secrets/secret-box.ts) and never leave the bank in any other reply, nor
// in a log. A partner onboarded before webhooks existed gets its first secret when one is first
// needed to sign (it learns it through a rotation).

export const webhook_secret_bytes = 32
export const webhook_secret_overlap_ms = 24 * 3_600_000
// Serialises one partner's rotations (the bank's advisory lock keys are 727xxx).
const secrets_lock_key = 727004

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(webhook_secret_bytes).toString('base64')}`
}

export class WebhookSecrets {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {}

  /**
   * Makes the partner's first secret in the caller's transaction (onboarding); returns it, shown
   * once.
   */
  async create(trx: Kysely<Database>, partnerId: string): Promise<string> {
    assert(trx.isTransaction,
      "a partner's first webhook secret is made in the partner's transaction")
    const secret = newWebhookSecret()
    await trx
      .insertInto('webhook_secrets')
      .values({ id: randomUUID(), partner_id: partnerId, sealed: this.box.seal(secret, partnerId),
        created_at: this.clock.now(), retires_at: null })
      .execute()
    return secret
  }

  /**
   * A new current secret (returned once); the previous one signs on until the answer's
   * `retires_at`.
   */
  async rotate(partnerId: string): Promise<{ secret: string; previous_retires_at: Date | null }> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(secrets_lock_key)}, hashtext(${partnerId}))`.execute(trx)
      const now = this.clock.now()
      // Only the secret just replaced keeps signing: at most two signatures per delivery.
      await trx.deleteFrom('webhook_secrets').where('partner_id', '=', partnerId).where(
        'retires_at', 'is not', null).execute()
      const retiresAt = new Date(now.getTime() + webhook_secret_overlap_ms)
      const replaced = await trx
        .updateTable('webhook_secrets')
        .set({ retires_at: retiresAt })
        .where('partner_id', '=', partnerId)
        .where('retires_at', 'is', null)
        .executeTakeFirst()
      const secret = newWebhookSecret()
      await trx
        .insertInto('webhook_secrets')
        .values({ id: randomUUID(), partner_id: partnerId, sealed: this.box.seal(secret, partnerId),
          created_at: now, retires_at: null })
        .execute()
      return { secret, previous_retires_at: Number(replaced.numUpdatedRows) === 1 ? retiresAt
        : null }
    })
  }

  /**
   * The secrets that sign now, the current one first; makes the first one if the partner has none.
   */
  async signing(partnerId: string): Promise<string[]> {
    let rows = await this.liveRows(partnerId)
    if (!rows.some((row) => row.retires_at === null)) {
      await this.db
        .insertInto('webhook_secrets')
        .values({ id: randomUUID(), partner_id: partnerId, sealed: this.box.seal(newWebhookSecret(),
          partnerId), created_at: this.clock.now(), retires_at: null })
        .onConflict((oc) => oc.column('partner_id').where('retires_at', 'is', null).doNothing())
        .execute()
      rows = await this.liveRows(partnerId)
    }
    assert(rows.length >= 1 && rows.length <= 2,
      `partner ${partnerId} has ${rows.length} signing secrets`)
    return rows.map((row) => this.box.open(row.sealed, partnerId))
  }

  private liveRows(partnerId: string) {
    const now = this.clock.now()
    return this.db
      .selectFrom('webhook_secrets')
      .select(['sealed', 'retires_at'])
      .where('partner_id', '=', partnerId)
      .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', now)]))
      .orderBy(sql`retires_at is null`, 'desc')
      .orderBy('created_at', 'desc')
      .execute()
  }
}
