import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { OperatorClient } from '../../src/client/index.ts'
import { natsServerList } from '../../src/nats/nats-connect.ts'
import { businessEntity } from '../support/fixtures.ts'
import { ChaosNats, Cleanup, ServiceProcess, tempDir } from '../chaos/processes.ts'
import { cleanEnv, removeTempDirs, runBank } from '../cli/run-bank.ts'

// NATS_URL may name several servers, separated by commas: the servers of one NATS cluster.
// The bank, its CLI and the SDK connect to whichever of them answers, so an instance can start
// (or an operator reach the bank) while one listed server is down.

const cleanup = new Cleanup()
after(async () => {
  await cleanup.run()
  removeTempDirs()
})

/** Nothing listens on port 1 of loopback: a server of the list that is down. */
const down = 'nats://127.0.0.1:1'

test('nats server list - one URL, or several separated by commas, blanks and empty entries dropped', () => {
  assert.deepEqual(natsServerList('nats://a:4222'), ['nats://a:4222'])
  assert.deepEqual(natsServerList(' nats://a:4222 , tls://b:4222,,'), [
    'nats://a:4222',
    'tls://b:4222',
  ])
  assert.deepEqual(natsServerList(['nats://a:4222,nats://b:4222', 'nats://c:4222']), [
    'nats://a:4222',
    'nats://b:4222',
    'nats://c:4222',
  ])
  assert.deepEqual(natsServerList(''), [])
})

test('nats server list - the bank starts and serves while a server its NATS_URL lists is down; the CLI and the SDK reach it through the same list', async () => {
  const nats = await ChaosNats.start(cleanup)
  const dataDir = tempDir(cleanup, 'bank-nats-list-')
  // The dead server in both places: the client shuffles the list, and must get past it either way.
  const list = `${down},${nats.url},${down}`
  const bank = await ServiceProcess.start({ natsUrl: list, databaseUrl: '', dataDir }, cleanup)
  assert.ok(bank.alive)
  const token = fs.readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()

  const status = await runBank(['status'], cleanEnv({ NATS_URL: list }))
  assert.equal(status.code, 0, status.stderr)
  assert.equal((JSON.parse(status.stdout) as { instances: unknown[] }).instances.length, 1)

  const operator = new OperatorClient({ servers: list, token })
  try {
    const { name, email, registration_number, trading_name } = businessEntity()
    const partner = await operator.partners.create({
      name,
      email,
      registration_number,
      trading_name,
    })
    // Each entry of an array may itself be a comma-separated list.
    const again = new OperatorClient({ servers: [down, list], token })
    try {
      assert.match(JSON.stringify(await again.partners.list()), new RegExp(partner.partner_id))
    } finally {
      await again.close()
    }
  } finally {
    await operator.close()
  }
})

test('nats server list - a list where no server answers stops the start, naming the list', async () => {
  const dataDir = tempDir(cleanup, 'bank-nats-list-')
  const start = ServiceProcess.start(
    { natsUrl: `${down},nats://127.0.0.1:2`, databaseUrl: '', dataDir },
    cleanup,
  )
  await assert.rejects(
    start,
    /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1,nats:\/\/127\.0\.0\.1:2/,
  )
})
