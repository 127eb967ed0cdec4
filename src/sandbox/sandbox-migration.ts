import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

// The tables of the sandbox (placeholder until they are built).
export const sandboxMigration: Migration = {
  async up(_db: Kysely<any>) {},
}
