import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { freePort } from '../../dev/nats-server.ts'
import { limits, repoRoot, tempDir, until, withClient, type Cleanup } from './processes.ts'

// What the restore drill (restore-drill.test.ts) runs: PostgreSQL clusters of its own (the
// primary, archiving through scripts/backup.sh, and the one restored from its backups), and
// scripts/backup.sh itself, run as the user that owns the clusters, as an operator runs it.
// Every process is started here and stopped by the handle this file keeps, never by name.

/** Every wait ends by the drill's own deadline (epoch ms), none by a timer of its own. */
export interface Deadline {
  at: number
}

const left = (deadline: Deadline) => Math.max(1, deadline.at - Date.now())

/** PostgreSQL refuses to run as root; as root, the clusters belong to the `postgres` user. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** The newest PostgreSQL server binaries: Debian's /usr/lib/postgresql/<v>/bin, else the PATH. */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a))
    : []
  const dirs = [
    ...versions.map((v) => path.join(root, v, 'bin')),
    ...(process.env.PATH ?? '').split(path.delimiter),
  ]
  const found = dirs.find((dir) => dir && fs.existsSync(path.join(dir, 'initdb')))
  if (found) return found
  throw new Error('the restore drill needs initdb and postgres: install the postgresql package')
}

/** Fails naming the package when pgBackRest is missing (.ci/run installs it). */
export function requirePgBackRest(): void {
  try {
    execFileSync('pgbackrest', ['version'], { stdio: 'pipe' })
  } catch {
    throw new Error('the restore drill needs pgBackRest: apt-get install pgbackrest (Debian)')
  }
}

/** A directory of the drill's own, removed by `cleanup`, owned by the clusters' user. */
export function ownedDir(cleanup: Cleanup, prefix: string): string {
  const dir = tempDir(cleanup, prefix)
  const owner = clusterOwner()
  if (owner) fs.chownSync(dir, owner.uid, owner.gid)
  return dir
}

/**
 * A PostgreSQL cluster in `<baseDir>/data` (made by initdb, or by a restore), on a port of
 * its own, its socket in `baseDir`. Started with `settings` as `-c` options.
 */
export class DrillCluster {
  private postmaster: ChildProcess | undefined
  private readonly stderrTail: string[] = []
  private readonly owner = clusterOwner()
  /** WAL segments recovery fetched from the archive (restore_command), as PostgreSQL logs them. */
  walSegmentsRestored = 0
  /** Where recovery ended ("redo done at"), once a restored cluster has logged it. */
  redoDoneAt: string | undefined

  private constructor(
    readonly baseDir: string,
    readonly port: number,
  ) {}

  /** A cluster whose data directory is still to be made (initdb, or a restore into it). */
  static async at(cleanup: Cleanup, baseDir: string): Promise<DrillCluster> {
    const cluster = new DrillCluster(baseDir, await freePort())
    cleanup.add(() => cluster.stop())
    return cluster
  }

  get dataDir(): string {
    return path.join(this.baseDir, 'data')
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  initdb(): void {
    const args = [
      '-D',
      this.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]
    execFileSync(path.join(postgresBinDir(), 'initdb'), args, {
      cwd: this.baseDir,
      stdio: 'pipe',
      ...this.owner,
    })
  }

  /**
   * Starts the postmaster and waits until it accepts queries and has left recovery (a
   * restored cluster replays the archived WAL up to its target first, then is promoted).
   */
  async start(settings: readonly string[], deadline: Deadline): Promise<void> {
    // fsync=off spares the shared disk: the drill never crashes the machine under a cluster.
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.baseDir]
    const own = [
      'listen_addresses=127.0.0.1',
      'fsync=off',
      'max_connections=60',
      'shared_buffers=16MB',
    ]
    for (const setting of [...own, ...settings]) args.push('-c', setting)
    const child = spawn(path.join(postgresBinDir(), 'postgres'), args, {
      cwd: this.baseDir,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...this.owner,
    })
    readline.createInterface({ input: child.stderr! }).on('line', (line) => this.read(line))
    const killOnExit = () => child.kill('SIGQUIT')
    process.once('exit', killOnExit)
    child.once('exit', () => process.removeListener('exit', killOnExit))
    this.postmaster = child
    await until(
      `PostgreSQL on port ${this.port} serves out of recovery`,
      () => this.serving(child),
      left(deadline),
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.stderrTail.join('\n')}`)
    })
  }

  private read(line: string): void {
    this.stderrTail.push(line)
    if (this.stderrTail.length > limits.log_tail_lines) this.stderrTail.shift()
    if (/restored log file "[0-9A-F]{24}" from archive/.test(line)) this.walSegmentsRestored++
    this.redoDoneAt = /redo done at ([0-9A-F]+\/[0-9A-F]+)/.exec(line)?.[1] ?? this.redoDoneAt
  }

  private async serving(child: ChildProcess): Promise<true | undefined> {
    if (child.exitCode !== null) throw new Error(`PostgreSQL exited with code ${child.exitCode}`)
    const sql = 'select pg_is_in_recovery() as recovering'
    const row = await withClient(
      this.url,
      async (c) => (await c.query<{ recovering: boolean }>(sql)).rows[0]!,
    )
    return row.recovering ? undefined : true
  }

  /** A fast shutdown, and SIGKILL when it does not end in time. */
  async stop(): Promise<void> {
    const child = this.postmaster
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGINT')
    const timer = setTimeout(() => child.kill('SIGKILL'), limits.postgres_stop_ms)
    await exited
    clearTimeout(timer)
  }

  /** The last lines PostgreSQL logged, for failure messages and figures. */
  logTail(): string[] {
    return [...this.stderrTail]
  }
}

/**
 * scripts/backup.sh with a configuration of the drill's own: its repository, log and lock
 * directories under `baseDir`, the stanza pointing at `primary`.
 */
export class BackupScript {
  private readonly owner = clusterOwner()

  constructor(
    private readonly baseDir: string,
    private readonly primary: DrillCluster,
    private readonly deadline: Deadline,
  ) {}

  private get environment(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      BACKUP_CONFIG: path.join(this.baseDir, 'pgbackrest.conf'),
      BACKUP_STANZA: 'bank',
      BACKUP_PGDATA: this.primary.dataDir,
      BACKUP_PGPORT: String(this.primary.port),
      BACKUP_PGSOCKET: this.primary.baseDir,
      BACKUP_REPO_PATH: path.join(this.baseDir, 'repo'),
      BACKUP_LOG_PATH: path.join(this.baseDir, 'log'),
      BACKUP_LOCK_PATH: path.join(this.baseDir, 'lock'),
    }
  }

  /** Runs one command of the script; its standard output, and how long it took. */
  run(args: readonly string[]): Promise<{ stdout: string; ms: number }> {
    const started = performance.now()
    const script = path.join(repoRoot, 'scripts', 'backup.sh')
    const options = { env: this.environment, timeout: left(this.deadline), ...this.owner }
    return new Promise((resolve, reject) => {
      execFile('bash', [script, ...args], options, (error, stdout, stderr) => {
        if (error)
          reject(new Error(`scripts/backup.sh ${args.join(' ')}: ${error.message}\n${stderr}`))
        else resolve({ stdout, ms: Math.round(performance.now() - started) })
      })
    })
  }

  /** The `-c` settings of `postgres-settings` (postgresql.conf lines: name = value). */
  async postgresSettings(): Promise<string[]> {
    const { stdout } = await this.run(['postgres-settings'])
    return stdout
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => {
        const [, name, value] = /^(\w+) = '?(.*?)'?$/.exec(line.trim())!
        return `${name}=${value}`
      })
  }

  /** `info --json`: the stanza's backups, oldest first. */
  async backups(): Promise<BackupInfo[]> {
    const { stdout } = await this.run(['info', '--json'])
    const [stanza] = JSON.parse(stdout) as Array<{ backup: BackupInfo[] }>
    return stanza!.backup
  }
}

/** One backup as pgBackRest's `info --output=json` describes it (the fields the drill reads). */
export interface BackupInfo {
  label: string
  type: 'full' | 'diff' | 'incr'
  info: { size: number; delta: number; repository: { size: number; delta: number } }
  lsn: { start: string; stop: string }
  timestamp: { start: number; stop: number }
}
