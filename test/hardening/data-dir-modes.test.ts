import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { OperatorClient } from '../../src/client/index.ts'
import { tightenTree } from '../../src/data-dir.ts'
import { pgliteDirFor } from '../../src/db/database.ts'
import { onboardPartner, startTestBank, storage, testNats } from '../support/harness.ts'
import { registrationNumber } from '../support/fixtures.ts'
import { adminUrl, clonePostgresTemplate, pgliteSeed } from '../support/templates.ts'
import { Cleanup, ServiceProcess, tempDir, withClient } from '../chaos/processes.ts'

// The data directory is the bank's alone (issue 28): the embedded database with the
// credential hashes, the secrets key, the operator token and the NATS URL are created
// owner-only — folders 0700, files 0600 — whatever the umask the bank was started under,
// and a directory an earlier version left looser is tightened at start (src/data-dir.ts).

const loose_umask = 0o022

/** Every entry under `root` (itself included) whose mode is not 0700 (folder) or 0600 (file). */
function looseEntries(root: string): string[] {
  const loose: string[] = []
  const walk = (entry: string) => {
    const stat = fs.lstatSync(entry)
    const mode = stat.mode & 0o777
    if (stat.isDirectory()) {
      if (mode !== 0o700) loose.push(`${path.relative(root, entry) || '.'} ${mode.toString(8)}`)
      for (const name of fs.readdirSync(entry)) walk(path.join(entry, name))
    } else if (mode !== 0o600) {
      loose.push(`${path.relative(root, entry)} ${mode.toString(8)}`)
    }
  }
  walk(root)
  return loose
}

/** Runs `body` with the process umask set to `mask`, then puts the old one back. */
async function underUmask<T>(mask: number, body: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask)
  try {
    return await body()
  } finally {
    process.umask(previous)
  }
}

const cleanup = new Cleanup()
after(() => cleanup.run())

test('data directory - a bank started under umask 022 keeps every file and folder owner-only, across a restart', async () => {
  await underUmask(loose_umask, async () => {
    const tb = await startTestBank({ persistent: true })
    try {
      // The secrets key is made on first use: sealing a partner's webhook secret.
      await onboardPartner(tb)
      assert.ok(fs.existsSync(path.join(tb.config.dataDir, 'secrets-key')),
        'the secrets key was written')
      assert.ok(fs.existsSync(path.join(tb.config.dataDir, 'operator-token')),
        'the operator token was written')
      if (storage === 'pglite') assert.ok(fs.readdirSync(pgliteDirFor(tb.config.dataDir))
        .length > 10, 'the embedded store is on disk')
      assert.deepEqual(looseEntries(tb.config.dataDir), [])
      // Opening the store again rewrites some of its files (PGlite's pg_internal.init, as 0644).
      await tb.restart()
      await onboardPartner(tb)
      assert.deepEqual(looseEntries(tb.config.dataDir), [])
    } finally {
      await tb.stop()
    }
  })
})

test('data directory - npm start under umask 022 tightens what an earlier version left loose and writes owner-only', async () => {
  const dataDir = tempDir(cleanup, 'bank-modes-')
  fs.chmodSync(dataDir, 0o755)
  let databaseUrl = ''
  await underUmask(loose_umask, async () => {
    if (storage === 'postgres') {
      databaseUrl = await clonedDatabase()
    } else {
      // A store as PGlite unpacks it (files 0666, folders 0755 under this umask).
      const store = await PGlite.create(pgliteDirFor(dataDir), { loadDataDir: await pgliteSeed() })
      await store.close()
    }
    // What a private nats-server left under an ordinary umask, and a secrets key of old.
    fs.mkdirSync(path.join(dataDir, 'nats', 'jetstream'), { recursive: true, mode: 0o755 })
    fs.writeFileSync(path.join(dataDir, 'nats', 'jetstream', 'meta.inf'), '{}', { mode: 0o644 })
    fs.writeFileSync(path.join(dataDir, 'secrets-key'), `${randomBytes(32).toString('base64')}\n`,
      { mode: 0o644 })
  })
  assert.notDeepEqual(looseEntries(dataDir), [], 'the data directory starts loose')

  const nats = await testNats()
  const service = await underUmask(loose_umask, () =>
    ServiceProcess.start({ natsUrl: nats.url, databaseUrl, dataDir,
      settings: { BANK_SERVICE_NAME: `modes-${randomBytes(3).toString('hex')}` } }, cleanup),
  )
  assert.match(service.logTail(), /made files and folders of the data directory owner-only/)
  // The operator's first call finds the bank through the files it wrote (nats-url,
  // operator-token); creating a partner seals its webhook secret with the secrets key.
  const operator = OperatorClient.fromDataDir(dataDir)
  try {
    await operator.partners.create({ name: 'Modes (Pty) Ltd', email: 'modes@example.com',
      registration_number: registrationNumber(), trading_name: 'Modes' })
  } finally {
    await operator.close()
  }
  for (const file of ['nats-url', 'operator-token', 'secrets-key']) assert.ok(
    fs.existsSync(path.join(dataDir, file)), `${file} exists`)
  assert.deepEqual(looseEntries(dataDir), [])
  await service.stop()
  assert.deepEqual(looseEntries(dataDir), [])
})

test('data directory - tightening leaves symbolic links and what they point at alone', async () => {
  const outside = tempDir(cleanup, 'bank-modes-outside-')
  const target = path.join(outside, 'shared.txt')
  fs.writeFileSync(target, 'not the bank\'s')
  fs.chmodSync(target, 0o644)
  const dataDir = tempDir(cleanup, 'bank-modes-links-')
  fs.symlinkSync(target, path.join(dataDir, 'link'))
  fs.writeFileSync(path.join(dataDir, 'own'), 'x')
  fs.chmodSync(path.join(dataDir, 'own'), 0o664)
  assert.deepEqual(tightenTree(dataDir), [path.join(dataDir, 'own')])
  assert.equal(fs.statSync(target).mode & 0o777, 0o644)
  assert.equal(fs.statSync(path.join(dataDir, 'own')).mode & 0o777, 0o600)
})

/** A database cloned from the migrated template, dropped again by the clean-up. */
async function clonedDatabase(): Promise<string> {
  const name = `bank_modes_${randomBytes(6).toString('hex')}`
  await clonePostgresTemplate(name)
  cleanup.add(() => withClient(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}
