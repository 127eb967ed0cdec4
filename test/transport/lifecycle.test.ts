import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { startBank, type Bank } from '../../src/app.ts'
import { BankApiError, OperatorClient } from '../../src/client/index.ts'
import { createLogger } from '../../src/logger.ts'
import { findNatsServerBinary, freePort, startNatsServer } from '../../dev/nats-server.ts'
import { onboardPartner, startTestBank, type TestBank } from '../support/harness.ts'
import { expectApiError } from '../support/assertions.ts'

// Stopping and losing NATS: a stopping instance answers what it has taken and then takes
// nothing more (the queue group sends new work elsewhere, or the caller sees 503); an
// instance whose NATS server goes away serves again once a server is back.

/** Holds every call of `entities.list` until released, counting the calls that entered. */
function gateEntityList(tb: TestBank, expected: number) {
  const entities = tb.bank.services.entities
  const original = entities.list.bind(entities)
  let entered = 0
  let allEntered!: () => void
  let release!: () => void
  const inside = new Promise<void>((resolve) => (allEntered = resolve))
  const gate = new Promise<void>((resolve) => (release = resolve))
  entities.list = async (partnerId: string) => {
    if (++entered === expected) allEntered()
    await gate
    return original(partnerId)
  }
  return { inside, release, entered: () => entered }
}

test('lifecycle - requests in flight when the bank stops are still answered, then it takes no more', async () => {
  const tb = await startTestBank({ persistent: false })
  const partner = await onboardPartner(tb)
  const inFlight = 6
  // Test-only instrumentation: the handlers wait here, so the requests are provably in flight.
  const gate = gateEntityList(tb, inFlight)
  try {
    const replies = Array.from({ length: inFlight }, () => partner.client.entities.list())
    await gate.inside
    const stopping = tb.bank.stop()
    // Once the server has seen the bank leave the queue group, a new request finds no one.
    await tb.bank.nc.flush()
    await expectApiError(partner.client.entities.info({ entity_id: partner.rootEntityId }), 503)
    gate.release()
    const answered = await Promise.all(replies)
    assert.equal(answered.length, inFlight)
    for (const reply of answered) assert.deepEqual(reply.entities.map((e) => e.id),
      [partner.rootEntityId])
    await stopping
    assert.equal(gate.entered(), inFlight, 'no request entered after the stop')
    await expectApiError(partner.client.entities.list(), 503)
  } finally {
    gate.release()
    await tb.stop()
  }
})

test('lifecycle - requests the server has delivered before the stop are answered', async () => {
  const tb = await startTestBank()
  try {
    const partner = await onboardPartner(tb)
    for (let round = 0; round < 3; round++) {
      const replies = Array.from({ length: 20 }, () => partner.client.entities.info(
        { entity_id: partner.rootEntityId }))
      // The server has routed every request to the bank once it answers our flush.
      await tb.nc.flush()
      const stopping = tb.bank.stop()
      const settled = await Promise.allSettled(replies)
      await stopping
      const failures = settled.filter((s) => s.status === 'rejected').map(
        (s) => String((s as PromiseRejectedResult).reason))
      assert.deepEqual(failures, [], `round ${round}`)
      await tb.restart()
    }
  } finally {
    await tb.stop()
  }
})

/** Fails (never passes) when `promise` has not settled within `ms`: a bound, not a wait. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)
  })
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer))
}

/** Resolves on the connection's next status event of `type`. */
async function nextStatus(nc: NatsConnection, type: string): Promise<void> {
  for await (const status of nc.status()) if (status.type === type) return
  throw new Error(`the connection closed before a ${type} event`)
}

test('lifecycle - the bank serves again after its NATS server restarts on the same port', async () => {
  const binary = findNatsServerBinary()
  assert.ok(binary, 'nats-server is needed for this test')
  const tb = await startTestBank()
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-restart-'))
  const port = await freePort()
  let server = await startNatsServer({ binary, storeDir, port })
  let bank: Bank | undefined
  let client: NatsConnection | undefined
  try {
    // The harness's bank steps aside; a bank on the same storage joins our own server.
    await tb.bank.stop()
    bank = await startBank({ config: tb.config, clock: tb.clock, log: createLogger('silent'),
      natsUrl: server.url, validateResponses: true })
    client = await connect({ servers: server.url, maxReconnectAttempts: -1,
      reconnectTimeWait: 100 })
    const operator = new OperatorClient({ connection: client, token: tb.operatorToken })
    const before = await operator.partners.list()

    const bankReconnected = nextStatus(bank.nc, 'reconnect')
    const clientReconnected = nextStatus(client, 'reconnect')
    await server.stop()
    server = await startNatsServer({ binary, storeDir, port })
    await within(Promise.all([bankReconnected, clientReconnected]), 60_000,
      'reconnecting to the new server')
    let attempts = 0
    let served: Awaited<ReturnType<typeof operator.partners.list>> | undefined
    while (!served && attempts < 50) {
      attempts++
      // Each attempt first waits for the bank's own round trip to the new server, never a timer.
      await bank.nc.flush()
      served = await operator.partners.list().catch((error: unknown) => {
        if (error instanceof BankApiError
          && (error.code === 503 || error.code === 504)) return undefined
        throw error
      })
    }
    assert.ok(served, `the bank did not serve again within ${attempts} attempts`)
    assert.deepEqual(served, before)
    const ping = await client.request('$SRV.PING.partner-bank', '', { timeout: 10_000 })
    assert.equal(ping.json<{ id: string }>().id, bank.micro.id,
      'the micro service answers again too')
  } finally {
    await client?.close()
    await bank?.stop()
    await server.stop()
    await tb.stop()
    fs.rmSync(storeDir, { recursive: true, force: true })
  }
})
