import assert from 'node:assert/strict'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { addressKind, checkEndpointUrl } from '../../src/webhooks/url-policy.ts'
import { HttpWebhookSender } from '../../src/webhooks/webhook-sender.ts'
import { startReceiver, type Receiver } from './helpers.ts'

let receiver: Receiver

before(async () => {
  receiver = await startReceiver()
})

after(async () => {
  await receiver.close()
})

const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }

test('webhooks - addresses are classed as public, loopback, private, link-local or special', () => {
  const expected: Record<string, string> = {
    '93.184.215.14': 'public',
    '2606:2800:21f:cb07:6820:80da:af6b:8b2c': 'public',
    '127.0.0.1': 'loopback',
    '::1': 'loopback',
    '::ffff:127.0.0.1': 'loopback',
    '::ffff:7f00:1': 'loopback',
    '10.255.0.1': 'private',
    '172.31.255.255': 'private',
    '172.32.0.1': 'public',
    '192.168.0.1': 'private',
    '100.64.0.1': 'private',
    'fd00::1': 'private',
    '64:ff9b::10.0.0.1': 'private',
    '169.254.169.254': 'link_local',
    'fe80::1': 'link_local',
    '0.0.0.0': 'special',
    '::': 'special',
    '224.0.0.1': 'special',
    '255.255.255.255': 'special',
    '192.0.2.1': 'special',
    'not an address': 'special',
  }
  for (const [ip, kind] of Object.entries(expected)) assert.equal(addressKind(ip), kind, ip)
})

test('webhooks - at set time a name is judged by what it resolves to; one that does not resolve passes', async () => {
  const resolve = async (host: string) => {
    if (host === 'inside.example') return ['93.184.215.14', '10.0.0.1']
    if (host === 'outside.example') return ['93.184.215.14']
    throw new Error('ENOTFOUND')
  }
  assert.match((await checkEndpointUrl('https://inside.example/h', false, resolve))!, /10\.0\.0\.1 is a private address/)
  assert.equal(await checkEndpointUrl('https://outside.example/h', false, resolve), undefined)
  assert.equal(await checkEndpointUrl('https://nowhere.example/h', false, resolve), undefined)
  assert.match((await checkEndpointUrl('http://outside.example/h', false, resolve))!, /https/)
  assert.equal(await checkEndpointUrl('http://outside.example/h', true, resolve), undefined)
})

test('webhooks - the sender connects to the address it checked, not to a second lookup', async () => {
  const port = new URL(receiver.url).port
  let lookups = 0
  // A name only this resolver knows: had the socket resolved it again, it would have failed.
  const sender = new HttpWebhookSender({
    timeout_ms: 5_000,
    resolve: async (host) => {
      lookups++
      assert.equal(host, 'receiver.bank-test')
      return ['127.0.0.1']
    },
  })
  const outcome = await sender.send({ url: `http://receiver.bank-test:${port}/hooks`, headers, body: '{"a":1}', sandbox: true })
  assert.deepEqual(outcome, { delivered: true, status_code: 200, error: null })
  assert.equal(lookups, 1)
  assert.equal(receiver.received.at(-1)!.body, '{"a":1}')

  // The same name in production: loopback is refused before any connection.
  const before = receiver.received.length
  const refused = await sender.send({ url: `https://receiver.bank-test:${port}/hooks`, headers, body: '{}', sandbox: false })
  assert.equal(refused.delivered, false)
  assert.match(refused.error!, /refused: 127\.0\.0\.1 is a loopback address/)
  assert.equal(receiver.received.length, before)
})

test('webhooks - a name with any private address is refused at delivery, whatever else it resolves to', async () => {
  const sender = new HttpWebhookSender(
    { timeout_ms: 5_000, resolve: async () => ['93.184.215.14', '192.168.7.7'] })
  const outcome = await sender.send({ url: 'https://rebind.example/hooks', headers, body: '{}', sandbox: false })
  assert.deepEqual(outcome, { delivered: false, status_code: null,
    error: 'refused: 192.168.7.7 is a private address' })
})

test('webhooks - the sender reports a non-2xx status and a receiver that does not answer in time', async () => {
  const sender = new HttpWebhookSender({ timeout_ms: 5_000 })
  try {
    receiver.respond = () => 410
    assert.deepEqual(await sender.send({ url: receiver.url, headers, body: '{}', sandbox: true }), {
      delivered: false,
      status_code: 410,
      error: 'receiver answered 410',
    })
    // A redirect is not followed (it could lead anywhere the policy did not check).
    receiver.respond = () => 302
    const before = receiver.received.length
    assert.deepEqual(await sender.send({ url: receiver.url, headers, body: '{}', sandbox: true }), {
      delivered: false,
      status_code: 302,
      error: 'receiver answered 302',
    })
    assert.equal(receiver.received.length, before + 1)
    receiver.respond = () => 204
    assert.deepEqual(await sender.send({ url: receiver.url, headers, body: '{}', sandbox: true }),
      { delivered: true, status_code: 204, error: null })
  } finally {
    receiver.respond = () => 200
  }
  // A receiver that accepts the connection and never answers.
  const silent = http.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = silent.address() as AddressInfo
    const sender = new HttpWebhookSender({ timeout_ms: 200 })
    assert.deepEqual(await sender.send({ url: `http://127.0.0.1:${port}/`, headers, body: '{}', sandbox: true }), {
      delivered: false,
      status_code: null,
      error: 'no answer within 200 ms',
    })
  } finally {
    silent.closeAllConnections()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  }
})

test('webhooks - a session sends its attempts over one kept-alive connection, each one checked and signed as sent', async () => {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(204).end())
  })
  let connections = 0
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let lookups = 0
  const sender = new HttpWebhookSender({
    timeout_ms: 5_000,
    resolve: async () => {
      lookups++
      return ['127.0.0.1']
    },
  })
  const session = sender.session()
  try {
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await session.send({ url: `http://hooks.bank-test:${port}/`, headers, body: `{"n":${i}}`, sandbox: true }), {
        delivered: true,
        status_code: 204,
        error: null,
      })
    }
    assert.equal(connections, 1, 'one connection for the five attempts')
    assert.equal(lookups, 1, 'the one connection was resolved and checked once')
    // The policy still holds inside a session: production refuses the loopback name.
    const refused = await session.send({ url: `https://hooks.bank-test:${port}/`, headers, body: '{}', sandbox: false })
    assert.match(refused.error!, /refused: 127\.0\.0\.1 is a loopback address/)
  } finally {
    session.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

test('webhooks - a session resends once on a fresh connection when the receiver dropped the kept-alive one unanswered', async () => {
  // A raw receiver: answers the first request on each connection (keep-alive), and drops
  // the connection without an answer when a second request arrives on it.
  let connections = 0
  let answered = 0
  const server = net.createServer((socket) => {
    connections++
    let requests = 0
    let buffer = ''
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1')
      while (buffer.includes('\r\n\r\n')) {
        const end = buffer.indexOf('\r\n\r\n') + 4
        const length = Number(/content-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
        if (buffer.length < end + length) return
        buffer = buffer.slice(end + length)
        if (++requests > 1) return socket.destroy()
        answered++
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n')
      }
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const session = new HttpWebhookSender({ timeout_ms: 5_000 }).session()
  try {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await session.send({ url: `http://127.0.0.1:${port}/`, headers, body: '{}', sandbox: true }), {
        delivered: true,
        status_code: 200,
        error: null,
      })
    }
    assert.equal(answered, 3)
    assert.equal(connections, 3, 'each dropped connection was replaced by a fresh one')
  } finally {
    session.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})
