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

const thisFile = fileURLToPath(import.meta.url)
const root = path.resolve(path.dirname(thisFile), '../..')
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')
const known = new Set(settingNames)

type Service = {
  image?: string
  build?: unknown
  environment?: Record<string, string>
  depends_on?: Record<string, { condition?: string }>
  command?: string[]
  volumes?: string[]
}

test('deployment - compose.yaml runs PostgreSQL, NATS with JetStream and two bank instances on them', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string,
    Service> }
  const { postgres, nats, 'nats-init': natsInit, ...rest } = compose.services
  assert.match(postgres?.image ?? '', /^postgres:/)
  assert.match(nats?.image ?? '', /^nats:/)
  // NATS runs the configuration `bank nats init` writes (which turns JetStream on, for the
  // document dropboxes), and starts only once that has been written.
  assert.equal(natsInit?.build, '.', 'nats-init runs the bank\'s image')
  assert.deepEqual(natsInit?.command?.slice(0, 6), ['node', 'bin/bank.js', 'nats', 'init', '--dir',
    '/nats'])
  assert.deepEqual(nats?.command, ['-c', '/nats/nats-server.conf'])
  assert.equal(nats?.depends_on?.['nats-init']?.condition, 'service_completed_successfully')
  const banks = Object.entries(rest)
  assert.equal(banks.length, 2, 'two bank instances')
  for (const [name, bank] of banks) {
    assert.equal(bank.build, '.', `${name} is built from the Dockerfile`)
    assert.deepEqual(Object.keys(bank.depends_on ?? {}).sort(), ['nats', 'postgres'])
    const env = bank.environment ?? {}
    for (const key of Object.keys(env)) assert.ok(known.has(key),
      `${name} sets ${key}, which the bank does not read`)
    assert.equal(new URL(env.DATABASE_URL!).hostname, 'postgres')
    assert.equal(new URL(env.NATS_URL!).hostname, 'nats')
    assert.equal(new URL(env.NATS_URL!).protocol, 'tls:')
    // The bank logs in with what nats-init wrote, from the same volume, read-only.
    assert.equal(env.NATS_CREDS, '/nats/bank.creds')
    assert.equal(env.NATS_TLS_CA, '/nats/ca.pem')
    assert.ok(bank.volumes?.includes('nats-config:/nats:ro'),
      `${name} mounts nats-init's files read-only`)
    assert.ok(natsInit?.volumes?.includes('nats-config:/nats'))
    assert.ok(env.BANK_SECRETS_KEY, 'instances share one secrets key')
    // Every value the bank would read parses (the secrets key is the operator's own; the
    // files nats-init writes do not exist here, so any existing file stands in for them).
    const config = loadConfig({ ...env, NATS_CREDS: thisFile, NATS_TLS_CA: thisFile,
      BANK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })
    assert.equal(config.sandbox, false, 'compose runs production')
    assert.deepEqual(config.metrics, { host: '0.0.0.0', port: 9464 })
    // Production needs a rail: a folder in the data volume the two instances share.
    assert.equal(config.rail.dir, '/data/rail')
    assert.ok(bank.volumes?.includes('bank-data:/data'), `${name} mounts the shared data volume`)
  }
  assert.deepEqual(banks[0]![1].environment, banks[1]![1].environment,
    'the instances are configured alike (one queue group, one store)')
})

test('deployment - the Dockerfile and the systemd unit start node on the compiled dist/main.js directly', () => {
  assert.ok(fs.existsSync(path.join(root, 'src/main.ts')))
  const dockerfile = read('Dockerfile')
  // Both stages run NODE_IMAGE: Docker Hub's Node.js 20 unless a build says otherwise (without a
  // registry, scripts/podman-images.ts's base; test/deploy/images.test.ts builds and runs it).
  assert.match(dockerfile, /^ARG NODE_IMAGE=node:20-bookworm-slim$/m)
  assert.deepEqual([...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]),
    ['${NODE_IMAGE}', '${NODE_IMAGE}'])
  assert.match(dockerfile, /^CMD \["node", "--max-semi-space-size=64", "dist\/main.js"\]$/m)
  // dist/ is built in a build stage (scripts/build.mjs, the service without the dev entry).
  assert.match(dockerfile, /^RUN node scripts\/build.mjs --production$/m)
  assert.match(dockerfile, /^COPY --from=build \/app\/dist \.\/dist$/m)
  // compose.yaml's nats-init runs `bank nats init` in this image, which makes the TLS files with
  // openssl.
  assert.match(dockerfile, /apt-get install [^\n]*\bopenssl\b/)
  const unit = read('deploy/partner-bank.service')
  assert.match(unit, /^ExecStart=\/usr\/bin\/node --max-semi-space-size=64 dist\/main\.js$/m)
  assert.match(unit, /^KillSignal=SIGTERM$/m)
  for (const [, key] of unit.matchAll(/^Environment=([A-Z_]+)=/gm)) {
    assert.ok(key === 'NODE_ENV' || known.has(key!),
      `the unit sets ${key}, which the bank does not read`)
  }
})
