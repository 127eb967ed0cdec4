import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { startBank, type Bank } from '../../src/app.ts'
import { OperatorClient } from '../../src/client/index.ts'
import { ManualClock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { findNatsServerBinary, freePort } from '../../dev/nats-server.ts'
import { pgliteSeed } from '../support/templates.ts'

// A production NATS asks for a login and speaks TLS. The bank, its SDK's fromEnv and the
// settings that carry them (NATS_USER/NATS_PASSWORD, NATS_TLS_CA, …) are tried against a
// private nats-server that requires both: a certificate made here by openssl for a CA of
// our own, and one user. It is started and stopped by this file, by its process id.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-login-'))
const file = (name: string) => path.join(dir, name)
let url = ''
let server: ReturnType<typeof spawn> | undefined

function openssl(...args: string[]) {
  execFileSync('openssl', args, { stdio: 'ignore' })
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
  })
}

before(async () => {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj',
    '/CN=bank test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'))
  fs.writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout',
    file('server.key'), '-out', file('server.csr'))
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey',
    file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('server.ext'), '-out',
    file('server.pem'))
  const port = await freePort()
  fs.writeFileSync(
    file('nats.conf'),
    [
      `listen: "127.0.0.1:${port}"`,
      `jetstream { store_dir: "${file('js')}" }`,
      `tls { cert_file: "${file('server.pem')}", key_file: "${file('server.key')}" }`,
      'authorization { users: [ { user: "bank", password: "s3cret-pass" } ] }',
      '',
    ].join('\n'),
  )
  server = spawn(findNatsServerBinary()!, ['-c', file('nats.conf')], { stdio: 'ignore' })
  for (let i = 0; i < 200 && !(await listening(port)); i++) await new Promise(
    (r) => setTimeout(r, 50))
  url = `tls://127.0.0.1:${port}`
})

after(() => {
  server?.kill('SIGTERM')
  fs.rmSync(dir, { recursive: true, force: true })
})

async function start(env: Record<string, string>): Promise<Bank> {
  const config = loadConfig({ BANK_DATA_DIR: file('data'), LOG_LEVEL: 'silent',
    BANK_CLEARING_SCHEDULE: 'off', BANK_SANDBOX: 'true', ...env })
  return startBank({ config, clock: new ManualClock('2026-11-23T08:00:00Z'), log: createLogger('silent'), natsUrl: url, pgliteDir: 'memory://', pgliteSeed: await pgliteSeed() })
}

test('nats login - the bank and the SDK log in with NATS_USER/NATS_PASSWORD over TLS to a private CA (NATS_TLS_CA)', async () => {
  const env = { NATS_USER: 'bank', NATS_PASSWORD: 's3cret-pass', NATS_TLS_CA: file('ca.pem') }
  const bank = await start(env)
  try {
    const operator = OperatorClient.fromEnv(
      { env: { ...env, NATS_URL: url, BANK_OPERATOR_TOKEN: bank.bootstrapToken! } })
    const { partners } = await operator.partners.list({})
    assert.deepEqual(partners, [],
      'a request went through the TLS, logged-in connection and was answered')
    await operator.close()
  } finally {
    await bank.stop()
  }
})

test('nats login - a wrong password stops the start with the URL and the settings to check', async () => {
  await assert.rejects(start({ NATS_USER: 'bank', NATS_PASSWORD: 'wrong',
      NATS_TLS_CA: file('ca.pem') }), (error: Error) => {
    assert.match(error.message, new RegExp(`cannot connect to NATS at ${url.replace(/\./g, '\\.')}`))
    assert.match(error.message, /NATS_USER/)
    return true
  })
})

test('nats login - settings that cannot work are refused at start-up', () => {
  assert.throws(() => loadConfig({ NATS_CREDS: file('missing.creds') }), /NATS_CREDS=.*missing\.creds: no such file/)
  assert.throws(() => loadConfig({ NATS_TLS_CERT: file('server.pem') }), /NATS_TLS_CERT and NATS_TLS_KEY go together/)
  assert.throws(() => loadConfig({ NATS_USER: 'a', NATS_PASSWORD: 'b', NATS_TOKEN: 'c' }), /not several/)
  assert.throws(() => loadConfig({ NATS_PASSWORD: 'b' }), /NATS_PASSWORD is set without NATS_USER/)
})
