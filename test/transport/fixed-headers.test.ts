import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, test } from 'node:test'
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node'
import { FixedHeadersCache, fixedHeaders } from '../../src/nats/fixed-headers.ts'
import { useTestBank } from '../support/harness.ts'

// Headers made once and sent with many messages (a client's token, a payment reply's
// status): what arrives over a real NATS server is what ordinary headers would have carried,
// message after message, and they cannot be changed once made.

const tb = useTestBank()

before(async () => {
  await tb.ready
})

/** Publishes each message with its headers on a fresh subject; returns the messages received. */
async function roundTrip(headersOf: MsgHdrs[]): Promise<Msg[]> {
  const subject = `test.fixed.${randomUUID()}`
  const received: Msg[] = []
  const done = new Promise<void>((resolve) => {
    tb.nc.subscribe(subject, {
      max: headersOf.length,
      callback: (_error, msg) => {
        received.push(msg)
        if (received.length === headersOf.length) resolve()
      },
    })
  })
  await tb.nc.flush()
  for (const [i, headers] of headersOf.entries()) tb.nc.publish(subject, `m${i}`, { headers })
  await done
  return received
}

test('fixed headers arrive on every message exactly as ordinary headers do', async () => {
  const values = { token: 'a-token-of-forty-characters-0123456789ab', 'Bank-Tx-Status': 'Pending' }
  const fixed = fixedHeaders(values)
  const ordinary = natsHeaders()
  for (const [name, value] of Object.entries(values)) ordinary.set(name, value)
  const received = await roundTrip([fixed, fixed, ordinary, fixed])
  assert.equal(received.length, 4)
  for (const [i, msg] of received.entries()) {
    assert.equal(msg.string(), `m${i}`)
    assert.equal(msg.headers?.get('token'), values.token, `message ${i}`)
    assert.equal(msg.headers?.get('Bank-Tx-Status'), 'Pending', `message ${i}`)
    assert.deepEqual(msg.headers?.keys().sort(), ['Bank-Tx-Status', 'token'], `message ${i}`)
  }
  // Byte for byte what nats.js encodes for the same headers.
  const encode = (h: MsgHdrs) => (h as MsgHdrs & { encode(): Uint8Array }).encode()
  assert.deepEqual(encode(fixed), encode(ordinary))
  assert.equal(fixed.get('token'), values.token)
})

test('fixed headers cannot be changed', () => {
  const fixed = fixedHeaders({ token: 'x' })
  assert.throws(() => fixed.set('token', 'y'), /cannot be changed/)
  assert.throws(() => fixed.append('other', 'y'), /cannot be changed/)
  assert.throws(() => fixed.delete('token'), /cannot be changed/)
  assert.equal(fixed.get('token'), 'x')
})

test('the cache makes one set of headers per distinct values, and keeps at most its limit', async () => {
  const cache = new FixedHeadersCache(2)
  const pending = cache.headers({ 'Bank-Tx-Status': 'Pending' })
  assert.equal(cache.headers({ 'Bank-Tx-Status': 'Pending' }), pending)
  const failed = cache.headers({ 'Bank-Tx-Status': 'Failed' })
  assert.notEqual(failed, pending)
  assert.equal(failed.get('Bank-Tx-Status'), 'Failed')
  // A third set of values gets headers of its own every time, and right ones.
  const first = cache.headers({ 'Bank-Next-Cursor': 'c1' })
  const again = cache.headers({ 'Bank-Next-Cursor': 'c1' })
  assert.notEqual(first, again)
  assert.equal(again.get('Bank-Next-Cursor'), 'c1')
  assert.equal(cache.headers({ 'Bank-Tx-Status': 'Pending' }), pending)
  const received = await roundTrip([pending, failed, again, pending])
  assert.deepEqual(
    received.map((m) => m.headers?.get('Bank-Tx-Status') || m.headers?.get('Bank-Next-Cursor')),
    ['Pending', 'Failed', 'c1', 'Pending'],
  )
})
