import assert from 'node:assert/strict'
import net from 'node:net'
import { test } from 'node:test'
import { canConnect, natsAnswers } from '../../dev/nats-server.ts'

// Whether a NATS server answers is asked with a time limit, while a private server starts and
// when the bank looks for one at the default address. A server that greets its clients only
// after the limit must get "no" and be left no socket: through nats.js's connect() with a
// timeout, the socket stayed open and kept the test process alive after its last file.

const info =
  'INFO {"server_id":"slow","version":"2.10.0","proto":1,"headers":true,"max_payload":1048576}\r\n'

test('nats-server - a server that greets after the time limit is not answering, and keeps no socket of ours', async () => {
  const server = net.createServer((socket) => {
    socket.on('error', () => {})
    const greet = setTimeout(() => socket.write(info), 300)
    socket.on('close', () => clearTimeout(greet))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  try {
    assert.equal(await natsAnswers(url, 100), false)
    assert.equal(await canConnect(url, 100), false)
    // Past the greeting: a socket left open would have had it, and stay connected.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const open = await new Promise<number>((resolve, reject) => server.getConnections(
      (error, n) => (error ? reject(error) : resolve(n))))
    assert.equal(open, 0)
  } finally {
    server.close()
  }
})

test('nats-server - a server that greets in time is answering', async () => {
  const server = net.createServer((socket) => {
    socket.on('error', () => {})
    socket.write(info)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    assert.equal(await natsAnswers(`nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`, 1000), true)
  } finally {
    server.close()
  }
})
