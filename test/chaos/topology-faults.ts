import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { missingNetnsPackages } from '../../scripts/topology-netns.ts'
import { missingPackages, Topology, type PostgresNode } from '../../scripts/topology.ts'
import { codesSince, setUpPatientBank, since } from './database-faults.ts'
import { setUpBank, type ChaosBank, type TransferLoad } from './load.ts'
import { Cleanup, ServiceProcess, tempDir, until } from './processes.ts'

// What the fault tests of the highly available topology (test/chaos/topology-*.test.ts)
// share: the topology of scripts/topology.ts (Patroni primary and synchronous standby with
// etcd, HAProxy, three NATS servers) in a directory of the file's own, two bank instances
// on it, a partner of its own for each fault, and the figures each fault reports: the time
// from the fault until a transfer sent after it is acknowledged, and the replies of each
// code from the fault on. A file runs its faults one after another on one topology, which
// costs about half a minute to start.

export const topologyFaultLimits = {
  /** Each fault's test: the load, the fault, the repair. */
  test_timeout_ms: 100_000,
  /** The topology's start, in the file's `before`. */
  start_timeout_ms: 120_000,
  bank_instances: 2,
  /** In netns mode each instance serves /readyz on its own address, on this port. */
  bank_metrics_port: 9464,
}

/** CI (or BANK_TEST_REQUIRE_TOPOLOGY=1) must have Patroni, etcd and HAProxy; elsewhere a note. */
const required = process.env.CI === 'true' || process.env.BANK_TEST_REQUIRE_TOPOLOGY === '1'

/** The Debian packages the topology needs that this machine lacks (netns mode: and more). */
export function topologyMissing(netns = false): string[] {
  return [...missingPackages(), ...(netns ? missingNetnsPackages() : [])]
}

/**
 * Whether the topology can run here; when it cannot, fails in CI and says why elsewhere.
 * Netns mode (the partition tests) needs iproute2, nftables and root too.
 */
export function topologyAvailable(t: TestContext, netns = false): boolean {
  const missing = topologyMissing(netns)
  if (netns && process.getuid?.() !== 0) missing.push('(root, for network namespaces)')
  if (missing.length === 0) return true
  const message = `not run: the topology needs the Debian packages ${missing.join(', ')}`
  if (required) assert.fail(`${message}; CI=true or BANK_TEST_REQUIRE_TOPOLOGY=1 requires them`)
  t.diagnostic(message)
  return false
}

export interface TopologyRun {
  topology: Topology
  /** The bank instances, each on a NATS server of its own (instance i on server i). */
  services: ServiceProcess[]
  /** Where the first instance wrote the operator's token. */
  operatorDataDir: string
}

/**
 * The topology and two bank instances on it, killed outright when the file ends; `settings`
 * are further settings of both instances. With `netns`, every node and each instance runs
 * in a network namespace of its own (scripts/topology-netns.ts), each instance serving
 * /readyz on its address (see `bankReadiness`).
 */
export async function startTopology(
  cleanup: Cleanup,
  settings: Record<string, string> = {},
  netns = false,
): Promise<TopologyRun> {
  const dir = tempDir(cleanup, 'bank-topology-')
  const topology = await Topology.up({ dir, banks: 0, detached: false, netns })
  cleanup.add(() => topology.kill())
  const dataDirs = topology.natsUrls
    .slice(0, topologyFaultLimits.bank_instances)
    .map(() => tempDir(cleanup, 'bank-topology-data-'))
  // Instances of one bank share its rail folder (the clearing house's files): a cycle one
  // instance began is finished by another.
  const railDir = tempDir(cleanup, 'bank-topology-rail-')
  // Started together; only the first makes the operator's credential.
  const services = await Promise.all(
    dataDirs.map((dataDir, i) => {
      const own = { BANK_RAIL_DIR: railDir, ...settings,
        BANK_BOOTSTRAP_OPERATOR: i === 0 ? 'true' : 'false', ...instanceNetwork(topology, i) }
      const env = { natsUrl: topology.natsUrls[i]!, databaseUrl: topology.databaseUrl, dataDir }
      const wrap = topology.namespacePrefix(`bank${i + 1}`)
      return ServiceProcess.start({ ...env, settings: own, wrap }, cleanup)
    }),
  )
  return { topology, services, operatorDataDir: dataDirs[0]! }
}

/** In netns mode, instance i's metrics (and /readyz) on its own address. */
function instanceNetwork(topology: Topology, i: number): Record<string, string> {
  if (!topology.layout.net) return {}
  return {
    BANK_METRICS_HOST: topology.host(`bank${i + 1}`),
    BANK_METRICS_PORT: String(topologyFaultLimits.bank_metrics_port),
  }
}

/** Whether bank instance i (netns mode) says it is ready: its /readyz answers 200. */
export async function bankReady(topology: Topology, i: number): Promise<boolean> {
  const url = `http://${topology.host(`bank${i + 1}`)}:${topologyFaultLimits.bank_metrics_port}/readyz`
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) })
    await response.text()
    return response.status === 200
  } catch {
    return false
  }
}

/** One fault's run: a partner of its own (so that its transfers are told apart), its figures. */
export interface FaultRun {
  bank: ChaosBank
  figures: Record<string, unknown>
  /** The load, and its replies of each code just before the fault. */
  fault?: { load: TransferLoad; codesBefore: ReadonlyMap<string, number> }
}

/**
 * A new partner with funded accounts, its clients on the third NATS server. With `patient`
 * clients (database faults) a request waits for the bank's own reply however long it takes,
 * so that every request in flight shows its code; without (a NATS server or an instance
 * killed, taking requests with it) a request whose message was lost times out after 5 s
 * (504) and is sent again.
 */
export async function newFaultRun(
  run: TopologyRun,
  cleanup: Cleanup,
  patient: boolean,
): Promise<FaultRun> {
  const clientUrl = run.topology.natsUrls[2]!
  const bank = patient
    ? await setUpPatientBank(clientUrl, run.operatorDataDir)
    : await setUpBank(clientUrl, run.operatorDataDir)
  cleanup.add(() => bank.nc.close())
  return { bank, figures: {} }
}

/**
 * Runs `fault` under the load, then waits until a transfer first sent after the fault
 * began is acknowledged: `recover_ms`. `repair`, when given, runs after that (a paused
 * node let go on).
 */
export async function faultUnderLoad(
  run: FaultRun,
  load: TransferLoad,
  fault: () => Promise<void>,
  repair?: () => Promise<void>,
): Promise<void> {
  const sentBefore = load.transfers.length
  run.fault = { load, codesBefore: new Map(load.codes) }
  const struck = performance.now()
  await fault()
  const servedAgain = () =>
    load.transfers.slice(sentBefore).some((t) => t.txId !== undefined) || undefined
  await until(
    'a transfer sent after the fault is acknowledged',
    servedAgain,
    topologyFaultLimits.test_timeout_ms,
  )
  run.figures.recover_ms = since(struck)
  await repair?.()
}

/** Waits until the cluster has a primary and a synchronous standby again: `standby_back_ms`. */
export async function untilStandbyBack(
  topology: Topology,
  run: FaultRun,
  from: number,
): Promise<void> {
  await topology.untilReplicated(topologyFaultLimits.test_timeout_ms)
  run.figures.standby_back_ms = since(from)
}

/**
 * Runs `fn`; when it fails, the error carries the topology's state and the last lines of
 * etcd's, each Patroni's and HAProxy's logs, which are gone once the file's directory is
 * removed.
 */
export async function explained<T>(topology: Topology, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    const status = await topology.status().catch((e: Error) => [`status: ${e.message}`])
    const report = `\n${status.join('\n')}\n${topology.logTails()}`
    if (error instanceof Error) {
      error.message += report
      // The reporter prints the stack, whose first line was made from the message before.
      if (error.stack) error.stack += report
    }
    throw error
  }
}

/** Prints the figures as one JSON line (`topology {...}`); the replies since the fault. */
export function report(name: string, run: FaultRun): Record<string, number> {
  const codes = run.fault && codesSince(run.fault.load, run.fault.codesBefore)
  console.log(
    'topology',
    JSON.stringify({ scenario: name, ...run.figures, codes_from_fault: codes }),
  )
  return codes ?? {}
}

/** An etcd member's own view of the cluster, from its /v3/maintenance/status. */
export interface EtcdStatus {
  /** Its own id, and its leader's: '0' (or absent) while it knows of none. */
  member: string
  leader: string
  term: number
}

export async function etcdStatus(topology: Topology, name: string): Promise<EtcdStatus> {
  const member = topology.layout.etcd.find((m) => m.name === name)!
  const url = `http://${topology.host(name)}:${member.clientPort}/v3/maintenance/status`
  const response = await fetch(url, { method: 'POST', body: '{}',
    signal: AbortSignal.timeout(2_000) })
  const body = (await response.json()) as {
    header: { member_id: string }; leader?: string; raftTerm?: string }
  return { member: body.header.member_id, leader: body.leader ?? '0',
    term: Number(body.raftTerm ?? 0) }
}

/** The etcd member that is the leader now (the one whose own id is its leader's), and its id. */
export async function etcdLeader(topology: Topology): Promise<{ name: string; id: string }> {
  for (const { name } of topology.layout.etcd) {
    const status = await etcdStatus(topology, name)
    if (status.member === status.leader) return { name, id: status.member }
  }
  throw new Error('etcd has no leader')
}

/**
 * When Patroni's leader lease runs out (epoch ms), as member `name` of etcd holds it (through
 * the v2 API Patroni uses); undefined when there is no lease (it ran out).
 */
export async function leaseExpiry(topology: Topology, name: string): Promise<number | undefined> {
  const member = topology.layout.etcd.find((m) => m.name === name)!
  const url = `http://${topology.host(name)}:${member.clientPort}/v2/keys/service/bank/leader`
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  const body = (await response.json()) as { node?: { expiration?: string } }
  if (response.status === 404) return undefined
  if (!body.node?.expiration) throw new Error(`no lease in ${JSON.stringify(body)}`)
  return Date.parse(body.node.expiration)
}

/** What a node's Patroni says of itself (its REST API's /patroni). */
export interface PatroniState {
  role: string
  timeline?: number
  failsafe_mode_is_active?: boolean
  /** When it last read etcd, in whole epoch seconds. */
  dcs_last_seen?: number
}

export async function patroniState(topology: Topology, node: PostgresNode): Promise<PatroniState> {
  const url = `http://${topology.host(node.name)}:${node.restPort}/patroni`
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  return (await response.json()) as PatroniState
}
