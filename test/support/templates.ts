import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { openDatabase } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'

// Pre-migrated storage for test banks. Creating a PGlite cluster (initdb in WebAssembly) and
// migrating it costs several CPU-seconds; loading a dump of one already migrated costs about
// one. Likewise a PostgreSQL database cloned from a migrated template skips the migrations.
// A template is named by a hash of the migration set, so adding or changing a migration
// makes the next test bank build a new one; `npm test` drops the stale ones before a pass.
// Templates are built by the application's own openDatabase(), so a test bank's schema is
// exactly what a fresh production store gets.

export const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * Settings of the PGlite template's cluster (postgresql.auto.conf), which every PGlite test
 * bank starts with. PostgreSQL's default 128 MB of shared buffers are set up (in WebAssembly
 * memory) each time a PGlite starts: a third of a test bank's start. A test bank's data fits
 * in 16 MB many times over; the application's own PGlite keeps the default.
 */
const pgliteTestSettings = `alter system set shared_buffers = '16MB'`

/** Changes whenever a migration is added, renamed or edited (its code is part of the hash). */
export const migrationHash: string = (() => {
  const hash = createHash('sha256')
  for (const name of Object.keys(migrations).sort()) {
    const migration = migrations[name]!
    hash.update(`${name}\n${String(migration.up)}\n${String(migration.down ?? '')}\n`)
  }
  // A dump is only good for the PGlite that made it.
  const pglitePackage = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'))
  hash.update(`pglite ${JSON.parse(fs.readFileSync(pglitePackage, 'utf8')).version}`)
  hash.update(pgliteTestSettings)
  return hash.digest('hex').slice(0, 12)
})()

const pgliteDir = path.join(os.tmpdir(), 'bank-test-templates')
const pgliteFile = path.join(pgliteDir, `pglite-${migrationHash}.tar`)
export const postgresTemplate = `bank_tpl_${migrationHash}`
/**
 * Databases of the store pool (store-pool.ts) are named `<prefix><run id>_…`, the run id
 * being the pid of the `npm test` that made them; a run drops those of runs no longer alive.
 */
export const pooledDatabasePrefix = 'bank_tpool_'

let seed: Promise<Blob> | undefined

/**
 * The migrated PGlite data directory as a dump for `BankOptions.pgliteSeed`, built on first use.
 */
export function pgliteSeed(): Promise<Blob> {
  seed ??= (async () => {
    try {
      const dump = fs.readFileSync(pgliteFile)
      // Marks it in use, so that a run with other migrations (another branch) leaves it.
      const now = new Date()
      fs.utimesSync(pgliteFile, now, now)
      return new Blob([new Uint8Array(dump)])
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    return new Blob([new Uint8Array(await buildPgliteTemplate())])
  })()
  return seed
}

async function buildPgliteTemplate(): Promise<Buffer> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-pglite-template-'))
  try {
    const database = await openDatabase<Database>({ pgliteDir: work, poolMax: 1, migrations })
    await database.close()
    const pglite = await PGlite.create(work)
    await pglite.exec(pgliteTestSettings) // written to postgresql.auto.conf, read at each start
    const dump = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer())
    await pglite.close()
    // Written under a private name and renamed, so that a concurrent reader sees all or nothing.
    fs.mkdirSync(pgliteDir, { recursive: true })
    const partial = `${pgliteFile}.${process.pid}.${randomBytes(4).toString('hex')}`
    fs.writeFileSync(partial, dump)
    fs.renameSync(partial, pgliteFile)
    return dump
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Makes sure the PostgreSQL template of the current migration set exists. It is migrated
 * under a private name and renamed when complete, so a clone never sees a half-built one;
 * it refuses connections, because PostgreSQL cannot copy a database someone is connected to.
 */
export async function ensurePostgresTemplate(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [postgresTemplate])
    if (rowCount) return
    const building = `bank_tplb_${migrationHash}_${randomBytes(4).toString('hex')}`
    await admin.query(`create database ${building}`)
    try {
      const url = new URL(adminUrl)
      url.pathname = `/${building}`
      const database = await openDatabase<Database>({ databaseUrl: url.toString(), pgliteDir: 'memory://', poolMax: 1, migrations })
      await database.close()
      await admin.query(`alter database ${building} allow_connections false`)
      await admin.query(`alter database ${building} rename to ${postgresTemplate}`)
    } catch (error) {
      await admin.query(`drop database if exists ${building} with (force)`)
      // Another process finished the same template first: theirs serves.
      if ((error as { code?: string }).code !== '42P04') throw error
    }
  } finally {
    await admin.end()
  }
}

/** A fresh database cloned from the template; builds the template when it is missing. */
export async function clonePostgresTemplate(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    try {
      await admin.query(`create database ${name} template ${postgresTemplate}`)
    } catch (error) {
      // 3D000: no template for this migration set yet (first use, or a migration was added).
      if ((error as { code?: string }).code !== '3D000') throw error
      await ensurePostgresTemplate()
      await admin.query(`create database ${name} template ${postgresTemplate}`)
    }
  } finally {
    await admin.end()
  }
}

/** Removes templates of other migration sets, and builds the current ones ahead of a pass. */
export async function prepareTemplates(storage: 'pglite' | 'postgres'): Promise<void> {
  if (storage === 'pglite') {
    for (const entry of fs.existsSync(pgliteDir) ? fs.readdirSync(pgliteDir) : []) {
      // Only finished dumps (a `.tar.<pid>.<random>` file is another process's build in
      // progress), and only those unused for an hour: another checkout may be testing its own.
      if (!/^pglite-[0-9a-f]+\.tar$/.test(entry) || entry === path.basename(pgliteFile)) continue
      const file = path.join(pgliteDir, entry)
      const unusedMs = Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs
        ?? Date.now())
      if (unusedMs > 3_600_000) fs.rmSync(file, { force: true })
    }
    await pgliteSeed()
    return
  }
  await ensurePostgresTemplate()
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like 'bank\\_tpl\\_%' and datname <> $1`,
      [postgresTemplate],
    )
    // A template being cloned right now cannot be dropped; it goes on a later run.
    for (const { datname } of rows) await admin.query(`drop database if exists ${datname}`).catch(() => {})
    // Pooled databases a killed run left behind: their run's process is gone.
    const pooled = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'bank\\_tpool\\_%'`)
    for (const { datname } of pooled.rows) {
      const runId = Number(/^bank_tpool_(\d+)_/.exec(datname)?.[1])
      if (!runId || alive(runId)) continue
      await admin.query(`drop database if exists ${datname} with (force)`).catch(() => {})
    }
  } finally {
    await admin.end()
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await prepareTemplates(process.argv[2] === 'postgres' ? 'postgres' : 'pglite')
}
