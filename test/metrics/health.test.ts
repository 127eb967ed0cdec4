import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import {
  findNatsServerBinary,
  freePort,
  startNatsServer,
  type PrivateNatsServer,
} from '../../dev/nats-server.ts'
import { startBank, type Bank } from '../../src/app.ts'
import { createLogger } from '../../src/logger.ts'
import { startTestBank, type TestBank } from '../support/harness.ts'

// /healthz (the process answers: always 200) and /readyz (200 only when the database, NATS
// and the job runner answer; else 503 naming what is not ready) on the metrics port, asked
// over real HTTP. The bank here runs on a nats-server of this test's own, on a port of its
// own, which the test kills by its pid and starts again; its job runner is stopped and
// started. No shared service is touched.

let tb: TestBank
let server: PrivateNatsServer
let bank: Bank
let storeDir: string
let natsPort: number
const binary = findNatsServerBinary()

before(async () => {
  assert.ok(binary, 'nats-server is needed for this test')
  tb = await startTestBank({ env: { BANK_METRICS_PORT: '0' } })
  storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-health-'))
  natsPort = await freePort()
  server = await startNatsServer({ binary, storeDir, port: natsPort })
  // The harness's bank steps aside; a bank on the same storage joins our own server.
  await tb.bank.stop()
  bank = await startBank({ config: tb.config, clock: tb.clock, log: createLogger('silent'),
    natsUrl: server.url, validateResponses: true })
})

after(async () => {
  await bank?.stop()
  await server?.stop()
  await tb?.stop()
  if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true })
})

async function get(pathname: string): Promise<{ status: number; text: string }> {
  assert.ok(bank.metricsPort, 'the bank serves its metrics port')
  const response = await fetch(`http://127.0.0.1:${bank.metricsPort}${pathname}`)
  return { status: response.status, text: await response.text() }
}

/** Asks /readyz until it answers `status` (at most `attempts` times, a beat apart). */
async function readyzUntil(status: number, attempts = 60): Promise<{ status: number;
    text: string }> {
  let last = await get('/readyz')
  for (let i = 1; i < attempts && last.status !== status; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    last = await get('/readyz')
  }
  return last
}

test('health - /healthz answers 200; /readyz 200 with each check ok', async () => {
  const health = await get('/healthz')
  assert.equal(health.status, 200)
  assert.equal(health.text, 'alive\n')
  const ready = await get('/readyz')
  assert.equal(ready.status, 200)
  assert.equal(ready.text, 'ready\ndatabase: ok\nnats: ok\njob_runner: ok\n')
  const other = await get('/readyz/more')
  assert.equal(other.status, 404)
})

test('health - a stopped job runner: /readyz 503 naming it, /healthz still 200; ready again once started', async () => {
  await bank.services.jobRunner.stop()
  try {
    const ready = await get('/readyz')
    assert.equal(ready.status, 503)
    assert.equal(ready.text, 'not ready: job_runner\ndatabase: ok\nnats: ok\n' +
      'job_runner: stopped\n')
    assert.equal((await get('/healthz')).status, 200)
    const metrics = (await get('/metrics')).text
    assert.match(metrics, /^bank_ready\{check="job_runner"\} 0$/m, 'Prometheus sees it too')
    assert.match(metrics, /^bank_ready\{check="database"\} 1$/m)
  } finally {
    bank.services.jobRunner.start()
  }
  assert.equal((await get('/readyz')).status, 200)
})

test('health - NATS killed: /readyz 503 naming nats, /healthz still 200; ready again once it is back', async (t) => {
  const pid = server.process.pid
  assert.ok(pid, 'the private nats-server has a pid')
  const exited = new Promise((resolve) => server.process.once('exit', resolve))
  process.kill(pid, 'SIGKILL')
  await exited
  const down = await readyzUntil(503)
  t.diagnostic(down.text)
  assert.equal(down.status, 503)
  const [head, ...lines] = down.text.trim().split('\n')
  assert.equal(head, 'not ready: nats')
  assert.ok(lines.includes('database: ok') && lines.includes('job_runner: ok'), down.text)
  assert.match(lines.find((l) => l.startsWith('nats: '))!, /^nats: (?!ok)/)
  assert.equal((await get('/healthz')).status, 200, 'alive while NATS is away')

  server = await startNatsServer({ binary: binary!, storeDir, port: natsPort })
  const back = await readyzUntil(200, 240)
  assert.equal(back.status, 200, back.text)
})
