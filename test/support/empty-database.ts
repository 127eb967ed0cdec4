import { randomBytes } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, Migrator, PostgresDialect } from 'kysely'
import pg from 'pg'
import { migrations } from '../../src/modules.ts'
import { PGliteDialect } from '../../src/db/pglite-dialect.ts'
import type { Database } from '../../src/schema.ts'
import { storage } from './harness.ts'
import { adminUrl } from './templates.ts'

// An empty database of the storage under test, for tests of the migrations themselves (the
// harness's banks start from a template migrated to the latest).

export interface TestDatabase {
  db: Kysely<Database>
  close(): Promise<void>
}

export async function emptyDatabase(): Promise<TestDatabase> {
  if (storage === 'pglite') {
    const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite: new PGlite() }) })
    return { db, close: () => db.destroy() }
  }
  const name = `bank_empty_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 })
  // pool.end() resolves before the sockets close; the forced drop below may end a closing
  // connection, which must not be an uncaught error.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    async close() {
      await db.destroy()
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

/** Runs the application's migrations up to `name` (all of them without one). */
export async function migrateTo(db: Kysely<Database>, name?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error } = name === undefined ? await migrator.migrateToLatest()
    : await migrator.migrateTo(name)
  if (error) throw error
}
