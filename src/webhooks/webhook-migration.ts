import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

// The tables of webhooks (placeholder until they are built).
export const webhooksMigration: Migration = {
  async up(_db: Kysely<any>) {},
}
