import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { pino } from 'pino'
import { findNatsServerBinary, startNatsServer } from '../../dev/nats-server.ts'
import { startBank } from '../../src/app.ts'
import type { Module } from '../../src/module.ts'
import { modules } from '../../src/modules.ts'
import { buildOrder, composeServices, type Toolkits } from '../../src/services.ts'
import { notesModule } from '../fixtures/capability/notes/notes-module.ts'
import { rawRequest, useTestBank } from '../support/harness.ts'
import { pgliteSeed } from '../support/templates.ts'

// A capability is one folder: the fixture capability (test/fixtures/capability/notes/: its
// tables, migration, operations, service and declaration) joins the bank by being added to
// the list of modules, as its one line in src/modules.ts would add it. Nothing else of the
// bank is edited: the bank makes its table, builds its service after the module it needs,
// serves its operations and runs its job kind.

const tb = useTestBank()
const dirs: string[] = []
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('capability - a folder and its line in the list of modules: table, service, operations and job kind', async () => {
  await tb.ready
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-capability-'))
  dirs.push(dataDir)
  const group = `capability-${process.pid}`
  // A NATS server of its own: the test bank's answer to subjects it does not serve (404, or
  // 401 for a token it does not know) must not race the fixture bank's.
  const nats = await startNatsServer({ binary: findNatsServerBinary()!,
    storeDir: path.join(dataDir, 'nats') })
  const nc = await connect({ servers: nats.url })
  const bank = await startBank({
    config: { ...tb.config, databaseUrl: undefined, dataDir, serviceName: group,
      queueGroup: group },
    clock: tb.clock,
    log: pino({ level: 'silent' }),
    natsUrl: nats.url,
    pgliteDir: 'memory://',
    pgliteSeed: await pgliteSeed(),
    allowOpenNats: true,
    modules: [...modules, notesModule],
  })
  try {
    const token = bank.bootstrapToken
    assert.ok(token, 'a fresh bank made its first operator')
    const added = await rawRequest(tb, 'ops.fixture.note.add', JSON.stringify({ text: 'hello' }),
      { token }, nc)
    assert.equal(added.code, 200, JSON.stringify(added.body))
    assert.equal(added.body.text, 'hello')
    assert.equal(added.body.created_at, tb.clock.now().toISOString())
    const counted = await rawRequest(tb, 'ops.fixture.note.count', '{}', { token }, nc)
    assert.deepEqual(counted.body, { notes: 1, jobs: ['fixture_notes.tidy'] })
    // Its operations pass through the bank's one endpoint wrapper: validated like any other.
    const invalid = await rawRequest(tb, 'ops.fixture.note.add', JSON.stringify({ text: '' }),
      { token }, nc)
    assert.equal(invalid.code, 400)
    assert.equal(invalid.body.error.type, 'invalid_request')
    const unauthenticated = await rawRequest(tb, 'ops.fixture.note.add', '{"text":"x"}', {}, nc)
    assert.equal(unauthenticated.code, 401)
    assert.ok('notes' in bank.services, 'its service is one of the bank\'s services')
  } finally {
    await bank.stop()
    await nc.close()
    await nats.stop()
  }
})

const toolkits = {} as Toolkits
const bank = {} as Parameters<typeof composeServices>[2]

test('capability - a module is built after the modules it needs, whatever the order of the list', () => {
  const built: string[] = []
  const a: Module = { name: 'a', needs: ['b'], services: (s) => {
    built.push('a')
    return { fromA: (s as unknown as { fromB: string }).fromB + '!' }
  } }
  const b: Module = { name: 'b', services: () => (built.push('b'), { fromB: 'b' }) }
  const services = composeServices([a, b], toolkits, bank) as unknown as Record<string, unknown>
  assert.deepEqual(built, ['b', 'a'])
  assert.equal(services.fromA, 'b!')
  assert.deepEqual(buildOrder(modules).map((m) => m.name).indexOf('ledger') <
    buildOrder(modules).map((m) => m.name).indexOf('transfers'), true)
})

test('capability - a service of a module not in its needs, an unknown need, a cycle and a name built twice stop the start', () => {
  const b: Module = { name: 'b', services: () => ({ fromB: 1 }) }
  const forgetful: Module = { name: 'forgetful', services: (s) =>
    ({ x: (s as unknown as { fromB: number }).fromB }) }
  assert.throws(() => composeServices([b, forgetful], toolkits, bank),
    /module forgetful uses fromB of module b, which is not in its needs/)
  const early: Module = { name: 'early', services: (s) =>
    ({ y: (s as unknown as { later: number }).later }) }
  assert.throws(() => composeServices([early], toolkits, bank),
    /module early uses later, which no module it needs builds/)
  assert.throws(() => composeServices([{ name: 'c', needs: ['nowhere'] }], toolkits, bank),
    /module c needs nowhere, which is not a module/)
  const p: Module = { name: 'p', needs: ['q'] }
  const q: Module = { name: 'q', needs: ['p'] }
  assert.throws(() => composeServices([p, q], toolkits, bank), /modules need each other: p → q → p/)
  const twice: Module = { name: 'twice', services: () => ({ fromB: 2 }) }
  assert.throws(() => composeServices([b, twice], toolkits, bank),
    /service fromB is built by module b and by module twice/)
})
