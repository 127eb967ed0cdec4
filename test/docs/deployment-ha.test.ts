import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { parse } from 'yaml'
import { loadConfig, settingNames } from '../../src/config.ts'
import { natsServerList } from '../../src/nats/nats-connect.ts'
import { clusterSettings } from '../../scripts/topology.ts'

// deploy/compose.ha.yaml (the highly available topology for Docker) cannot be run here: no
// Docker engine. So it is read, with the files it builds from: every service it names exists,
// the PostgreSQL nodes make the promises scripts/topology.ts (whose fault tests run) makes,
// HAProxy's configuration passes `haproxy -c`, the NATS servers form one cluster, and the
// bank instances name only settings the bank has, with values it accepts.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8')

type Service = {
  image?: string
  build?: string | { context: string; dockerfile: string }
  environment?: Record<string, string>
  depends_on?: string[]
  command?: string | string[]
  volumes?: string[]
  ports?: string[]
}
type Compose = { services: Record<string, Service>; volumes: Record<string, unknown> }

const compose = parse(read('deploy/compose.ha.yaml'), { merge: true }) as Compose
const services = compose.services
const postgresNodes = ['pg1', 'pg2']
const natsNodes = ['nats-1', 'nats-2', 'nats-3']
const banks = Object.keys(services).filter((name) => name.startsWith('bank-'))

test('deployment ha - the services, what each depends on, and the volumes they use all exist', () => {
  assert.deepEqual(
    Object.keys(services).sort(),
    ['bank-1', 'bank-2', 'etcd', 'haproxy', ...natsNodes, ...postgresNodes].sort(),
  )
  for (const [name, service] of Object.entries(services)) {
    for (const needed of service.depends_on ?? [])
      assert.ok(services[needed], `${name} depends on ${needed}, which is no service`)
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!
      if (source.startsWith('.'))
        assert.ok(
          fs.existsSync(path.join(root, 'deploy', source)),
          `${name} mounts ${source}, which does not exist`,
        )
      else
        assert.ok(
          source in compose.volumes,
          `${name} mounts the volume ${source}, which is not declared`,
        )
    }
  }
  assert.ok(
    fs.existsSync(path.join(root, 'Dockerfile')),
    'the banks are built from the repository (build: ..)',
  )
})

test('deployment ha - the PostgreSQL nodes run Patroni with the replication promises the tested topology makes', () => {
  for (const name of postgresNodes) {
    const node = services[name]!
    const build = node.build as { context: string; dockerfile: string }
    const dockerfile = read(path.join('deploy', build.context, build.dockerfile))
    assert.match(dockerfile, /^FROM postgres:15/m)
    assert.match(dockerfile, /apt-get install [^\n]*\bpatroni\b/)
    assert.equal(node.environment?.PATRONI_NAME, name)
    assert.equal(node.environment?.PATRONI_RESTAPI_CONNECT_ADDRESS, `${name}:8008`)
    assert.equal(node.environment?.PATRONI_POSTGRESQL_CONNECT_ADDRESS, `${name}:5432`)
    assert.ok(node.depends_on?.includes('etcd'))
  }
  const patroni = parse(read('deploy/ha/patroni.yml')) as {
    etcd: { hosts: string }
    restapi: { listen: string }
    bootstrap: {
      dcs: Record<string, unknown> & { postgresql: { use_pg_rewind: boolean } }
      post_bootstrap: string
    }
    postgresql: { bin_dir: string }
  }
  // etcd's v2 API, as the tested topology uses (scripts/topology.ts says why), and enabled.
  assert.equal(patroni.etcd.hosts, 'etcd:2379')
  assert.ok((services.etcd!.command as string[]).includes('--enable-v2=true'))
  assert.equal(patroni.restapi.listen, '0.0.0.0:8008')
  assert.equal(patroni.postgresql.bin_dir, '/usr/lib/postgresql/15/bin')
  // Synchronous, not strict, failsafe, pg_rewind: what the fault tests run on.
  const tested = clusterSettings()
  const { dcs } = patroni.bootstrap
  for (const key of ['synchronous_mode', 'synchronous_mode_strict', 'failsafe_mode'] as const) {
    assert.equal(dcs[key], tested[key], `patroni.yml's ${key} is what the tested topology runs`)
  }
  assert.equal(dcs.postgresql.use_pg_rewind, tested.postgresql.use_pg_rewind)
  // Production keeps Patroni's own lease (30 s); the test bed shortens it to 10 s.
  assert.equal(dcs.ttl, 30)
  // The bank's role and database, made once where the cluster is created; the script is executable.
  const script = path.join(root, 'deploy/ha', path.basename(patroni.bootstrap.post_bootstrap))
  assert.match(
    fs.readFileSync(script, 'utf8'),
    /create role bank login[\s\S]*create database bank owner bank/,
  )
  assert.ok((fs.statSync(script).mode & 0o111) !== 0, 'post-bootstrap.sh is executable')
})

test('deployment ha - HAProxy sends connections to the node whose Patroni says primary, and its configuration is valid', () => {
  const cfg = read('deploy/ha/haproxy.cfg')
  assert.match(cfg, /option httpchk OPTIONS \/primary/)
  assert.match(cfg, /on-marked-down shutdown-sessions/)
  const servers = [...cfg.matchAll(/^\s*server (\S+) (\S+):5432 .*check port 8008/gm)].map((m) => [
    m[1],
    m[2],
  ])
  assert.deepEqual(
    servers,
    postgresNodes.map((name) => [name, name]),
  )
  const haproxy = services.haproxy!
  assert.ok(
    haproxy.volumes?.some((v) =>
      v.startsWith('./ha/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg'),
    ),
  )
  // `haproxy -c` (CI installs HAProxy for the topology's tests): the names resolve only inside
  // Docker, which the configuration allows for (init-addr none, resolved while it runs).
  const binary = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((file) => fs.existsSync(file))
  if (binary === undefined) {
    assert.equal(process.env.CI, undefined, 'CI installs haproxy')
    return
  }
  const out = execFileSync(binary, ['-c', '-f', path.join(root, 'deploy/ha/haproxy.cfg')], {
    encoding: 'utf8',
    stdio: 'pipe',
  })
  assert.match(out, /Configuration file is valid/)
})

test('deployment ha - the three NATS servers form one JetStream cluster, each routed to the other two', () => {
  for (const name of natsNodes) {
    const command = String(services[name]!.command)
    assert.match(command, new RegExp(`--name ${name} -js `))
    assert.match(command, /--cluster_name bank-nats --cluster nats:\/\/0\.0\.0\.0:6222/)
    const routes = /--routes (\S+)/.exec(command)![1]!.split(',')
    const others = natsNodes
      .filter((other) => other !== name)
      .map((other) => `nats://${other}:6222`)
    assert.deepEqual(routes, others)
  }
})

test('deployment ha - two bank instances, configured alike, on HAProxy and every NATS server', () => {
  assert.deepEqual(banks, ['bank-1', 'bank-2'])
  const known = new Set(settingNames)
  for (const name of banks) {
    const bank = services[name]!
    assert.equal(bank.build, '..')
    assert.deepEqual([...(bank.depends_on ?? [])].sort(), ['haproxy', ...natsNodes].sort())
    const env = bank.environment ?? {}
    for (const key of Object.keys(env))
      assert.ok(known.has(key), `${name} sets ${key}, which the bank does not read`)
    assert.equal(new URL(env.DATABASE_URL!).hostname, 'haproxy')
    // An instance starts while any one NATS server is down.
    assert.deepEqual(
      natsServerList(env.NATS_URL!).map((url) => new URL(url).hostname),
      natsNodes,
    )
    const config = loadConfig({ ...env, BANK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') })
    assert.equal(config.sandbox, true, 'open NATS servers: sandbox mode, as the file says')
  }
  assert.deepEqual(services['bank-1']!.environment, services['bank-2']!.environment)
})
