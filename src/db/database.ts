import fs from 'node:fs'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely'
import { Migrator, type MigrationProvider } from 'kysely/migration'
import pg from 'pg'
import { migrations } from './migrations.ts'
import type { Database } from './schema.ts'

export type Storage = 'postgres' | 'pglite'

export interface DatabaseHandle {
  db: Kysely<Database>
  storage: Storage
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** A PostgreSQL URL; without one the embedded PGlite is used. */
  databaseUrl?: string | undefined
  /** Where PGlite keeps its files; `memory://` keeps nothing. */
  pgliteDir: string
  poolMax: number
}

// One SQL dialect (PostgreSQL) on two back ends: a PostgreSQL server for production and
// many instances, PGlite (embedded, one process, no fsync) as the zero-set-up default.
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax })
    // A dropped idle connection must not take the process down; the pool replaces it.
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    await migrate(db)
    return { db, storage: 'postgres', close: () => db.destroy() }
  }
  if (!options.pgliteDir.startsWith('memory://')) fs.mkdirSync(options.pgliteDir, { recursive: true })
  const pglite = await PGlite.create(options.pgliteDir)
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
  await migrate(db)
  return {
    db,
    storage: 'pglite',
    close: async () => {
      await db.destroy()
      if (!pglite.closed) await pglite.close()
    },
  }
}

export function pgliteDirFor(dataDir: string): string {
  return path.join(dataDir, 'pglite')
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new Error(`database migration ${failed} failed: ${String((error as Error).message ?? error)}`)
  }
}
