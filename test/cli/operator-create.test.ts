import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { CredentialStore } from '../../src/auth/credential-store.ts'
import { systemClock } from '../../src/clock.ts'
import { openDatabase, pgliteDirFor } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { pgliteSeed } from '../support/templates.ts'
import { useTestBank } from '../support/harness.ts'
import { bankEnv, cleanEnv, emptyDir, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank operator create`: a new operator credential written straight into the bank's
// database when the operator token is lost. It never goes over NATS (NATS_URL points where
// nothing listens in every run here), and refuses an embedded store another process has open.

const tb = useTestBank({ persistent: true })
before(async () => {
  await tb.ready
})
after(() => removeTempDirs())

/**
 * The environment of a lost token: no credential, NATS unreachable, only the way to the database.
 */
function rescueEnv(storage: Record<string, string>): NodeJS.ProcessEnv {
  return cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', ...storage })
}

test('operator create - a credential written to the running bank’s database works at once (PostgreSQL) or after a restart (PGlite, refused while open)', async () => {
  const onPostgres = tb.config.databaseUrl !== undefined
  const storage: Record<string, string> = onPostgres ? { DATABASE_URL: tb.config.databaseUrl! }
    : { BANK_DATA_DIR: tb.config.dataDir }
  const operatorsBefore = await tb.bank.services.credentials.list(null)
  if (onPostgres) {
    // A DATABASE_URL that reaches a database without the bank's tables (here: a search path
    // with none of them) is refused, and nothing is created there.
    const elsewhere =
      `${tb.config.databaseUrl}?options=${encodeURIComponent('-c search_path=nowhere')}`
    const refused = await runBank(['operator', 'create'], rescueEnv({ DATABASE_URL: elsewhere }))
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /^bank: .* \(DATABASE_URL\) has no bank tables/)
    assert.deepEqual(await tb.bank.services.credentials.list(null), operatorsBefore)
  } else {
    const refused = await runBank(['operator', 'create'], rescueEnv(storage))
    assert.equal(refused.code, 1)
    assert.equal(refused.stdout, '')
    assert.match(refused.stderr, /is open .*stop the bank first/)
    await tb.bank.stop()
  }
  const run = await runBank(['operator', 'create', '--label', 'lost token'], rescueEnv(storage))
  const created = json(run)
  assert.equal(run.stderr, '')
  assert.match(created.token, /^opk_[A-Za-z0-9_-]{43}$/)
  assert.equal(created.label, 'lost token')
  assert.equal(created.storage, tb.bank.database.storage)
  assert.equal(created.database, onPostgres ? tb.config.databaseUrl
    : pgliteDirFor(tb.config.dataDir))
  if (!onPostgres) await tb.restart()

  const operators = await tb.bank.services.credentials.list(null)
  assert.deepEqual(operators.slice(0, operatorsBefore.length), operatorsBefore)
  assert.deepEqual(operators.slice(operatorsBefore.length).map(
    (c) => [c.id, c.label, c.partner_id]), [[created.id, 'lost token', null]])
  const listed = await runBank(['partner', 'list'],
    bankEnv(tb, { BANK_OPERATOR_TOKEN: created.token }))
  assert.equal(listed.code, 0, listed.stderr)
  assert.deepEqual(json(listed), await tb.operator.partners.list())
})

test('operator create - an embedded store: refused while open, written once closed, then verified as an operator', async () => {
  const dataDir = emptyDir()
  const store = await openDatabase<Database>({ pgliteDir: pgliteDirFor(dataDir),
    pgliteSeed: await pgliteSeed(), poolMax: 1, migrations })
  const env = rescueEnv({ BANK_DATA_DIR: dataDir })
  try {
    const refused = await runBank(['operator', 'create'], env)
    assert.equal(refused.code, 1)
    assert.ok(refused.stderr.includes(path.join(pgliteDirFor(dataDir), 'postmaster.pid')),
      refused.stderr)
  } finally {
    await store.close()
  }
  const run = await runBank(['operator', 'create', '--format', 'table'], env)
  assert.equal(run.code, 0, run.stderr)
  const created = tableValues(run.stdout)
  assert.match(created.token ?? '', /^opk_/)
  assert.equal(created.label, 'bank operator create')
  assert.equal(created.storage, 'pglite')

  const reopened = await openDatabase<Database>({ pgliteDir: pgliteDirFor(dataDir), poolMax: 1,
    migrations })
  try {
    const credentials = new CredentialStore(reopened.db, systemClock)
    const caller = await credentials.verify(created.token)
    assert.equal(caller.role, 'operator')
    assert.equal(caller.credentialId, created.id)
    assert.deepEqual((await credentials.list(null)).map((c) => c.id), [created.id])
  } finally {
    await reopened.close()
  }
})

test('operator create - no store in the data directory: exit 1 and none is made; a label too long: exit 2', async () => {
  const dataDir = emptyDir()
  const run = await runBank(['operator', 'create'], rescueEnv({ BANK_DATA_DIR: dataDir }))
  assert.equal(run.code, 1)
  assert.match(run.stderr, /^bank: no bank data in .*set BANK_DATA_DIR .* or DATABASE_URL/)
  assert.deepEqual(fs.readdirSync(dataDir), [])

  const long = await runBank(['operator', 'create', '--label', 'x'.repeat(101)],
    rescueEnv({ BANK_DATA_DIR: dataDir }))
  assert.equal(long.code, 2)
  assert.match(long.stderr, /--label takes at most 100 characters/)
  assert.match(long.stderr, /usage: bank operator create \[--label L\]/)
})

/** `key  value` lines of `--format table` back into an object. */
function tableValues(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [key, ...value] = line.split(/ {2,}/)
        return [key!, value.join('  ')]
      }),
  )
}
