import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { errors, type Msg } from '@nats-io/transport-node'
import { ServiceError, Svcm, type ServiceClient } from '@nats-io/services'
import { serviceVersion } from '../../src/app.ts'
import { allOperations, contract, subjectFor, subscriptionSubject } from '../../src/contract/index.ts'
import { rawRequest, useTestBank } from '../support/harness.ts'
import { fixtureBankEnv, prepareFixture, type OperationFixture } from './operation-bodies.ts'

// The NATS services protocol (ADR-32, "micro") as our own implementation answers it:
// `$SRV.PING/INFO/STATS` on all three subject forms, one endpoint per operation, and
// statistics that count error replies too, so that `$SRV.STATS` tells the truth.
// The official client (`@nats-io/services`) must find the service as well.

const serviceName = 'partner-bank'
const queueGroup = 'partner-bank'

const tb = useTestBank({ env: fixtureBankEnv })
let f: OperationFixture

before(async () => {
  await tb.ready
  f = await prepareFixture(tb)
})

async function control(subject: string): Promise<any> {
  const reply = await tb.nc.request(subject, '', { timeout: 5_000 })
  return reply.json()
}

function isNoResponders(error: unknown): boolean {
  return error instanceof errors.RequestError && error.isNoResponders()
}

/** ADR-32 metadata is a map of strings to strings. */
function assertStringMap(value: unknown, context: string): void {
  assert.equal(typeof value, 'object', context)
  assert.ok(value !== null && !Array.isArray(value), context)
  for (const [key, entry] of Object.entries(value as object)) assert.equal(typeof entry, 'string',
    `${context}: metadata.${key}`)
}

const forms = (verb: string) => [`$SRV.${verb}`, `$SRV.${verb}.${serviceName}`,
  `$SRV.${verb}.${serviceName}.${tb.bank.micro.id}`]

interface EndpointStats {
  name: string
  subject: string
  queue_group: string
  num_requests: number
  num_errors: number
  last_error: string
  processing_time: number
  average_processing_time: number
}

async function endpointStats(): Promise<Map<string, EndpointStats>> {
  const stats = await control(`$SRV.STATS.${serviceName}.${tb.bank.micro.id}`)
  return new Map((stats.endpoints as EndpointStats[]).map((e) => [e.name, e]))
}

/** The official client collects every answer; with one instance on this server there is one. */
async function collect<T>(iterator: Promise<AsyncIterable<T>>): Promise<T[]> {
  const found: T[] = []
  for await (const item of await iterator) found.push(item)
  return found
}

function officialClient(): ServiceClient {
  // `@nats-io/services` is built against its own copy of nats-core; the connection is the
  // same wire protocol, so the type difference between the two copies is all this cast hides.
  return new Svcm(tb.nc as unknown as ConstructorParameters<typeof Svcm>[0]).client(
    { strategy: 'stall', stall: 1_000, maxWait: 10_000 })
}

test('micro - $SRV.PING answers with a ping_response on all three subject forms', async () => {
  const id = tb.bank.micro.id
  assert.match(id, /^[A-Za-z0-9]+$/)
  const answers = []
  for (const subject of forms('PING')) {
    const ping = await control(subject)
    assert.deepEqual(Object.keys(ping).sort(), ['id', 'metadata', 'name', 'type', 'version'],
      subject)
    assert.equal(ping.type, 'io.nats.micro.v1.ping_response', subject)
    assert.equal(ping.name, serviceName, subject)
    assert.equal(ping.id, id, subject)
    assert.equal(ping.version, serviceVersion, subject)
    assertStringMap(ping.metadata, subject)
    answers.push(ping)
  }
  assert.deepEqual(answers[1], answers[0])
  assert.deepEqual(answers[2], answers[0])
})

test('micro - $SRV subjects of another name or id have no responders', async () => {
  for (const subject of ['$SRV.PING.other-service',
      `$SRV.PING.${serviceName}.${randomUUID().replaceAll('-', '')}`, `$SRV.INFO.other-service`]) {
    await assert.rejects(control(subject), (error: unknown) => isNoResponders(error), subject)
  }
})

test('micro - $SRV.INFO lists one endpoint per operation, placeholder as *, in the queue group', async () => {
  for (const subject of forms('INFO')) {
    const info = await control(subject)
    assert.equal(info.type, 'io.nats.micro.v1.info_response', subject)
    assert.equal(info.name, serviceName)
    assert.equal(info.id, tb.bank.micro.id)
    assert.equal(info.version, serviceVersion)
    assertStringMap(info.metadata, subject)
    assert.match(info.version, /^\d+\.\d+\.\d+/)
    assert.equal(typeof info.description, 'string')
    assert.ok(info.description.length > 0)
    assert.equal(info.endpoints.length, allOperations().length, subject)
    const byName = new Map<string, any>(info.endpoints.map((e: any) => [e.name, e]))
    assert.equal(byName.size, info.endpoints.length, 'endpoint names are unique')
    for (const op of allOperations()) {
      const endpoint = byName.get(op.name)
      assert.ok(endpoint, `${op.name} is missing from INFO`)
      assert.match(endpoint.name, /^[A-Za-z0-9_-]+$/)
      assert.equal(endpoint.subject, subscriptionSubject(op), op.name)
      assert.equal(endpoint.queue_group, queueGroup, op.name)
      assertStringMap(endpoint.metadata, op.name)
      assert.equal(endpoint.metadata.permission, op.permission, op.name)
      if (op.permission === 'operator' || op.permission === 'card_network') {
        assert.ok(!endpoint.subject.includes('*'), op.name)
      } else {
        // A subject's `<partner_id>` or `<entity_id>` token is one wildcard token in the
        // subscription.
        const tokens = op.subject.split('.')
        const wildcard = tokens.findIndex((t) => t === '<partner_id>' || t === '<entity_id>')
        assert.ok(wildcard > 0, op.name)
        assert.equal(endpoint.subject.split('.')[wildcard], '*', op.name)
        assert.equal(endpoint.subject.split('*').length, 2, `${op.name}: exactly one wildcard`)
      }
    }
  }
})

test('micro - $SRV.STATS answers with a stats_response per endpoint', async () => {
  for (const subject of forms('STATS')) {
    const stats = await control(subject)
    assert.equal(stats.type, 'io.nats.micro.v1.stats_response', subject)
    assert.equal(stats.name, serviceName)
    assert.equal(stats.id, tb.bank.micro.id)
    assert.equal(stats.version, serviceVersion)
    assert.ok(!Number.isNaN(Date.parse(stats.started)), `started ${stats.started} is a timestamp`)
    assert.deepEqual(
      stats.endpoints.map((e: EndpointStats) => e.name).sort(),
      allOperations()
        .map((o) => o.name)
        .sort(),
    )
    for (const e of stats.endpoints as EndpointStats[]) {
      assert.equal(e.queue_group, queueGroup)
      for (const key of ['num_requests', 'num_errors', 'processing_time',
          'average_processing_time'] as const) {
        assert.ok(Number.isInteger(e[key]) && e[key] >= 0, `${e.name}.${key} = ${e[key]}`)
      }
      assert.ok(e.num_errors <= e.num_requests, e.name)
      assert.equal(typeof e.last_error, 'string')
    }
  }
})

test('micro - $SRV.STATS counts every request and every error reply, per endpoint', async () => {
  const list = contract.entities.list
  const get = contract.users.get
  const listSubject = subjectFor(list, f.partner.partnerId)
  const getSubject = subjectFor(get, f.partner.partnerId)
  const before = await endpointStats()

  const outcomes = await Promise.all([
    rawRequest(tb, listSubject, '{}', { token: f.partner.token }),
    rawRequest(tb, listSubject, '{}', { token: f.partner.token }),
    rawRequest(tb, listSubject, '', { authorization: `Bearer ${f.partner.token}` }),
    rawRequest(tb, listSubject, '{}', {}), // 401
    rawRequest(tb, listSubject, '{nope', { token: f.partner.token }), // 400
    rawRequest(tb, listSubject, '{}', { token: tb.operatorToken }), // 403
    rawRequest(tb, getSubject, JSON.stringify({ user_id: f.userId }), { token: f.partner.token }),
    rawRequest(tb, getSubject, JSON.stringify({ user_id: randomUUID() }),
      { token: f.partner.token }), // 404
  ])
  assert.deepEqual(
    outcomes.map((o) => o.code),
    [200, 200, 200, 401, 400, 403, 200, 404],
  )

  const afterwards = await endpointStats()
  const delta = (name: string, key: 'num_requests' | 'num_errors') => afterwards.get(name)![key]
    - before.get(name)![key]
  assert.equal(delta(list.name, 'num_requests'), 6)
  assert.equal(delta(list.name, 'num_errors'), 3)
  assert.equal(delta(get.name, 'num_requests'), 2)
  assert.equal(delta(get.name, 'num_errors'), 1)
  assert.match(afterwards.get(get.name)!.last_error, /404/)
  for (const [name, stats] of afterwards) {
    if (name === list.name || name === get.name) continue
    assert.deepEqual(stats, before.get(name), `${name} was not called`)
  }
  for (const name of [list.name, get.name]) {
    const e = afterwards.get(name)!
    assert.ok(e.processing_time > before.get(name)!.processing_time,
      `${name} processing_time grows`)
    assert.ok(e.average_processing_time > 0, name)
    assert.ok(e.average_processing_time <= e.processing_time, name)
  }
})

test('micro - the official @nats-io/services client finds the service by ping, info and stats', async () => {
  const client = officialClient()
  const pings = await collect(client.ping())
  assert.deepEqual(
    pings.map((p) => [p.type, p.name, p.id, p.version]),
    [['io.nats.micro.v1.ping_response', serviceName, tb.bank.micro.id, serviceVersion]],
  )
  const named = await collect(client.ping(serviceName, tb.bank.micro.id))
  assert.equal(named.length, 1)
  assert.equal(named[0]!.id, tb.bank.micro.id)

  const infos = await collect(client.info(serviceName))
  assert.equal(infos.length, 1)
  assert.equal(infos[0]!.type, 'io.nats.micro.v1.info_response')
  assert.deepEqual(
    infos[0]!.endpoints.map((e) => [e.name, e.subject, e.queue_group]).sort(),
    allOperations()
      .map((o) => [o.name, subscriptionSubject(o), queueGroup])
      .sort(),
  )

  const stats = await collect(client.stats(serviceName))
  assert.equal(stats.length, 1)
  assert.equal(stats[0]!.type, 'io.nats.micro.v1.stats_response')
  assert.equal(stats[0]!.endpoints?.length, allOperations().length)
  const listStats = stats[0]!.endpoints?.find((e) => e.name === contract.entities.list.name)
  assert.ok(listStats && listStats.num_requests > 0 && listStats.processing_time > 0)
})

test('micro - the official client reads our error replies as service errors', async () => {
  const subject = subjectFor(contract.users.get, f.partner.partnerId)
  const h = (await import('@nats-io/transport-node')).headers()
  h.set('token', f.partner.token)
  const notFound: Msg = await tb.nc.request(subject, JSON.stringify({ user_id: randomUUID() }),
    { timeout: 5_000, headers: h })
  const asOfficial = notFound as unknown as Parameters<typeof ServiceError.isServiceError>[0]
  assert.equal(ServiceError.isServiceError(asOfficial), true)
  const error = ServiceError.toServiceError(asOfficial)
  assert.equal(error?.code, 404)
  assert.equal(error?.message, 'user not found')

  const ok: Msg = await tb.nc.request(subject, JSON.stringify({ user_id: f.userId }),
    { timeout: 5_000, headers: h })
  assert.equal(ServiceError.isServiceError(ok as unknown as typeof asOfficial), false)
})
