import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { after, test } from 'node:test'
import { pino } from 'pino'
import { startBank } from '../../src/app.ts'
import { ManualClock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { open_nats_warning } from '../../src/nats-identity/nats-isolation.ts'
import { startAuthorityNats, type AuthorityNats } from '../support/authority-nats.ts'
import { testNats } from '../support/harness.ts'
import { leasePglite } from '../support/store-pool.ts'

// What the bank checks of its NATS connection before it serves: production refuses a
// server partners could share, and says what to do; a sandbox on an open server starts and
// warns. Each bank here has a store of its own; the authority's server is this file's.

const dirs: string[] = []
const authorities: AuthorityNats[] = []
after(async () => {
  for (const authority of authorities) await authority.stop()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function settings(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-isolation-'))
  dirs.push(dataDir)
  // A rail folder: production starts only with a rail configured.
  return loadConfig({ BANK_DATA_DIR: dataDir, LOG_LEVEL: 'silent', BANK_CLEARING_SCHEDULE: 'off',
    BANK_DEBIT_SCHEDULE: 'off', BANK_RAIL_DIR: path.join(dataDir, 'rail'), ...env })
}

async function attempt(env: Record<string, string>, natsUrl: string, store: {
    release(): Promise<void>; store: import('@electric-sql/pglite').PGlite }, lines?: string[]) {
  const config = settings(env)
  const log = lines
    ? pino({ level: 'info' },
      new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
    : createLogger('silent')
  return startBank({ config, clock: new ManualClock('2026-11-23T08:00:00Z'), log, natsUrl, pgliteDir: 'memory://', pglite: store.store })
}

test('nats isolation - production refuses an open NATS server and names `bank nats init`; nothing is served', async () => {
  const nats = await testNats()
  const store = await leasePglite()
  try {
    await assert.rejects(attempt({ BANK_SANDBOX: 'false' }, nats.url, store), (error: Error) => {
      assert.match(error.message, /production \(BANK_SANDBOX=false\) refuses to start on a NATS server that partners could share/)
      assert.match(error.message, /bank nats init/)
      return true
    })
  } finally {
    await store.release()
  }
})

test('nats isolation - a sandbox on an open NATS server starts and warns that any client can read and answer every request', async () => {
  const nats = await testNats()
  const store = await leasePglite()
  const lines: string[] = []
  try {
    const bank = await attempt({ BANK_SANDBOX: 'true' }, nats.url, store, lines)
    await bank.stop()
  } finally {
    await store.release()
  }
  const messages = lines.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map(
    (line) => (JSON.parse(line) as { msg?: string; level?: number }))
  assert.ok(messages.some((line) => line.msg === open_nats_warning && line.level === 40),
    'the start-up log carries the warning')
})

test("nats isolation - with the bank the NATS authority, production refuses another account's creds and an open server", async () => {
  const store = await leasePglite()
  try {
    const config = settings({})
    const authority = await startAuthorityNats(config, config.dataDir, { pglite: store.store, pgliteDir: 'memory://' })
    authorities.push(authority)
    const env = { BANK_SANDBOX: 'false', BANK_DATA_DIR: config.dataDir,
      NATS_TLS_CA: authority.caFile }
    // The operator's creds: a user of the operators' account, not the bank's.
    await assert.rejects(attempt({ ...env, NATS_CREDS: authority.operatorCredsFile }, authority.url,
        store), (error: Error) => {
      assert.match(error.message, /connects as its own NATS account/)
      assert.match(error.message, /bank\.creds/)
      return true
    })
    // The bank's creds, but a server that lets anyone in (the wrong NATS_URL): refused.
    const open = await testNats()
    await assert.rejects(attempt({ BANK_SANDBOX: 'false', BANK_DATA_DIR: config.dataDir, NATS_CREDS: authority.bankCredsFile }, open.url, store), /admits clients without credentials/)
    // The set-up as written: it starts, in production.
    const bank = await attempt({ ...env, NATS_CREDS: authority.bankCredsFile }, authority.url,
      store)
    await bank.stop()
  } finally {
    await store.release()
  }
})
