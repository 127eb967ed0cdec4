import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { parse } from 'yaml'
import { loadConfig, settingNames } from '../../src/config.ts'

// The deployment files cannot be run here (no Docker, no systemd), so they are read: each
// must parse, run the service's real entry point, and name only settings the bank has, with
// values it accepts.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')
const known = new Set(settingNames)

type Service = { image?: string; build?: unknown; environment?: Record<string, string>; depends_on?: Record<string, unknown>; command?: string[] }

test('deployment - compose.yaml runs PostgreSQL, NATS with JetStream and two bank instances on them', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> }
  const { postgres, nats, ...rest } = compose.services
  assert.match(postgres?.image ?? '', /^postgres:/)
  assert.match(nats?.image ?? '', /^nats:/)
  assert.ok(nats?.command?.includes('-js'), 'NATS runs with JetStream (the document dropboxes need it)')
  const banks = Object.entries(rest)
  assert.equal(banks.length, 2, 'two bank instances')
  for (const [name, bank] of banks) {
    assert.equal(bank.build, '.', `${name} is built from the Dockerfile`)
    assert.deepEqual(Object.keys(bank.depends_on ?? {}).sort(), ['nats', 'postgres'])
    const env = bank.environment ?? {}
    for (const key of Object.keys(env)) assert.ok(known.has(key), `${name} sets ${key}, which the bank does not read`)
    assert.equal(new URL(env.DATABASE_URL!).hostname, 'postgres')
    assert.equal(new URL(env.NATS_URL!).hostname, 'nats')
    assert.ok(env.BANK_SECRETS_KEY, 'instances share one secrets key')
    // Every value the bank would read parses (the secrets key is the operator's own).
    const config = loadConfig({ ...env, BANK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })
    assert.equal(config.sandbox, false, 'compose runs production')
    assert.deepEqual(config.metrics, { host: '0.0.0.0', port: 9464 })
  }
  assert.deepEqual(banks[0]![1].environment, banks[1]![1].environment, 'the instances are configured alike (one queue group, one store)')
})

test('deployment - the Dockerfile and the systemd unit start node on src/main.ts directly', () => {
  assert.ok(fs.existsSync(path.join(root, 'src/main.ts')))
  const dockerfile = read('Dockerfile')
  assert.match(dockerfile, /^FROM node:20/m)
  assert.match(dockerfile, /^CMD \["node", "--max-semi-space-size=64", "--import", "tsx", "src\/main.ts"\]$/m)
  const unit = read('deploy/partner-bank.service')
  assert.match(unit, /^ExecStart=\/usr\/bin\/node --max-semi-space-size=64 --import tsx src\/main\.ts$/m)
  assert.match(unit, /^KillSignal=SIGTERM$/m)
  for (const [, key] of unit.matchAll(/^Environment=([A-Z_]+)=/gm)) {
    assert.ok(key === 'NODE_ENV' || known.has(key!), `the unit sets ${key}, which the bank does not read`)
  }
})
