import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import {
  findNatsServerBinary,
  freePort,
  natsMissingMessage,
  startNatsServer,
  type PrivateNatsServer,
} from '../../dev/nats-server.ts'

// The real processes a chaos test starts, and kills: the bank as `node src/main.ts`, a
// private nats-server and a private PostgreSQL cluster. Each is killed only by the process
// id this file started, never by name, and everything is removed again by `Cleanup`.

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
const adminUrl = process.env.BANK_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Limits on waiting for a real process; generous because two cores are shared by many. */
export const limits = {
  service_start_ms: 60_000,
  service_stop_ms: 15_000,
  postgres_start_ms: 30_000,
  postgres_stop_ms: 15_000,
  poll_interval_ms: 50,
  log_tail_lines: 40,
}

/**
 * Polls `check` until it answers a value (not undefined), for `waitMs` at most: a real
 * process has no injectable clock. A failed check (the bank away while it restarts) is tried
 * again; the last failure is reported.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  waitMs: number,
  pollMs: number = limits.poll_interval_ms,
): Promise<T> {
  const deadline = Date.now() + waitMs
  let failure: unknown
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch((error: unknown) => void (failure = error))
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(
      `timed out waiting until ${what}${failure ? ` (last failure: ${String(failure)})` : ''}`)
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}

/** Undo steps run in reverse order, each even when an earlier one failed. */
export class Cleanup {
  private readonly steps: Array<() => unknown> = []

  add(step: () => unknown): void {
    this.steps.push(step)
  }

  async run(): Promise<void> {
    const errors: unknown[] = []
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step()
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, 'chaos clean-up failed')
  }
}

export function tempDir(cleanup: Cleanup, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  cleanup.add(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves with the child's exit, or undefined when it has not exited within `ms`. */
function exitWithin(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

// ---------------------------------------------------------------- the bank service

export interface ServiceEnv {
  natsUrl: string
  databaseUrl: string
  dataDir: string
  /** Further settings of the service (e.g. BANK_SANDBOX), over the defaults below. */
  settings?: Record<string, string>
  /**
   * A command that runs the service in turn and becomes it (`ip netns exec <ns>`: the
   * topology's partition tests), so that the process id is still the service's own.
   */
  wrap?: string[]
}

/**
 * The bank as an operator runs it: `node src/main.ts` (see `serviceArgs`). Every exit is recorded;
 * an exit this test did not ask for (a crash) is what the chaos tests must never see.
 */
export class ServiceProcess {
  private expectingExit = false
  private readonly tail: string[] = []
  /** Set when the process exited without being told to: its code or signal. */
  unexpectedExit: string | undefined

  private constructor(readonly child: ChildProcess) {
    child.once('exit', (code, signal) => {
      if (!this.expectingExit) this.unexpectedExit = `exit code ${code}, signal ${signal}`
    })
  }

  static async start(env: ServiceEnv, cleanup: Cleanup): Promise<ServiceProcess> {
    const [command, ...args] = [...(env.wrap ?? []), process.execPath, ...serviceArgs]
    const child = spawn(command!, args, {
      cwd: repoRoot,
      env: serviceEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const service = new ServiceProcess(child)
    // A failing test must not leave the bank running.
    cleanup.add(() => service.stop())
    await service.ready()
    return service
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** The last lines the process wrote, for failure messages. */
  logTail(): string {
    return this.tail.join('\n')
  }

  /** Kills the process outright (SIGKILL), as a crash or an OOM killer would. */
  async kill(): Promise<void> {
    this.expectingExit = true
    this.child.kill('SIGKILL')
    await exitWithin(this.child, limits.service_stop_ms)
  }

  /** A clean stop (SIGTERM), with SIGKILL when it does not stop in time. */
  async stop(): Promise<void> {
    if (!this.alive) return
    this.expectingExit = true
    this.child.kill('SIGTERM')
    if (!(await exitWithin(this.child, limits.service_stop_ms))) await this.kill()
  }

  /**
   * Resolves once the service logs that it started; fails when it exits or takes too long first.
   */
  private ready(): Promise<void> {
    const keep = (line: string) => {
      this.tail.push(line)
      if (this.tail.length > limits.log_tail_lines) this.tail.shift()
    }
    readline.createInterface({ input: this.child.stderr! }).on('line', keep)
    const lines = readline.createInterface({ input: this.child.stdout! })
    return new Promise((resolve, reject) => {
      const timer =
        setTimeout(
        () => reject(
        new Error(
        `the bank did not start within ${limits.service_start_ms} ms\n${this.logTail()}`)),
        limits.service_start_ms)
      lines.on('line', (line) => {
        keep(line)
        // "bank started", or "bank started in sandbox mode (…)".
        if (line.includes('"msg":"bank started')) {
          clearTimeout(timer)
          resolve()
        }
      })
      this.child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(
          `the bank exited (code ${code}, signal ${signal}) before it started\n${this.logTail()}`))
      })
    })
  }
}

/**
 * `node --import tsx src/main.ts`; under `npm test`, the same program compiled by the same
 * esbuild as the test files (BANK_TEST_SERVICE, see scripts/test.mjs), which spares each
 * start the tsx loader's cost on the hundreds of modules the bank imports.
 */
const serviceArgs = process.env.BANK_TEST_SERVICE
  ? ['--enable-source-maps', process.env.BANK_TEST_SERVICE]
  : ['--import', 'tsx', 'src/main.ts']

/** The parent's environment without any bank or test-runner settings, plus the service's own. */
function serviceEnvironment(env: ServiceEnv): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('BANK_') || key.startsWith('NODE_TEST') || key === 'DATABASE_URL'
      || key === 'NATS_URL') continue
    inherited[key] = value
  }
  return {
    ...inherited,
    NATS_URL: env.natsUrl,
    DATABASE_URL: env.databaseUrl,
    BANK_DATA_DIR: env.dataDir,
    // Info level, because readiness is read from the "bank started" line.
    LOG_LEVEL: 'info',
    BANK_CLEARING_SCHEDULE: 'off',
    BANK_BOOTSTRAP_OPERATOR: 'true',
    BANK_DB_POOL_MAX: '10',
    BANK_SHUTDOWN_GRACE_MS: '2000',
    // A sandbox: production refuses an open NATS server (src/nats-identity/nats-isolation.ts),
    // and these servers are open; what the chaos tests check does not depend on the mode.
    BANK_SANDBOX: 'true',
    // The load's 64 senders go well over the production request budget.
    BANK_RATE_PER_SECOND: '1000000',
    BANK_RATE_BURST: '10000000',
    ...env.settings,
  }
}

// ---------------------------------------------------------------- NATS

/** A private nats-server that the test may kill and start again on the same port and store. */
export class ChaosNats {
  private constructor(
    private server: PrivateNatsServer,
    private readonly binary: string,
    private readonly storeDir: string,
  ) {}

  static async start(cleanup: Cleanup): Promise<ChaosNats> {
    const binary = findNatsServerBinary()
    if (!binary) throw new Error(natsMissingMessage)
    const storeDir = tempDir(cleanup, 'bank-chaos-nats-')
    const nats = new ChaosNats(await startNatsServer({ binary, storeDir }), binary, storeDir)
    cleanup.add(() => nats.stop())
    return nats
  }

  /**
   * Stops the server and waits for it. The server's child process is unreferenced, so the
   * wait holds a timer of its own: otherwise, with every connection closed, this process
   * would end before the clean-up that follows.
   */
  async stop(): Promise<void> {
    this.server.process.kill('SIGTERM')
    await exitWithin(this.server.process, limits.service_stop_ms)
    await this.server.stop()
  }

  get url(): string {
    return this.server.url
  }

  /** SIGKILL: the server vanishes with every connection and message in flight. */
  async kill(): Promise<void> {
    this.server.process.kill('SIGKILL')
    await exitWithin(this.server.process, limits.service_stop_ms)
    // Removes the exit hook of the dead server.
    await this.server.stop()
  }

  async startAgain(): Promise<void> {
    this.server = await startNatsServer({ binary: this.binary, storeDir: this.storeDir,
      port: this.server.port })
  }
}

// ---------------------------------------------------------------- PostgreSQL

/** A database of its own in the shared cluster, dropped again by `cleanup`. */
export async function sharedClusterDatabase(cleanup: Cleanup): Promise<string> {
  const name = `bank_chaos_${randomBytes(6).toString('hex')}`
  await withClient(adminUrl, (c) => c.query(`create database ${name}`))
  cleanup.add(() => withClient(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export async function withClient<T>(url: string,
    use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  // An error after connecting (the server going away) is reported by the query that fails.
  client.on('error', () => {})
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A PostgreSQL cluster of the test's own: `initdb` into a temporary directory, a free port,
 * its socket in that directory. Only this postmaster's process id is ever signalled.
 */
export class PrivatePostgres {
  private postmaster: ChildProcess | undefined
  private readonly stderrTail: string[] = []

  private constructor(
    private readonly bin: string,
    private readonly baseDir: string,
    readonly port: number,
    private readonly owner: { uid: number; gid: number } | undefined,
  ) {}

  static async create(cleanup: Cleanup): Promise<PrivatePostgres> {
    const bin = postgresBinDir()
    const baseDir = tempDir(cleanup, 'bank-chaos-pg-')
    const owner = clusterOwner()
    if (owner) fs.chownSync(baseDir, owner.uid, owner.gid)
    const cluster = new PrivatePostgres(bin, baseDir, await freePort(), owner)
    execFileSync(
      path.join(bin, 'initdb'),
      ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C',
        '--no-sync'],
      { cwd: baseDir, stdio: 'pipe', ...owner },
    )
    cleanup.add(() => cluster.stop('SIGQUIT'))
    await cluster.start()
    return cluster
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  private get dataDir(): string {
    return path.join(this.baseDir, 'data')
  }

  /** Starts the postmaster on the cluster's port and waits until it accepts queries. */
  async start(): Promise<void> {
    // fsync=off spares the shared disk; the operating system keeps every write across a
    // PostgreSQL shutdown or crash, which is all these tests do to it.
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.baseDir, '-c',
      'listen_addresses=127.0.0.1']
    args.push('-c', 'fsync=off', '-c', 'max_connections=60', '-c', 'shared_buffers=16MB')
    const child = spawn(path.join(this.bin, 'postgres'), args,
      { cwd: this.baseDir, stdio: ['ignore', 'ignore', 'pipe'], ...this.owner })
    readline.createInterface({ input: child.stderr! }).on('line', (line) => {
      this.stderrTail.push(line)
      if (this.stderrTail.length > limits.log_tail_lines) this.stderrTail.shift()
    })
    const killOnExit = () => child.kill('SIGQUIT')
    process.once('exit', killOnExit)
    child.once('exit', () => process.removeListener('exit', killOnExit))
    this.postmaster = child
    const deadline = Date.now() + limits.postgres_start_ms
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break
      if (await this.accepts()) return
      await pause(limits.poll_interval_ms)
    }
    throw new Error(
      `private PostgreSQL did not start on port ${this.port}\n${this.stderrTail.join('\n')}`)
  }

  /**
   * Stops the postmaster with `signal`: SIGINT is PostgreSQL's fast shutdown (sessions are
   * terminated with 57P01), SIGQUIT its immediate shutdown (a crash, recovered at start).
   */
  async stop(signal: 'SIGINT' | 'SIGQUIT'): Promise<void> {
    const child = this.postmaster
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    child.kill(signal)
    if (!(await exitWithin(child, limits.postgres_stop_ms))) {
      child.kill('SIGKILL')
      await exitWithin(child, limits.postgres_stop_ms)
    }
  }

  private async accepts(): Promise<boolean> {
    try {
      await withClient(this.url, (c) => c.query('select 1'))
      return true
    } catch {
      return false
    }
  }
}

/**
 * The newest PostgreSQL server binaries: Debian's /usr/lib/postgresql/<version>/bin, else the PATH.
 */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  const dirs = [...versions.map((v) => path.join(root, v, 'bin')),
    ...(process.env.PATH ?? '').split(path.delimiter)]
  const found = dirs.find((dir) => dir && fs.existsSync(path.join(dir, 'initdb'))
    && fs.existsSync(path.join(dir, 'postgres')))
  if (!found) throw new Error('the PostgreSQL chaos test needs the PostgreSQL server binaries ' +
    '(initdb, postgres); install the postgresql package')
  return found
}

/** PostgreSQL refuses to run as root; as root, the cluster belongs to the `postgres` user. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })
    .trim())
  return { uid: id('-u'), gid: id('-g') }
}
