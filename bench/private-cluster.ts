import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freePort } from '../dev/nats-server.ts'

// PostgreSQL clusters of a benchmark's own (bench/standby.ts, bench/big-ledger.ts): `initdb`
// into a temporary directory, a free port on loopback, durable commits as production runs
// them (fsync on). A standby is a `pg_basebackup` of its primary streaming from it, named
// so that the primary can wait for it (`synchronous_standby_names`). Only the postmasters
// started here are ever signalled, by their process ids, and their directories removed.

/** Settings every benchmark cluster starts with (as `-c name=value`). */
const cluster_settings: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  max_connections: '100',
  shared_buffers: '256MB',
  wal_level: 'replica',
  max_wal_senders: '4',
  synchronous_commit: 'on',
  track_io_timing: 'off',
}

const start_ms_max = 60_000

export class PrivateCluster {
  private postmaster: ChildProcess | undefined

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly settings: Record<string, string>,
  ) {}

  /** A new cluster (initdb), started. */
  static async create(
    name: string,
    settings: Record<string, string> = {},
  ): Promise<PrivateCluster> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bank-bench-${name}-`))
    const cluster = new PrivateCluster(dir, await freePort(), settings)
    cluster.own(dir)
    const args = [
      '-D',
      cluster.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C',
    ]
    execFileSync(path.join(binDir(), 'initdb'), args, { cwd: dir, stdio: 'pipe', ...owner() })
    await cluster.start()
    return cluster
  }

  /**
   * A synchronous standby of `primary`: a base backup streaming from it as `application_name`
   * `name`, started, and named in the primary's `synchronous_standby_names`, which waits
   * until the primary reports it `sync`.
   */
  static async standbyOf(primary: PrivateCluster, name: string): Promise<PrivateCluster> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bank-bench-${name}-`))
    const standby = new PrivateCluster(dir, await freePort(), { hot_standby: 'on' })
    standby.own(dir)
    const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}`
    const args = ['-D', standby.dataDir, '-d', conninfo, '-R', '-X', 'stream', '-c', 'fast']
    execFileSync(path.join(binDir(), 'pg_basebackup'), args, {
      cwd: dir,
      stdio: 'pipe',
      ...owner(),
    })
    await standby.start()
    await primary.query(`alter system set synchronous_standby_names = '${name}'`)
    await primary.query('select pg_reload_conf()')
    const deadline = Date.now() + start_ms_max
    while (Date.now() < deadline) {
      const rows = await primary.query(
        `select sync_state from pg_stat_replication where application_name = '${name}'`,
      )
      if (rows[0]?.sync_state === 'sync') return standby
      await pause(200)
    }
    throw new Error(`standby ${name} did not become synchronous within ${start_ms_max} ms`)
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  /** The URL of one of its databases. */
  urlOf(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data')
  }

  private own(dir: string): void {
    const o = owner()
    if (o) fs.chownSync(dir, o.uid, o.gid)
  }

  async query(text: string): Promise<Array<Record<string, unknown>>> {
    const client = new pg.Client({ connectionString: this.url })
    await client.connect()
    try {
      return (await client.query(text)).rows
    } finally {
      await client.end()
    }
  }

  private async start(): Promise<void> {
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.dir]
    for (const [name, value] of Object.entries({ ...cluster_settings, ...this.settings })) {
      args.push('-c', `${name}=${value}`)
    }
    const child = spawn(path.join(binDir(), 'postgres'), args, {
      cwd: this.dir,
      stdio: ['ignore', 'ignore', 'ignore'],
      ...owner(),
    })
    const stopOnExit = () => child.kill('SIGQUIT')
    process.once('exit', stopOnExit)
    child.once('exit', () => process.removeListener('exit', stopOnExit))
    this.postmaster = child
    const deadline = Date.now() + start_ms_max
    while (Date.now() < deadline && child.exitCode === null) {
      try {
        await this.query('select 1')
        return
      } catch {
        await pause(100)
      }
    }
    throw new Error(`private PostgreSQL in ${this.dir} did not start on port ${this.port}`)
  }

  /** Stops the postmaster (fast shutdown) and removes the cluster's directory. */
  async destroy(): Promise<void> {
    const child = this.postmaster
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT')
      const exited = await Promise.race([
        new Promise((resolve) => child.once('exit', () => resolve(true))),
        pause(30_000).then(() => false),
      ])
      if (!exited) child.kill('SIGKILL')
    }
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The newest PostgreSQL server binaries (Debian's /usr/lib/postgresql/<version>/bin). */
function binDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root) ? fs.readdirSync(root) : []
  versions.sort((a, b) => Number(b) - Number(a))
  const found = versions
    .map((v) => path.join(root, v, 'bin'))
    .find((dir) => fs.existsSync(path.join(dir, 'initdb')))
  if (!found) throw new Error('needs the PostgreSQL server binaries (the postgresql package)')
  return found
}

/** PostgreSQL refuses to run as root; as root, the clusters belong to the `postgres` user. */
function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}
