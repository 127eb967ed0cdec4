import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

// The tables of bulk payments (placeholder until they are built).
export const bulkPaymentsMigration: Migration = {
  async up(_db: Kysely<any>) {},
}
