import fs from 'node:fs'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import { PGliteDialect } from './pglite-dialect.ts'
import { owner_only_dir_mode, tightenTree } from './owner-only.ts'
import { CommitHookDialect } from './commit-hooks.ts'
import { preparingPool } from './speed/prepared.ts'
import {
  boundedPool,
  clientBoundOptions,
  database_bounds_default,
  unbounded,
  withDatabaseBounds,
  type DatabaseBounds,
} from './bounds.ts'
import pg from 'pg'
import { migrateToLatest, type Migrations } from './migrations.ts'

export type Storage = 'postgres' | 'pglite'

/** `DB` is the tables' type: the bank's `Database` (src/schema.ts), which db/ does not know. */
export interface DatabaseHandle<DB> {
  db: Kysely<DB>
  storage: Storage
  close(): Promise<void>
}

export interface DatabaseOptions {
  /**
   * The migrations to bring the store to: the capabilities' own, collected by the
   * composition root (src/modules.ts).
   */
  migrations: Migrations
  /** A PostgreSQL URL; without one the embedded PGlite is used. */
  databaseUrl?: string | undefined
  /** Where PGlite keeps its files; `memory://` keeps nothing. */
  pgliteDir: string
  /** A PGlite data directory dump to load into an empty store (see BankOptions.pgliteSeed). */
  pgliteSeed?: Blob | undefined
  /**
   * An open PGlite to use instead of opening one (migrated here if it needs it). It stays
   * the caller's: closing the database leaves it open.
   */
  pglite?: PGlite | undefined
  poolMax: number
  /** How long each wait on PostgreSQL may last (bounds.ts); the defaults when not given. */
  bounds?: DatabaseBounds | undefined
}

// One SQL dialect (PostgreSQL) on two back ends: a PostgreSQL server for production and
// many instances, PGlite (embedded, one process, no fsync) as the zero-set-up default.
export async function openDatabase<DB>(options: DatabaseOptions): Promise<DatabaseHandle<DB>> {
  if (options.databaseUrl) {
    const bounds = options.bounds ?? database_bounds_default
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolMax,
      // Queries are still sent one at a time; only a transaction's begin rides with the next
      // (speed/prepared.ts).
      pipeline: true,
      // Every wait bounded (bounds.ts): while the database is away, stalled or cut off, a
      // request waits this long for a connection or an answer, then gets 503.
      ...clientBoundOptions(bounds),
      // A minute, not pg's 10 s: a lull of a few seconds no longer closes connections that the
      // next burst opens again, each a new PostgreSQL backend that prepares its statements anew.
      idleTimeoutMillis: 60_000,
    })
    // A database restart must not take the process down. The pool listens for errors of
    // idle connections; a connection checked out by a transaction (between two of its
    // queries) emits 'error' on the client itself, and an unheard 'error' event kills
    // Node. Every client gets a listener: the query in progress fails on its own (the
    // request answers 503) and the pool discards the broken client when it is released.
    pool.on('error', () => {})
    pool.on('connect', (client) => {
      client.on('error', () => {})
    })
    const dialect = new PostgresDialect({ pool: preparingPool(boundedPool(pool, bounds)) })
    const db = new Kysely<DB>({ dialect: new CommitHookDialect(dialect) })
    try {
      // A migration may rewrite a large table, and instances starting together wait for the
      // one that migrates: neither is a request's wait.
      await withDatabaseBounds(unbounded, () => migrateToLatest(db, options.migrations))
    } catch (error) {
      await db.destroy()
      throw new Error(connectionProblem(options.databaseUrl, error) ?? (error as Error).message)
    }
    return { db, storage: 'postgres', close: () => db.destroy() }
  }
  if (options.pglite) {
    // Destroyed on close, so that nothing of this bank reaches the store afterwards; the
    // PGlite itself stays open.
    const db =
      new Kysely<DB>({ dialect: new CommitHookDialect(
      new PGliteDialect({ pglite: options.pglite, borrowed: true })) })
    await migrateToLatest(db, options.migrations)
    return { db, storage: 'pglite', close: () => db.destroy() }
  }
  const onDisk = !options.pgliteDir.startsWith('memory://')
  if (onDisk) fs.mkdirSync(options.pgliteDir, { recursive: true, mode: owner_only_dir_mode })
  const pglite = await PGlite.create(options.pgliteDir, options.pgliteSeed
    ? { loadDataDir: options.pgliteSeed } : {})
  // PGlite unpacks a new store's files as 0666 and rewrites pg_internal.init as 0644 on every
  // open, whatever the umask; the store holds the credential hashes (src/data-dir.ts).
  if (onDisk) tightenTree(options.pgliteDir)
  const db = new Kysely<DB>({ dialect: new CommitHookDialect(new PGliteDialect({ pglite })) })
  await migrateToLatest(db, options.migrations)
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

/**
 * What to tell an operator whose DATABASE_URL cannot be used, in words that name the
 * setting, the server and the way out; undefined for other errors.
 */
function connectionProblem(databaseUrl: string, error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  let where = 'the server DATABASE_URL names'
  let database = ''
  try {
    const url = new URL(databaseUrl)
    where = `${url.hostname}:${url.port || '5432'}`
    database = decodeURIComponent(url.pathname.replace(/^\//, ''))
  } catch {
    return 'DATABASE_URL is not a URL; write it as postgres://user:password@host:5432/database'
  }
  if (code === '3D000') {
    return `DATABASE_URL names database "${database}", which does not exist on ${where}. Create ` +
      `it first (e.g. \`createdb -h ${where.split(':')[0]} ${database}\` or \`psql -c 'create ` +
      `database ${database}'\`); the bank creates its tables itself.`
  }
  if (code === '28P01' || code === '28000') return `PostgreSQL on ${where} refused the user or ` +
    `password in DATABASE_URL (${(error as Error).message}).`
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      || code === 'ETIMEDOUT') {
    return `no PostgreSQL answers at ${where} (DATABASE_URL): ${code}. Is the server running, ` +
      `and is the host and port right?`
  }
  return undefined
}
