import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { connect, errors, headers, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { ReplyMux } from '../../src/client/reply-mux.ts'
import { findNatsServerBinary, natsMissingMessage, startNatsServer, type PrivateNatsServer } from '../../dev/nats-server.ts'
import { testNats } from '../support/harness.ts'

// The SDK's request/reply (ReplyMux) on a real NATS server: each reply reaches its own
// request whatever order they come in, requests go out in the order they were made, and
// a missing responder, a timeout and a closed connection each fail the request with
// nats.js's own error, as nats.js's `request` did.

let nc: NatsConnection
let responder: NatsConnection
let url: string

before(async () => {
  url = (await testNats()).url
  nc = await connect({ servers: url, noAsyncTraces: true })
  responder = await connect({ servers: url })
})

after(async () => {
  await nc?.close()
  await responder?.close()
})

const text = (msg: Msg) => new TextDecoder().decode(msg.data)

test('reply mux - 200 requests answered in reverse order each get their own reply, sent in the order made', async () => {
  const subject = `mux.reverse.${process.pid}`
  const held: Msg[] = []
  const arrived: string[] = []
  const sub = responder.subscribe(subject, {
    callback: (_e, msg) => {
      arrived.push(text(msg))
      held.push(msg)
      if (held.length === 200) for (const m of held.reverse()) m.respond(
        `re:${text(m)}:${m.headers?.get('token')}`)
    },
  })
  await responder.flush()
  const mux = new ReplyMux(nc)
  const h = headers()
  h.set('token', 't1')
  const replies = await Promise.all(
    Array.from({ length: 200 }, (_, i) => mux.request(subject, `n${i}`, h, 5_000)))
  assert.deepEqual(replies.map(text), Array.from({ length: 200 }, (_, i) => `re:n${i}:t1`))
  assert.deepEqual(arrived, Array.from({ length: 200 }, (_, i) => `n${i}`),
    'published in the order requested')
  sub.unsubscribe()
})

test('reply mux - a subject nobody serves fails with NoRespondersError naming it', async () => {
  const mux = new ReplyMux(nc)
  await assert.rejects(mux.request('mux.nobody.here', '{}', headers(), 5_000), (error: unknown) => {
    assert.ok(error instanceof errors.NoRespondersError)
    assert.equal(error.subject, 'mux.nobody.here')
    return true
  })
  assert.equal(mux.usable, true, 'one missing responder does not break the mux')
})

test('reply mux - no answer in time fails with TimeoutError, and the late answer is dropped', async () => {
  const subject = `mux.slow.${process.pid}`
  let reached!: (msg: Msg) => void
  const arrived = new Promise<Msg>((resolve) => {
    reached = resolve
  })
  const sub = responder.subscribe(subject, {
    callback: (_e, msg) => reached(msg),
  })
  await responder.flush()
  const mux = new ReplyMux(nc)
  await assert.rejects(mux.request(subject, 'x', headers(), 50),
    (error: unknown) => error instanceof errors.TimeoutError)
  // The request reached the responder (on a loaded host perhaps only after the timeout).
  const late = await arrived
  late.respond('too late')
  await responder.flush()
  await nc.flush()
  // The mux still answers the next request with its own reply.
  const quick = responder.subscribe(`${subject}.quick`, {
    callback: (_e, msg) => {
      msg.respond('ok')
    },
  })
  await responder.flush()
  assert.equal(text(await mux.request(`${subject}.quick`, '', headers(), 5_000)), 'ok')
  sub.unsubscribe()
  quick.unsubscribe()
})

test('reply mux - replies come to the connection\'s inbox prefix', async () => {
  const prefixed = await connect({ servers: url, inboxPrefix: 'bank_sdk_inbox' })
  try {
    const subject = `mux.prefix.${process.pid}`
    let replyTo = ''
    const sub = responder.subscribe(subject, {
      callback: (_e, msg) => {
        replyTo = msg.reply ?? ''
        msg.respond('ok')
      },
    })
    await responder.flush()
    assert.equal(text(await new ReplyMux(prefixed).request(subject, '', headers(), 5_000)), 'ok')
    assert.match(replyTo, /^bank_sdk_inbox\./)
    sub.unsubscribe()
  } finally {
    await prefixed.close()
  }
})

test('reply mux - a request waiting when the connection closes fails at once, and so does the next', async () => {
  const own = await connect({ servers: url })
  const subject = `mux.closing.${process.pid}`
  const sub = responder.subscribe(subject, { callback: () => {} })
  await responder.flush()
  const mux = new ReplyMux(own)
  const waiting = mux.request(subject, '', headers(), 60_000)
  await own.flush()
  await own.close()
  await assert.rejects(waiting, (error: unknown) => error instanceof errors.RequestError && /connection closed/.test(error.message))
  assert.equal(mux.usable, false)
  await assert.rejects(mux.request(subject, '', headers(), 60_000),
    (error: unknown) => error instanceof errors.ClosedConnectionError)
  sub.unsubscribe()
})

test('reply mux - after a NATS server restart the same mux gets its replies again', async () => {
  // A private server this test stops and starts again on its port: nats.js subscribes the
  // mux's inbox anew when it reconnects, so the mux made before the outage keeps working.
  const binary = findNatsServerBinary()
  assert.ok(binary, natsMissingMessage)
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-mux-nats-'))
  let server: PrivateNatsServer = await startNatsServer({ binary, storeDir })
  const port = server.port
  const client = await connect({ servers: server.url, maxReconnectAttempts: -1,
    reconnectTimeWait: 50 })
  try {
    const mux = new ReplyMux(client)
    await client.flush()
    await server.stop()
    server = await startNatsServer({ binary, storeDir, port })
    const answering = await connect({ servers: server.url })
    try {
      answering.subscribe('mux.after.restart', {
        callback: (_e, msg) => {
          msg.respond('back')
        },
      })
      await answering.flush()
      let reply: Msg | undefined
      for (let i = 0; i < 100 && !reply; i++) {
        reply = await mux.request('mux.after.restart', '', headers(), 200).catch(() => undefined)
      }
      assert.equal(reply && text(reply), 'back')
      assert.equal(mux.usable, true)
    } finally {
      await answering.close()
    }
  } finally {
    await client.close()
    await server.stop()
    fs.rmSync(storeDir, { recursive: true, force: true })
  }
})
