import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { connect, type ConnectionOptions } from '@nats-io/transport-node'

// Finding or starting a NATS server, for `npm start` on a machine with nothing set up
// (dev/start.ts) and for tests and the benchmark, which each start a private server so that
// no two suites share a queue group. Development code: src/ never imports it (an
// architecture rule), and the production image does not carry it; a bank in production
// is given its NATS server (NATS_URL) or finds one at the default address.

export const natsMissingMessage =
  'No NATS server answers at nats://127.0.0.1:4222 and no `nats-server` binary is on the PATH, ' +
  'so the bank cannot start one of its own. Install one (Debian/Ubuntu: `sudo apt-get install ' +
  'nats-server`; macOS: `brew install nats-server`; or a release from the NATS project) and run ' +
  '`npm start` again, or point the bank at a running server with NATS_URL=nats://host:4222.'

/**
 * Whether a NATS server answers at `url` within `timeoutMs`: it greets each new client with an
 * INFO line. Asked on a socket of our own, destroyed however the wait ends, because nats.js's
 * connect() cannot be given up on: when its `timeout` passes before the server's INFO has
 * arrived (a busy event loop is enough), it rejects but leaves the socket it dialled open —
 * its transport's close() does nothing until the transport has connected — and once the INFO
 * comes that socket stays connected, keeping the process alive, with no connection to close.
 */
export function natsAnswers(url: string, timeoutMs: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 4222) })
    const end = (answered: boolean) => {
      socket.destroy()
      resolve(answered)
    }
    socket.setTimeout(timeoutMs, () => end(false))
    socket.once('data', (chunk) => end(chunk.toString('latin1').startsWith('INFO')))
    socket.once('error', () => end(false))
    socket.once('close', () => end(false))
  })
}

/** Whether a NATS server answers at `url` within `timeoutMs` and takes the login. */
export async function canConnect(url: string, timeoutMs = 1000,
    login: Partial<ConnectionOptions> = {}): Promise<boolean> {
  if (!(await natsAnswers(url, timeoutMs))) return false
  // The server has just answered, so nats.js's own timeout (20 s) is left to a server that
  // stops mid-handshake; a shorter one could leave a socket open (see natsAnswers).
  try {
    const nc = await connect({ servers: url, reconnect: false, ...login })
    await nc.close()
    return true
  } catch {
    return false
  }
}

export function findNatsServerBinary(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/bin',
    '/usr/local/sbin']
  for (const dir of dirs) {
    if (!dir) continue
    const candidate = path.join(dir, 'nats-server')
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export interface PrivateNatsServer {
  url: string
  port: number
  process: ChildProcess
  stop(): Promise<void>
}

/**
 * Starts `nats-server` with JetStream on a free loopback port; resolves once it accepts
 * clients. With `configFile` (one `bank nats init` wrote) the server runs that file, which
 * names its own store and must listen on `port`; its URL is then `tls://`.
 */
export async function startNatsServer(options: { binary: string; storeDir: string; port?: number;
    configFile?: string }): Promise<PrivateNatsServer> {
  fs.mkdirSync(options.storeDir, { recursive: true })
  const port = options.port ?? (await freePort())
  const args = options.configFile ? ['-c', options.configFile]
    : ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', options.storeDir]
  const child = spawn(options.binary, args, {
    stdio: 'ignore',
  })
  // The server must never outlive us, nor keep an otherwise finished process alive.
  child.unref()
  const killOnExit = () => child.kill('SIGTERM')
  process.once('exit', killOnExit)
  const url = `${options.configFile ? 'tls' : 'nats'}://127.0.0.1:${port}`
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    process.removeListener('exit', killOnExit)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(
      `nats-server exited with code ${child.exitCode} before accepting clients`)
    if (await natsAnswers(url.replace(/^tls:/, 'nats:'), 200)) return { url, port, process: child, stop }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await stop()
  throw new Error(`nats-server did not accept clients on ${url} within 5 s`)
}
