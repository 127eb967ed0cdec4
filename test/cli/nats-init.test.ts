import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { decode } from '@nats-io/jwt'
import { credsAccount, serverLimitsFor } from '../../src/nats-identity/nats-init.ts'
import { cleanEnv, emptyDir, json, removeTempDirs, runBank } from './run-bank.ts'

// `bank nats init` on a new deployment's embedded store: the files it writes, their modes,
// and that running it again keeps the keys. Never over NATS: NATS_URL points where nothing listens.

after(() => removeTempDirs())

test('nats init - writes the server configuration, TLS files and the bank and operator creds; again, keeps the keys', async () => {
  const dataDir = emptyDir()
  const dir = path.join(emptyDir(), 'nats')
  const env = cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_DATA_DIR: dataDir })
  const first = json(await runBank(['nats', 'init', '--dir', dir, '--listen', '127.0.0.1:14555'],
    env))
  assert.equal(first.created, true)
  for (const file of ['nats-server.conf', 'ca.pem', 'ca-key.pem', 'server-cert.pem',
      'server-key.pem', 'bank.creds', 'operator.creds']) {
    assert.ok(fs.existsSync(path.join(dir, file)), `${file} written`)
  }
  for (const secret of ['ca-key.pem', 'server-key.pem', 'bank.creds', 'operator.creds']) {
    assert.equal(fs.statSync(path.join(dir, secret)).mode & 0o077, 0,
      `${secret} is readable by its owner only`)
  }
  const config = fs.readFileSync(path.join(dir, 'nats-server.conf'), 'utf8')
  assert.match(config, /listen: "127\.0\.0\.1:14555"/)
  assert.match(config, /type: full/)
  assert.match(config, new RegExp(`system_account: "${first.systemAccount}"`))
  for (const account of [first.systemAccount, first.bankAccount,
    first.operatorsAccount]) assert.match(config, new RegExp(`${account}: "`))
  const operatorJwt = /operator: "([^"]+)"/.exec(config)![1]!
  assert.equal(decode(operatorJwt).sub, first.operator)
  assert.equal(credsAccount(fs.readFileSync(path.join(dir, 'bank.creds'), 'utf8')),
    first.bankAccount)
  assert.equal(credsAccount(fs.readFileSync(path.join(dir, 'operator.creds'), 'utf8')),
    first.operatorsAccount)
  // No secret seed of an account or the operator is in any file the servers read. A seed is a
  // whole word of 58 characters, `SO…` or `SA…`; a public key (56 characters, `O…` or `A…`)
  // may hold the letters `SA` inside it, which is no seed (this test once failed on one).
  assert.doesNotMatch(config, /(?<![A-Z2-7])S[OA][A-Z2-7]{56}(?![A-Z2-7])/)

  // The server as a whole is bounded (connections, payload, JetStream), as first.limits says.
  const setting = (name: string) => Number(
    new RegExp(`^\\s*${name}: (\\d+)$`, 'm').exec(config)?.[1])
  assert.deepEqual({ maxConnections: setting('max_connections'), maxPayload: setting('max_payload'),
    maxFileStore: setting('max_file_store'), maxMemoryStore: setting('max_memory_store') },
    first.limits)
  assert.equal(first.limits.maxPayload, 1024 ** 2)
  assert.ok(first.limits.maxFileStore > 0 && first.limits.maxMemoryStore > 0)

  const caBefore = fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8')
  const again = json(await runBank(['nats', 'init', '--dir', dir, '--listen', '127.0.0.1:14555',
    '--jetstream-disk', String(3 * 1024 ** 3), '--jetstream-memory', String(512 * 1024 ** 2)],
    env))
  assert.match(fs.readFileSync(path.join(dir, 'nats-server.conf'), 'utf8'),
    new RegExp(`max_file_store: ${3 * 1024 ** 3}\\n  .*\\n  max_memory_store: ${
      512 * 1024 ** 2}\\n`))
  assert.equal(again.created, false)
  assert.equal(again.operator, first.operator)
  assert.equal(again.bankAccount, first.bankAccount)
  assert.equal(fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8'), caBefore, 'the CA is kept')
})

test('nats init - without --dir, or with a bad --listen, is a usage mistake and writes nothing', async () => {
  const dataDir = emptyDir()
  const env = cleanEnv({ NATS_URL: 'nats://127.0.0.1:1', BANK_DATA_DIR: dataDir })
  const missing = await runBank(['nats', 'init'], env)
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /--dir is required/)
  const dir = path.join(emptyDir(), 'nats')
  const bad = await runBank(['nats', 'init', '--dir', dir, '--listen', 'nowhere'], env)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--listen takes HOST:PORT/)
  const small = await runBank(['nats', 'init', '--dir', dir, '--jetstream-disk', '10k'], env)
  assert.equal(small.code, 2)
  assert.match(small.stderr, /--jetstream-disk takes a whole number of bytes/)
  assert.equal(fs.existsSync(dir), false)
})

test('nats init - the servers\' limits follow the machine: connections in a quarter of its memory, JetStream on half the free disk and a quarter of the memory', () => {
  const gib = 1024 ** 3
  assert.deepEqual(serverLimitsFor({ diskBytes: 100 * gib, memoryBytes: 16 * gib }), {
    maxConnections: 65_536, maxPayload: 1024 ** 2, maxFileStore: 50 * gib,
    maxMemoryStore: 4 * gib })
  const small = serverLimitsFor({ diskBytes: 10 * gib + 12345, memoryBytes: 2 * gib })
  assert.equal(small.maxConnections, 8_192)
  assert.equal(small.maxFileStore % (1024 ** 2), 0, 'whole MiB')
  assert.equal(serverLimitsFor({ diskBytes: gib, memoryBytes: 128 * 1024 ** 2 }).maxConnections,
    1_024, 'never fewer than 1,024')
  assert.deepEqual(serverLimitsFor({ diskBytes: gib, memoryBytes: gib },
    { maxFileStore: 7 * gib, maxMemoryStore: gib }).maxFileStore, 7 * gib)
})
