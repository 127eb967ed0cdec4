import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { test } from 'node:test'
import { openDatabase } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { storage } from '../support/harness.ts'
import { adminUrl } from '../support/templates.ts'

// A DATABASE_URL the bank cannot use is reported in an operator's words: which setting,
// which server, and the way out — not "database migration unknown failed".

async function refusal(databaseUrl: string): Promise<string> {
  try {
    const handle = await openDatabase<Database>({ databaseUrl, pgliteDir: 'memory://', poolMax: 2, migrations })
    await handle.close()
  } catch (error) {
    return (error as Error).message
  }
  assert.fail(`opening ${databaseUrl} should have failed`)
}

/** A loopback port nothing listens on (bound and released at once). */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

if (storage === 'postgres') {
  test('database url - a database that does not exist is named, with how to create it', async () => {
    const url = new URL(adminUrl)
    const name = `bank_missing_${randomBytes(4).toString('hex')}`
    url.pathname = `/${name}`
    const message = await refusal(url.toString())
    assert.match(message, new RegExp(`DATABASE_URL names database "${name}", which does not ` +
      `exist on ${url.hostname}:${url.port || 5432}`))
    assert.match(message, /createdb/)
  })
}

test('database url - no server at the address is named as such', async () => {
  const message = await refusal(`postgres://postgres@127.0.0.1:${await closedPort()}/test`)
  assert.match(message, /no PostgreSQL answers at 127\.0\.0\.1:\d+ \(DATABASE_URL\): ECONNREFUSED/)
})
