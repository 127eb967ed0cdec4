import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { findNatsServerBinary, freePort, natsAnswers } from '../dev/nats-server.ts'
import {
  createNetwork,
  cutOff,
  inNamespace,
  missingNetnsPackages,
  planNetwork,
  teardownNetwork,
  type NetworkLayout,
} from './topology-netns.ts'

// The production topology of docs/operations.md ("The highly available topology") on one
// machine, for testing and for trying it: etcd (three members); PostgreSQL 15 as a primary
// and a synchronous standby, each under Patroni; HAProxy in front, sending connections to
// whichever node Patroni's REST API calls the primary; three NATS servers in one cluster
// with JetStream;
// and the bank's instances. Everything listens on loopback on free ports and keeps its files
// in one directory; the machine's own PostgreSQL and NATS are never touched.
//
//   node --import tsx scripts/topology.ts up [dir] [--netns]
//                                                       start it (two bank instances), print
//                                                       its addresses; it keeps running
//   node --import tsx scripts/topology.ts status [dir]  who is primary, what answers
//   node --import tsx scripts/topology.ts down [dir]    stop what `up` started, by process id
//
// The fault tests (test/chaos/topology-*.test.ts) use the same module without bank
// instances and start the bank themselves. With `netns` (`up [dir] --netns`; the partition
// tests), every node runs in a network namespace of its own with an address of its own
// instead (scripts/topology-netns.ts), so that the network between nodes can be cut. A
// process is only ever signalled by the id this module recorded when it started it (in
// <dir>/topology.json), never by name.

export const topologyLimits = {
  start_ms: 120_000,
  stop_ms: 15_000,
  poll_ms: 100,
  /** Patroni's leader lease: a primary that stops renewing it is replaced after this long. */
  patroni_ttl_s: 10,
  patroni_loop_wait_s: 1,
  patroni_retry_timeout_s: 3,
  /** HAProxy asks each node's Patroni this often whether it is the primary. */
  haproxy_check_interval_ms: 500,
  haproxy_check_timeout_ms: 1_000,
  nats_nodes: 3,
  /** etcd members: three, so that the store keeps its quorum with one of them away. */
  etcd_members: 3,
  /** JetStream replicas of every stream, bucket and object store kept on this cluster. */
  jetstream_replicas: 3,
  /**
   * In netns mode, how often a NATS server pings its routes (and clients), and how many
   * unanswered pings end the connection: a route to a server cut off without a reset is
   * dropped after about ping_interval x (ping_max + 1), instead of the 2 min x 2 of
   * nats-server's defaults, during which messages routed to it are lost.
   */
  nats_ping_interval_s: 2,
  nats_ping_max: 2,
}

const repoRoot = fileURLToPath(new URL('../', import.meta.url))

export interface PostgresNode {
  name: string
  pgPort: number
  restPort: number
  dir: string
}

export interface EtcdMember {
  name: string
  clientPort: number
  peerPort: number
}

export interface NatsNode {
  name: string
  port: number
  clusterPort: number
  monitorPort: number
  dir: string
}

/** What `up` wrote to <dir>/topology.json: every port, and the id of every process started. */
export interface Layout {
  dir: string
  etcd: EtcdMember[]
  postgres: PostgresNode[]
  haproxyPort: number
  nats: NatsNode[]
  banks: Array<{ dataDir: string }>
  pids: Record<string, number>
  /** With `netns`: each node's namespace and address (without: all on 127.0.0.1). */
  net?: NetworkLayout
}

/** The bank instances that have a namespace of their own in `netns` mode. */
export const netnsBankInstances = 2

/** The address of node `name` (etcd1, pg1, haproxy, nats1, bank1, …): 127.0.0.1 on loopback. */
export function hostOf(layout: Layout, name: string): string {
  return layout.net?.nodes[name]?.address ?? '127.0.0.1'
}

/** Who the cluster's processes run as: `postgres` when we are root (PostgreSQL refuses root). */
function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a))
    : []
  const found = versions
    .map((v) => path.join(root, v, 'bin'))
    .find((d) => fs.existsSync(path.join(d, 'pg_ctl')))
  if (!found)
    throw new Error('the topology needs PostgreSQL server binaries under /usr/lib/postgresql')
  return found
}

/** The programs the topology runs that are missing from this machine, by Debian package. */
export function missingPackages(): string[] {
  const has = (command: string) => {
    try {
      execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
      return true
    } catch {
      return fs.existsSync(`/usr/sbin/${command}`)
    }
  }
  const wanted: Array<[string, string]> = [
    ['patroni', 'patroni'],
    ['etcd', 'etcd-server'],
    ['haproxy', 'haproxy'],
    ['nats-server', 'nats-server'],
  ]
  const missing = wanted.filter(([command]) => !has(command)).map(([, pkg]) => pkg)
  if (!fs.existsSync('/usr/lib/postgresql')) missing.push('postgresql')
  return missing
}

// ---------------------------------------------------------------- configuration files

function etcdArgs(layout: Layout, member: EtcdMember): string[] {
  const url = (m: EtcdMember, port: number) => `http://${hostOf(layout, m.name)}:${port}`
  const cluster = layout.etcd.map((m) => `${m.name}=${url(m, m.peerPort)}`).join(',')
  return [
    ...['--name', member.name, '--data-dir', path.join(layout.dir, member.name)],
    ...['--listen-client-urls', url(member, member.clientPort)],
    ...['--advertise-client-urls', url(member, member.clientPort)],
    ...['--listen-peer-urls', url(member, member.peerPort)],
    ...['--initial-advertise-peer-urls', url(member, member.peerPort)],
    ...['--initial-cluster', cluster, '--initial-cluster-state', 'new'],
    ...['--initial-cluster-token', 'bank-etcd'],
    // Patroni talks to etcd through its v2 API (see patroniConfig).
    '--enable-v2=true',
  ]
}

/** What every node's Patroni writes into the cluster's state in etcd when it bootstraps it. */
export function clusterSettings() {
  return {
    ttl: topologyLimits.patroni_ttl_s,
    loop_wait: topologyLimits.patroni_loop_wait_s,
    retry_timeout: topologyLimits.patroni_retry_timeout_s,
    // Only a standby that was synchronous may be promoted, so a failover loses no commit
    // that was acknowledged; not strict, so the primary keeps taking payments alone when
    // the standby is gone (docs/operations.md, "Synchronous replication").
    synchronous_mode: true,
    synchronous_mode_strict: false,
    // The primary stays the primary while etcd is away, as long as it reaches the standby.
    failsafe_mode: true,
    postgresql: {
      use_pg_rewind: true,
      parameters: {
        max_connections: 100,
        shared_buffers: '32MB',
        wal_level: 'replica',
        hot_standby: 'on',
        max_wal_senders: 5,
        max_replication_slots: 5,
        wal_keep_size: '256MB',
        // As in production: a commit is on disk (and on the synchronous standby's) before it
        // is acknowledged.
        fsync: 'on',
      },
    },
  }
}

function patroniConfig(layout: Layout, node: PostgresNode): object {
  const own = hostOf(layout, node.name)
  const address = (port: number) => ({
    listen: `${own}:${port}`,
    connect_address: `${own}:${port}`,
  })
  const networks = ['127.0.0.1/32', ...(layout.net ? [`${layout.net.prefix}.0/24`] : [])]
  const hba = [
    'local all all trust',
    ...networks.map((n) => `host all all ${n} trust`),
    ...networks.map((n) => `host replication all ${n} trust`),
  ]
  return {
    scope: 'bank',
    name: node.name,
    restapi: address(node.restPort),
    // etcd's v2 API, not v3: Debian bookworm's Patroni (3.0.2) renews an expired leader lease
    // through v3 by writing the leader key without checking whose it is, so a primary that
    // was paused past its lease and goes on takes the lock back from the standby promoted
    // meanwhile, and the payments that standby acknowledged are rewound away (found by the
    // paused-primary fault test; fixed in Patroni 3.0.3). Through v2 it renews by
    // compare-and-set on its own name, so it finds the lock gone and steps down.
    etcd: { hosts: layout.etcd.map((m) => `${hostOf(layout, m.name)}:${m.clientPort}`) },
    bootstrap: {
      dcs: clusterSettings(),
      initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
      pg_hba: hba,
    },
    postgresql: {
      ...address(node.pgPort),
      data_dir: path.join(node.dir, 'data'),
      bin_dir: postgresBinDir(),
      pgpass: path.join(node.dir, 'pgpass'),
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'replicator' },
        rewind: { username: 'postgres' },
      },
      parameters: { unix_socket_directories: node.dir },
      pg_hba: hba,
    },
  }
}

function haproxyConfig(layout: Layout): string {
  const check = topologyLimits.haproxy_check_interval_ms
  const servers = layout.postgres.map(
    (n) =>
      `  server ${n.name} ${hostOf(layout, n.name)}:${n.pgPort} maxconn 200 ` +
      `check port ${n.restPort}`,
  )
  return [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    `  timeout check ${topologyLimits.haproxy_check_timeout_ms}ms`,
    'listen postgres_primary',
    `  bind ${hostOf(layout, 'haproxy')}:${layout.haproxyPort}`,
    // Patroni answers 200 on /primary only on the node that holds the leader lock.
    '  option httpchk OPTIONS /primary',
    '  http-check expect status 200',
    // A node no longer primary loses its connections at once, rather than keeping sessions
    // on a server that is paused, cut off or about to become a standby.
    `  default-server inter ${check}ms fall 2 rise 1 on-marked-down shutdown-sessions`,
    ...servers,
    '',
  ].join('\n')
}

function natsConfig(layout: Layout, node: NatsNode): string {
  const routes = layout.nats
    .filter((n) => n !== node)
    .map((n) => `nats-route://${hostOf(layout, n.name)}:${n.clusterPort}`)
  const own = hostOf(layout, node.name)
  return [
    `server_name: ${node.name}`,
    `listen: ${own}:${node.port}`,
    `http: ${own}:${node.monitorPort}`,
    ...(layout.net
      ? [`ping_interval: "${topologyLimits.nats_ping_interval_s}s"`,
        `ping_max: ${topologyLimits.nats_ping_max}`]
      : []),
    `jetstream { store_dir: ${JSON.stringify(node.dir)}, max_memory_store: 268435456 }`,
    `cluster { name: bank-nats, listen: ${own}:${node.clusterPort}`,
    `  routes: [${routes.join(', ')}] }`,
    '',
  ].join('\n')
}

// ---------------------------------------------------------------- processes

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it answers a value, for `waitMs` at most; failures are tried again. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  waitMs: number,
): Promise<T> {
  const deadline = Date.now() + waitMs
  let failure: unknown
  for (;;) {
    const value = await check().catch((error: unknown) => void (failure = error))
    if (value !== undefined) return value
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting until ${what}${failure ? ` (last: ${String(failure)})` : ''}`,
      )
    }
    await pause(topologyLimits.poll_ms)
  }
}

/** Whether `pid` is a live process (not gone, not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const parent = (p: string) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch {
      return undefined
    }
  }
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && parent(name) === pid)
    .map(Number)
}

/** Sends `signal` to each process; one that has exited meanwhile is skipped. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
    }
  }
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  return response.json()
}

export interface PatroniMember {
  name: string
  role: string
  state: string
  lag?: number | string
}

function bankEnvironment(layout: Layout, natsUrl: string, dataDir: string, first: boolean) {
  return {
    ...process.env,
    NATS_URL: natsUrl,
    DATABASE_URL: `postgres://postgres@${hostOf(layout, 'haproxy')}:${layout.haproxyPort}/bank`,
    BANK_DATA_DIR: dataDir,
    // Instances of one bank share its rail folder (the clearing house's files).
    BANK_RAIL_DIR: path.join(layout.dir, 'rail'),
    // The servers here are open (no accounts, no TLS), which only the sandbox accepts.
    BANK_SANDBOX: 'true',
    BANK_BOOTSTRAP_OPERATOR: first ? 'true' : 'false',
  }
}

// ---------------------------------------------------------------- the topology

export interface UpOptions {
  dir: string
  /** Bank instances to start (the tests start their own: 0). */
  banks: number
  /** Whether the processes outlive this one (`up` from the command line). */
  detached: boolean
  /** Each node in a network namespace of its own (scripts/topology-netns.ts), for partitions. */
  netns?: boolean
}

export class Topology {
  private constructor(
    readonly layout: Layout,
    private readonly detached: boolean,
  ) {}

  /** The bank's DATABASE_URL: through HAProxy, to whichever node is primary. */
  get databaseUrl(): string {
    return `postgres://postgres@${this.host('haproxy')}:${this.layout.haproxyPort}/bank`
  }

  get natsUrls(): string[] {
    return this.layout.nats.map((n) => `nats://${this.host(n.name)}:${n.port}`)
  }

  /** Node `name`'s address (127.0.0.1 on loopback). */
  host(name: string): string {
    return hostOf(this.layout, name)
  }

  /** A PostgreSQL node's own server, not through HAProxy. */
  nodeUrl(node: PostgresNode, database = 'postgres'): string {
    return `postgres://postgres@${this.host(node.name)}:${node.pgPort}/${database}`
  }

  /**
   * What runs a command in node `name`'s namespace when put before it (`ip netns exec <ns>`,
   * which becomes the command); on loopback, nothing.
   */
  namespacePrefix(name: string): string[] {
    if (!this.layout.net) return []
    const line = inNamespace(this.layout.net, name, '', [])
    return [line.command, ...line.args.slice(0, -1)]
  }

  /**
   * Cuts node `name` off from `peers` (netns mode only): every packet between them is
   * dropped, both ways, without a reply. Returns the repair.
   */
  cut(name: string, peers: readonly string[]): () => void {
    if (!this.layout.net) throw new Error('a partition needs the topology in netns mode')
    const heal = cutOff(this.layout.net, name, peers)
    this.save()
    return heal
  }

  /** The topology `up` left running in `dir`. */
  static read(dir: string): Topology {
    const layout = JSON.parse(fs.readFileSync(path.join(dir, 'topology.json'), 'utf8')) as Layout
    return new Topology(layout, true)
  }

  static async up(options: UpOptions): Promise<Topology> {
    const topology = new Topology(await allocate(options), options.detached)
    try {
      topology.createNetwork()
      await topology.startEtcd()
      for (const node of topology.layout.postgres) topology.startPatroni(node)
      for (const node of topology.layout.nats) topology.startNats(node)
      topology.launch('haproxy', 'haproxy', ['-f', topology.file('haproxy.cfg'), '-db'])
      await topology.untilReplicated(topologyLimits.start_ms)
      await topology.untilNatsClustered()
      await topology.createBankDatabase()
      for (let i = 0; i < options.banks; i++) await topology.startBank(i)
    } catch (error) {
      await topology.down()
      throw error
    }
    return topology
  }

  /** The namespaces and bridge of netns mode, removed again when this process exits. */
  private createNetwork(): void {
    const net = this.layout.net
    if (!net) return
    createNetwork(net)
    // A test that dies must not leave the network behind: its processes get SIGKILL as it
    // exits (see `launch`), and a namespace is gone once the last process in it is.
    if (!this.detached) process.once('exit', this.networkExitHook)
  }

  private readonly networkExitHook = () => this.removeNetwork()

  /** Removes the netns mode's network (once its processes are gone); no-op on loopback. */
  private removeNetwork(): void {
    if (!this.layout.net) return
    teardownNetwork(this.layout.net)
    process.removeListener('exit', this.networkExitHook)
  }

  private file(name: string): string {
    return path.join(this.layout.dir, name)
  }

  private save(): void {
    fs.writeFileSync(this.file('topology.json'), `${JSON.stringify(this.layout, null, 2)}\n`)
  }

  /** Starts a process logging to logs/<name>.log and records its id. */
  private launch(name: string, command: string, args: string[], env?: NodeJS.ProcessEnv): number {
    const log = fs.openSync(this.file(`logs/${name}.log`), 'a')
    const user = name.startsWith('bank') ? undefined : owner()
    const net = this.layout.net
    // In netns mode `ip netns exec` (as root) runs it, and `setpriv` makes it the user.
    const line = net
      ? inNamespace(net, name.replace(/^patroni-/, ''), command, args, user)
      : { command, args }
    const child = spawn(line.command, line.args, {
      cwd: name.startsWith('bank') ? repoRoot : this.layout.dir,
      stdio: ['ignore', log, log],
      detached: this.detached,
      env: env ?? process.env,
      ...(net ? {} : user),
    })
    fs.closeSync(log)
    if (child.pid === undefined) throw new Error(`could not start ${command}`)
    child.on('error', () => undefined)
    if (this.detached) child.unref()
    else {
      // A test that dies must not leave the topology running.
      const kill = () => signalEach([child.pid!], 'SIGKILL')
      process.once('exit', kill)
      child.once('exit', () => process.removeListener('exit', kill))
    }
    this.layout.pids[name] = child.pid
    this.save()
    return child.pid
  }

  /** Starts the etcd members together (each waits for the others to form the cluster). */
  private async startEtcd(): Promise<void> {
    for (const member of this.layout.etcd) this.startEtcdMember(member)
    for (const member of this.layout.etcd) {
      const health = `http://${this.host(member.name)}:${member.clientPort}/health`
      await waitFor(
        `${member.name} is healthy`,
        async () => ((await getJson(health)) as { health?: string }).health === 'true'
          || undefined,
        topologyLimits.start_ms,
      )
    }
  }

  /** Starts (or starts again) one etcd member, its data kept in <dir>/<name>. */
  startEtcdMember(member: EtcdMember): void {
    this.launch(member.name, 'etcd', etcdArgs(this.layout, member))
  }

  /** Starts (or starts again) a node's Patroni, which starts its PostgreSQL. */
  startPatroni(node: PostgresNode): void {
    this.launch(`patroni-${node.name}`, 'patroni', [path.join(node.dir, 'patroni.yml')])
  }

  startNats(node: NatsNode): void {
    const binary = findNatsServerBinary()
    if (!binary) throw new Error('nats-server is not installed')
    this.launch(node.name, binary, ['-c', path.join(node.dir, 'nats.conf')])
  }

  /** Patroni's view of the cluster, asked of the first node whose REST API answers. */
  async members(): Promise<PatroniMember[]> {
    let failure: unknown
    for (const node of this.layout.postgres) {
      try {
        const url = `http://${this.host(node.name)}:${node.restPort}/cluster`
        return ((await getJson(url)) as { members: PatroniMember[] }).members
      } catch (error) {
        failure = error
      }
    }
    throw new Error(`no Patroni REST API answers: ${String(failure)}`)
  }

  /** The node Patroni has made primary, once there is one and it runs. */
  async primary(): Promise<PostgresNode | undefined> {
    const leader = (await this.members()).find((m) => m.role === 'leader' && m.state === 'running')
    return this.layout.postgres.find((n) => n.name === leader?.name)
  }

  /** Waits until there is a running primary and a streaming synchronous standby. */
  async untilReplicated(waitMs: number): Promise<void> {
    await waitFor(
      'a primary and a synchronous standby',
      async () => {
        const members = await this.members()
        const leader = members.some((m) => m.role === 'leader' && m.state === 'running')
        // Patroni 3.0 says "running" of a standby that streams; later versions "streaming".
        const standby = members.some(
          (m) => m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state),
        )
        return (leader && standby) || undefined
      },
      waitMs,
    )
  }

  async untilNatsClustered(): Promise<void> {
    for (const [i, url] of this.natsUrls.entries()) {
      const node = this.layout.nats[i]!
      const monitor = `http://${this.host(node.name)}:${node.monitorPort}`
      await waitFor(
        'a NATS server answers',
        async () => (await natsAnswers(url, 500)) || undefined,
        topologyLimits.start_ms,
      )
      await waitFor(
        'JetStream has a meta leader',
        async () => {
          const jsz = (await getJson(`${monitor}/jsz`)) as { meta_cluster?: { leader?: string } }
          return jsz.meta_cluster?.leader || undefined
        },
        topologyLimits.start_ms,
      )
    }
  }

  private async createBankDatabase(): Promise<void> {
    const admin = this.databaseUrl.replace(/\/bank$/, '/postgres')
    await waitFor(
      'the primary answers through HAProxy',
      () =>
        withClient(admin, async (c) => {
          const exists = await c.query(`select 1 from pg_database where datname = 'bank'`)
          if (exists.rowCount === 0) await c.query('create database bank')
          return true
        }),
      topologyLimits.start_ms,
    )
  }

  /** Starts bank instance `i` (the command line's `up`), connected to NATS server i mod 3. */
  private async startBank(i: number): Promise<void> {
    const dataDir = path.join(this.layout.dir, `bank${i + 1}`)
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    this.layout.banks.push({ dataDir })
    const natsUrl = this.natsUrls[i % this.natsUrls.length]!
    const env = bankEnvironment(this.layout, natsUrl, dataDir, i === 0)
    const name = `bank${i + 1}`
    this.launch(name, process.execPath, ['--import', 'tsx', 'src/main.ts'], env)
    const log = this.file(`logs/${name}.log`)
    await waitFor(
      `${name} has started`,
      async () => {
        if (!alive(this.layout.pids[name]!)) throw new Error(`${name} exited; see ${log}`)
        return fs.readFileSync(log, 'utf8').includes('"msg":"bank started') || undefined
      },
      topologyLimits.start_ms,
    )
  }

  /**
   * A PostgreSQL node's processes: its Patroni, its postmaster (postmaster.pid) and every
   * process the postmaster started.
   */
  nodeProcesses(node: PostgresNode): number[] {
    const postmaster = this.postmaster(node)
    const pids = [this.layout.pids[`patroni-${node.name}`]!]
    if (postmaster) pids.push(postmaster, ...childrenOf(postmaster))
    return pids.filter(alive)
  }

  /** The node's running postmaster, from its postmaster.pid. */
  postmaster(node: PostgresNode): number | undefined {
    try {
      const file = fs.readFileSync(path.join(node.dir, 'data/postmaster.pid'), 'utf8')
      const pid = Number(file.split('\n')[0])
      return alive(pid) && isOurs(pid, 'postgres') ? pid : undefined
    } catch {
      return undefined
    }
  }

  /** Kills a node outright (SIGKILL to Patroni and PostgreSQL), as a machine that dies. */
  async killNode(node: PostgresNode): Promise<void> {
    const pids = this.nodeProcesses(node)
    signalEach(pids, 'SIGKILL')
    await waitFor(
      'the node has died',
      async () => pids.every((p) => !alive(p)) || undefined,
      topologyLimits.stop_ms,
    )
  }

  /** SIGKILL to one NATS server. */
  async killNats(node: NatsNode): Promise<void> {
    const pid = this.layout.pids[node.name]!
    signalEach([pid], 'SIGKILL')
    await waitFor(
      'the NATS server has died',
      async () => !alive(pid) || undefined,
      topologyLimits.stop_ms,
    )
  }

  /**
   * Kills everything this topology started at once (SIGKILL, by the ids it recorded, and
   * each node's PostgreSQL): the tests' clean-up, for a topology whose files are thrown away.
   */
  async kill(): Promise<void> {
    const pids = Object.entries(this.layout.pids)
      .filter(([name, pid]) => isOurs(pid, name))
      .map(([, pid]) => pid)
    for (const node of this.layout.postgres) pids.push(...this.nodeProcesses(node))
    signalEach(pids, 'SIGKILL')
    const gone = async () => pids.every((p) => !alive(p)) || undefined
    await waitFor('the topology has died', gone, topologyLimits.stop_ms)
    this.removeNetwork()
    fs.rmSync(this.file('topology.json'), { force: true })
  }

  /**
   * Stops everything this topology started, by the ids it recorded: the banks, HAProxy, NATS,
   * Patroni (which stops its PostgreSQL), etcd; SIGKILL for what does not stop in time.
   */
  async down(): Promise<void> {
    for (const prefix of ['bank', 'haproxy', 'nats', 'patroni', 'etcd']) {
      const names = Object.keys(this.layout.pids).filter((n) => n.startsWith(prefix))
      const pids = names
        .filter((n) => isOurs(this.layout.pids[n]!, n))
        .map((n) => this.layout.pids[n]!)
      await stopAll(pids, 'SIGTERM', prefix)
      // A postmaster whose Patroni was killed (a fault test) is stopped by itself: fast shutdown.
      if (prefix === 'patroni') {
        const orphans = this.layout.postgres.flatMap((node) => this.postmaster(node) ?? [])
        await stopAll(orphans, 'SIGINT', 'postgres')
      }
    }
    this.removeNetwork()
    fs.rmSync(this.file('topology.json'), { force: true })
  }

  /** The last `lines` lines of each log of etcd, Patroni and HAProxy, for a failure's report. */
  logTails(lines = 40): string {
    const dir = this.file('logs')
    const names = fs.existsSync(dir) ? fs.readdirSync(dir) : []
    return names
      .filter((name) => /^(etcd|patroni|haproxy)/.test(name))
      .sort()
      .map((name) => {
        const text = fs.readFileSync(path.join(dir, name), 'utf8').trimEnd().split('\n')
        return `--- ${name} (last ${lines} lines) ---\n${text.slice(-lines).join('\n')}`
      })
      .join('\n')
  }

  /** One line per part: who is primary and standby, and which NATS servers answer. */
  async status(): Promise<string[]> {
    const lines: string[] = []
    const members = await this.members().catch((error: Error) => error)
    if (members instanceof Error) lines.push(`PostgreSQL: ${members.message}`)
    else for (const m of members) lines.push(`PostgreSQL ${m.name}: ${m.role} ${m.state}`)
    lines.push(
      `HAProxy: ${this.databaseUrl} (${alive(this.layout.pids.haproxy!) ? 'running' : 'stopped'})`,
    )
    for (const [i, url] of this.natsUrls.entries()) {
      const answers = await natsAnswers(url, 1_000)
      lines.push(
        `NATS ${this.layout.nats[i]!.name}: ${url} ${answers ? 'answers' : 'does not answer'}`,
      )
    }
    for (const [i, bank] of this.layout.banks.entries()) {
      const pid = this.layout.pids[`bank${i + 1}`]
      lines.push(
        `bank${i + 1}: ${pid && alive(pid) ? 'running' : 'not running'}, data ${bank.dataDir}`,
      )
    }
    return lines
  }
}

/** Signals every process and waits for them to exit; SIGKILL for those that do not in time. */
async function stopAll(pids: number[], signal: NodeJS.Signals, what: string): Promise<void> {
  signalEach(pids, signal)
  const gone = async () => pids.every((p) => !alive(p)) || undefined
  await waitFor(`${what} has stopped`, gone, topologyLimits.stop_ms).catch(() => {
    signalEach(pids.filter(alive), 'SIGKILL')
  })
}

/** Whether `pid` is still the process recorded as `name` (a stale id may have been reused). */
function isOurs(pid: number, name: string): boolean {
  const command: Record<string, string> = {
    bank: 'src/main.ts',
    nats: 'nats-server',
    patroni: 'patroni',
  }
  const prefix = Object.keys(command).find((p) => name.startsWith(p))
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return cmdline.includes(prefix ? command[prefix]! : name)
  } catch {
    return false
  }
}

export async function withClient<T>(
  url: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  client.on('error', () => undefined)
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** Ports, directories and configuration files of a new topology in `options.dir`. */
async function allocate(options: UpOptions): Promise<Layout> {
  const dir = path.resolve(options.dir)
  if (fs.existsSync(path.join(dir, 'topology.json'))) {
    throw new Error(`a topology already runs from ${dir}; stop it first (down)`)
  }
  const taken = new Set<number>()
  const port = async (): Promise<number> => {
    for (;;) {
      const p = await freePort()
      if (!taken.has(p)) return (taken.add(p), p)
    }
  }
  const layout: Layout = {
    dir,
    etcd: [],
    postgres: [],
    haproxyPort: await port(),
    nats: [],
    banks: [],
    pids: {},
  }
  const names = [
    ...Array.from({ length: topologyLimits.etcd_members }, (_, i) => `etcd${i + 1}`),
    'pg1',
    'pg2',
    'haproxy',
    ...Array.from({ length: topologyLimits.nats_nodes }, (_, i) => `nats${i + 1}`),
    ...Array.from({ length: netnsBankInstances }, (_, i) => `bank${i + 1}`),
  ]
  if (options.netns) layout.net = planNetwork(names)
  for (let i = 1; i <= topologyLimits.etcd_members; i++) {
    layout.etcd.push({ name: `etcd${i}`, clientPort: await port(), peerPort: await port() })
  }
  for (const name of ['pg1', 'pg2']) {
    layout.postgres.push({
      name,
      pgPort: await port(),
      restPort: await port(),
      dir: path.join(dir, name),
    })
  }
  for (let i = 1; i <= topologyLimits.nats_nodes; i++) {
    const ports = { port: await port(), clusterPort: await port(), monitorPort: await port() }
    layout.nats.push({ name: `nats${i}`, ...ports, dir: path.join(dir, `nats${i}`) })
  }
  writeFiles(layout)
  return layout
}

function writeFiles(layout: Layout): void {
  for (const sub of [
    'logs',
    ...layout.etcd.map((m) => m.name),
    ...layout.postgres.map((n) => n.name),
    ...layout.nats.map((n) => n.name),
  ]) {
    fs.mkdirSync(path.join(layout.dir, sub), { recursive: true, mode: 0o700 })
  }
  for (const member of layout.etcd) fs.chmodSync(path.join(layout.dir, member.name), 0o700)
  for (const node of layout.postgres) {
    // JSON is YAML: Patroni reads it as its configuration file.
    fs.writeFileSync(
      path.join(node.dir, 'patroni.yml'),
      JSON.stringify(patroniConfig(layout, node), null, 2),
    )
  }
  for (const node of layout.nats)
    fs.writeFileSync(path.join(node.dir, 'nats.conf'), natsConfig(layout, node))
  fs.writeFileSync(path.join(layout.dir, 'haproxy.cfg'), haproxyConfig(layout))
  const user = owner()
  if (user) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, layout.dir])
}

// ---------------------------------------------------------------- the command line

async function main(argv: string[]): Promise<void> {
  const netns = argv.includes('--netns')
  const [command, dirArg] = argv.filter((a) => a !== '--netns')
  const dir = path.resolve(dirArg ?? path.join(os.tmpdir(), 'partner-bank-topology'))
  if (command === 'up') {
    const missing = [...missingPackages(), ...(netns ? missingNetnsPackages() : [])]
    if (missing.length > 0)
      throw new Error(`install first: sudo apt-get install ${missing.join(' ')}`)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const topology = await Topology.up({ dir, banks: 2, detached: true, netns })
    const token = path.join(topology.layout.banks[0]!.dataDir, 'operator-token')
    console.log(
      [...(await topology.status()), `operator token: ${token}`, `logs: ${dir}/logs`].join('\n'),
    )
  } else if (command === 'status') {
    console.log((await Topology.read(dir).status()).join('\n'))
  } else if (command === 'down') {
    await Topology.read(dir).down()
    console.log(`stopped; the files stay in ${dir}`)
  } else {
    throw new Error('usage: node --import tsx scripts/topology.ts up|status|down [dir] [--netns]')
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: Error) => {
    console.error(error.message)
    process.exitCode = 1
  })
}
