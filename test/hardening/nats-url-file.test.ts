import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import { ChaosNats, Cleanup, ServiceProcess, tempDir } from '../chaos/processes.ts'

// `<data dir>/nats-url` tells the CLI and the SDK where the bank's NATS server is. It is
// written once the bank has started: a start that fails must not leave it naming a server
// nobody serves on (the CLI would then try a dead address, and say so only as a timeout).
// That it is written by a start that succeeds: test/hardening/data-dir-modes.test.ts.

const cleanup = new Cleanup()
after(() => cleanup.run())

test('nats-url file - a start that fails (NATS_URL where nothing listens) leaves no nats-url file', async () => {
  const dataDir = tempDir(cleanup, 'bank-nats-url-')
  const start = ServiceProcess.start({ natsUrl: 'nats://127.0.0.1:1', databaseUrl: '', dataDir }, cleanup)
  const failed = /the bank exited \(code 1, signal null\) before it started[\s\S]*cannot connect to NATS/
  await assert.rejects(start, failed)
  assert.equal(fs.existsSync(path.join(dataDir, 'nats-url')), false, 'no nats-url file')
})

test('nats-url file - a start that fails after NATS answered (no database) removes the nats-url file', async () => {
  const nats = await ChaosNats.start(cleanup)
  const dataDir = tempDir(cleanup, 'bank-nats-url-')
  const databaseUrl = 'postgres://postgres@127.0.0.1:1/none'
  const start = ServiceProcess.start({ natsUrl: nats.url, databaseUrl, dataDir }, cleanup)
  await assert.rejects(start, /the bank exited \(code 1, signal null\) before it started/)
  assert.equal(fs.existsSync(path.join(dataDir, 'nats-url')), false, 'no nats-url file')
})
