import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Svcm, type ServiceInfo } from '@nats-io/services'
import { allOperations, contract, subjectFor } from '../../src/contract/index.ts'
import { rawRequest, useTestBank } from '../support/harness.ts'

// Two instances in one queue group (docs/operations.md). Both test banks of this file
// share the file's private nats-server; each has its own storage, which is why the requests
// below are ones every instance answers alike (a missing token: 401).

const first = useTestBank()
const second = useTestBank()

async function collectReplies(subject: string, expected: number): Promise<any[]> {
  // `count` ends as soon as the expected number of instances has answered; maxWait only bounds a
  // failure.
  const replies = await first.nc.requestMany(subject, '',
    { strategy: 'count', maxMessages: expected, maxWait: 10_000 })
  const found: any[] = []
  for await (const reply of replies) found.push(reply.json())
  return found
}

test('scale-out - $SRV.PING returns one answer per instance, with distinct ids', async () => {
  const ids = [first.bank.micro.id, second.bank.micro.id].sort()
  assert.notEqual(ids[0], ids[1])
  for (const subject of ['$SRV.PING', '$SRV.PING.partner-bank']) {
    const pings = await collectReplies(subject, 2)
    assert.deepEqual(
      pings.map((p) => p.id).sort(),
      ids,
      subject,
    )
    for (const ping of pings) assert.equal(ping.type, 'io.nats.micro.v1.ping_response')
  }
  // Addressed by id, only that instance answers.
  const [only] = await collectReplies(`$SRV.PING.partner-bank.${second.bank.micro.id}`, 1)
  assert.equal(only.id, second.bank.micro.id)
})

test('scale-out - the official client sees both instances with the same endpoints and queue group', async () => {
  // Ends once both instances answered; a slow machine cannot cut the collection short.
  const client = new Svcm(first.nc as unknown as ConstructorParameters<typeof Svcm>[0]).client(
    { strategy: 'count', maxMessages: 2, maxWait: 10_000 })
  const infos: ServiceInfo[] = []
  for await (const info of await client.info('partner-bank')) infos.push(info)
  assert.deepEqual(
    infos.map((i) => i.id).sort(),
    [first.bank.micro.id, second.bank.micro.id].sort(),
  )
  const endpointsOf = (i: ServiceInfo) => i.endpoints.map(
    (e) => `${e.name} ${e.subject} ${e.queue_group}`).sort()
  assert.deepEqual(endpointsOf(infos[0]!), endpointsOf(infos[1]!))
  assert.equal(infos[0]!.endpoints.length, allOperations().length)
  assert.ok(infos[0]!.endpoints.every((e) => e.queue_group === 'partner-bank'))
})

test('scale-out - each request is served by exactly one instance of the queue group', async () => {
  const op = contract.entities.list
  const subject = subjectFor(op, '00000000-0000-4000-8000-000000000000')
  const served = async () => {
    let total = 0
    for (const tb of [first, second]) total += tb.bank.micro.stats().endpoints.find(
      (e) => e.name === op.name)!.num_requests
    return total
  }
  const before = await served()
  const requests = 20
  const replies =
    await Promise.all(Array.from({ length: requests }, () => rawRequest(first, subject, '{}', {})))
  assert.ok(replies.every((r) => r.code === 401))
  // Without a queue group every instance would take every request (2 × 20).
  assert.equal((await served()) - before, requests)
})
