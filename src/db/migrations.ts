import { Migrator, sql, type Kysely, type Migration } from 'kysely'

// Versioned schema changes, applied in order at start (Kysely's Migrator keeps the
// record in `kysely_migration` and takes a lock, so many instances may start at once).
// Never edit a migration that has shipped: add the next one. This file is the toolkit
// only: each capability declares its own migrations in its module (src/<name>/<name>-module.ts),
// and the composition root collects them (src/modules.ts) and hands them to openDatabase.

export type { Migration }

/** Migrations by name; the Migrator runs them in the order of their names. */
export type Migrations = Record<string, Migration>

// PGlite's extended protocol takes one statement at a time, so a migration's script is
// split on statement ends (no migration may put a semicolon inside a literal).
export async function runStatements(db: Kysely<any>, script: string): Promise<void> {
  for (const statement of script.split(/;\s*\n/)) {
    if (statement.trim() !== '') await sql.raw(statement).execute(db)
  }
}

/** Runs the migrations `db` has not had yet; the error names the one that failed. */
export async function migrateToLatest(db: Kysely<any>, migrations: Migrations): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName
    // No migration ran at all: the database could not be reached, which is not a migration's fault.
    if (!failed) throw error
    throw new Error(
      `database migration ${failed} failed: ${String((error as Error).message ?? error)}`)
  }
}
