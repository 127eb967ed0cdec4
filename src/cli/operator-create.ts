import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from './cli-context.ts'
import type { Database } from '../schema.ts'
import type { LocalCommand } from './local-command.ts'

// `bank operator create`: a new operator credential written straight into the bank's
// database, for when the operator token is lost (every other command needs one, so it
// cannot be asked of the bank over NATS). It runs where the database is: DATABASE_URL, or
// the embedded PGlite store in the data directory. PGlite is one process only: opening a
// store the bank has open could damage it, so the command refuses while the store's lock
// file (`postmaster.pid`, which PGlite writes while open and removes on close) is there.

const label_chars_max = 100

export const operatorCreateCommand: LocalCommand = {
  words: 'operator create',
  usage: 'operator create [--label L]',
  summary:
    'A new operator credential, written straight to the database (DATABASE_URL, else the PGlite ' +
      'store in BANK_DATA_DIR, default ./.data), for when the operator token is lost; the token ' +
      'is shown once.',
  positionals: [],
  flags: [{ word: 'label', example: 'L', required: false,
    help: `a note kept with the credential (at most ${label_chars_max} characters)` }],
  notes:
    'Runs on this machine against the database itself, never over NATS, and needs no credential. ' +
    'On PGlite the bank must be stopped first (the store is one process only; the command ' +
    'refuses while it is open). Use the token with BANK_OPERATOR_TOKEN=<token> npx bank …, or ' +
      'save it as <data dir>/operator-token (mode 0600).',
  run: async (args, env) => {
    if (args.flags.label === true || args.flags.label === '') throw new UsageError(
      '--label needs a value')
    const label = typeof args.flags.label === 'string' ? args.flags.label : 'bank operator create'
    if (label.length > label_chars_max) throw new UsageError(
      `--label takes at most ${label_chars_max} characters`)
    const databaseUrl = env.DATABASE_URL?.trim() || undefined
    const dataDir = path.resolve(env.BANK_DATA_DIR || './.data')
    // Loaded here, not at the top: the other commands need no database code.
    const { openDatabase, pgliteDirFor } = await import('../db/database.ts')
    const { migrations } = await import('../modules.ts')
    const { CredentialStore } = await import('../auth/credential-store.ts')
    const { systemClock } = await import('../clock.ts')
    const pgliteDir = pgliteDirFor(dataDir)
    if (databaseUrl) await refuseDatabaseWithoutBank(databaseUrl)
    else refuseUnusableStore(pgliteDir)
    const database = await openDatabase<Database>({ databaseUrl, pgliteDir, poolMax: 1,
      migrations })
    try {
      const issued = await new CredentialStore(database.db, systemClock).issue(database.db,
        { partnerId: null, permissions: [], label })
      return {
        result: {
          id: issued.id,
          token: issued.token,
          label,
          storage: database.storage,
          database: databaseUrl ? withoutPassword(databaseUrl) : pgliteDir,
          use: `BANK_OPERATOR_TOKEN=${issued.token} npx bank …, or save it ` +
            `as ${path.join(dataDir, 'operator-token')} (mode 0600); it is not shown again`,
        },
      }
    } finally {
      await database.close()
    }
  },
}

/**
 * A PostgreSQL database without the bank's tables is not the bank's (a mistyped
 * DATABASE_URL): openDatabase would create them there, with a lone operator credential.
 * A database that cannot be reached is left to openDatabase, whose errors name the setting.
 */
async function refuseDatabaseWithoutBank(databaseUrl: string): Promise<void> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch {
    return
  }
  try {
    const { rows } = await client.query<{ present: boolean }>(`select to_regclass('credentials') is not null as present`)
    if (!rows[0]?.present) {
      throw new Error(`${withoutPassword(databaseUrl)} (DATABASE_URL) has no bank tables: point ` +
        `DATABASE_URL at the bank's database`)
    }
  } finally {
    await client.end()
  }
}

/**
 * No store to write to (openDatabase would make a new, empty one), or one a running bank has open.
 */
function refuseUnusableStore(pgliteDir: string): void {
  if (!fs.existsSync(path.join(pgliteDir, 'PG_VERSION'))) {
    throw new Error(
      `no bank data in ${pgliteDir}: set BANK_DATA_DIR to the bank's data directory, or ` +
        `DATABASE_URL for a bank on PostgreSQL`,
    )
  }
  refuseStoreInUse(pgliteDir)
}

/** An embedded store a running bank has open (PGlite is one process only). */
export function refuseStoreInUse(pgliteDir: string): void {
  const lock = path.join(pgliteDir, 'postmaster.pid')
  if (fs.existsSync(lock)) {
    throw new Error(
      `the embedded store in ${pgliteDir} is open (${lock} exists): stop the bank first, PGlite ` +
        `is one process only. ` +
        'If you are sure no bank runs (it was killed), remove that file and run this again.',
    )
  }
}

/** The URL as it may be shown: the password left out. */
export function withoutPassword(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl)
    url.password = ''
    return url.toString()
  } catch {
    return 'DATABASE_URL'
  }
}
