import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { storage, testNats } from '../support/harness.ts'
import { adminUrl, clonePostgresTemplate } from '../support/templates.ts'

// `npm start` as a person runs it: Ctrl-C (SIGINT to npm) or a service manager's SIGTERM
// must reach the bank, which stops cleanly ("bank stopped"), rather than be swallowed by the
// shell npm runs scripts in while the bank keeps serving. On PostgreSQL only (a database
// cloned from the migrated template starts in moments; a fresh embedded store would spend
// most of the test creating itself), and once per signal.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const signals = storage === 'postgres' ? (['SIGINT', 'SIGTERM'] as const) : []
for (const signal of signals) {
  test(`npm start - ${signal} to npm stops the bank cleanly`, async (t) => {
    const nats = await testNats()
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-start-'))
    const database = `bank_start_${randomBytes(6).toString('hex')}`
    await clonePostgresTemplate(database)
    t.after(async () => {
      const admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      await admin.query(`drop database if exists ${database} with (force)`)
      await admin.end()
    })
    const databaseUrl = new URL(adminUrl)
    databaseUrl.pathname = `/${database}`
    const child = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, BANK_DATA_DIR: dataDir, DATABASE_URL: databaseUrl.toString(),
        NATS_URL: nats.url, BANK_SANDBOX: 'true',
        BANK_SERVICE_NAME: `start-${signal.toLowerCase()}`, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })))
    const lines: string[] = []
    let started!: () => void
    const startedPromise = new Promise<void>((resolve) => (started = resolve))
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line)
      if (line.includes('bank started')) started()
    })
    child.stderr.resume()
    await Promise.race([startedPromise, exited.then(
      () => assert.fail(`npm start exited before the bank started:\n${lines.join('\n')}`))])
    child.kill(signal)
    const ended = await exited
    // npm ends with 0, or by the same signal once its child has ended (it re-raises SIGINT).
    assert.ok(ended.code === 0 || ended.signal === signal,
      `npm start ended with ${JSON.stringify(ended)}:\n${lines.join('\n')}`)
    assert.ok(lines.some((l) => l.includes(`"signal":"${signal}"`)), 'the bank received the signal')
    assert.ok(lines.some((l) => l.includes('bank stopped')), 'the bank stopped cleanly')
  })
}
