import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The primary PostgreSQL node of the highly available topology fails under transfers from
// two bank instances, twice on one topology, each time with a partner of its own:
// 1. killed: its Patroni and its PostgreSQL get SIGKILL together, as a machine switched off;
// 2. paused: its Patroni and every PostgreSQL process get SIGSTOP, as a machine that freezes
//    or whose network is cut without a reset. Nothing is refused and no connection closes by
//    itself; HAProxy's health check of the node times out and it drops the node's sessions.
//    Only after the failover is the node let go on (SIGCONT): its Patroni finds it has lost
//    the lease and makes it a standby.
// Either way Patroni promotes the synchronous standby once the leader lease runs out, and
// HAProxy sends new connections to it. The bank must answer every request by itself (503
// while there is no primary, never 500, never silence: the clients wait as long as it
// takes), find the new primary without a restart, lose and double nothing it acknowledged,
// and `ledger verify` must be clean on the new primary. The failed node then comes back as
// the synchronous standby (pg_rewind when its WAL went further than the standby's).
// 3. killed with an etcd member already gone: the two members left keep etcd's quorum, so
//    the leader lease still runs out and the standby is still promoted.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const { signalEach } = await import('../../scripts/topology.ts')
  const topo = await import('./topology-faults.ts')
  type TopologyRun = import('./topology-faults.ts').TopologyRun
  type FaultRun = import('./topology-faults.ts').FaultRun

  const cleanup = new Cleanup()
  after(() => cleanup.run())
  let run: TopologyRun | undefined

  before(
    async () => {
      if (topo.topologyMissing().length === 0) run = await topo.startTopology(cleanup)
    },
    { timeout: topo.topologyFaultLimits.start_timeout_ms },
  )

  /** `failing`, its failure explained by the topology's state and logs. */
  const failover = (name: string, fault: (node: string) => Promise<() => Promise<void>>) =>
    topo.explained(run!.topology, () => failing(name, fault))

  /** Fails the node under load; `repair` after the failover; the node back as standby. */
  async function failing(
    name: string,
    fault: (node: string) => Promise<() => Promise<void>>,
  ): Promise<void> {
    const { topology, services } = run!
    const old = await topology.primary()
    assert.ok(old, 'the topology has a primary')
    const faultRun: FaultRun = await topo.newFaultRun(run!, cleanup, true)
    let repair: () => Promise<void> = async () => undefined
    let repaired = 0
    await runChaos({
      name: `topology: ${name}`,
      bank: faultRun.bank,
      databaseUrl: topology.databaseUrl,
      services: () => services,
      fault: (load) =>
        topo.faultUnderLoad(
          faultRun,
          load,
          async () => {
            repair = await fault(old.name)
          },
          async () => {
            await repair()
            repaired = performance.now()
          },
        ),
    })
    const now = await topology.primary()
    faultRun.figures.new_primary = now?.name
    await topo.untilStandbyBack(topology, faultRun, repaired)
    const codes = topo.report(name, faultRun)
    assert.notEqual(now?.name, old.name, 'the standby became the primary')
    assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
  }

  test(
    'topology - the primary PostgreSQL node killed under transfers: the standby takes over, ' +
      '503 not 500, nothing acknowledged lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const { topology } = run!
      await failover('primary killed', async (name) => {
        const node = topology.layout.postgres.find((n) => n.name === name)!
        await topology.killNode(node)
        // Its repair: Patroni started again, which rejoins as the standby.
        return async () => topology.startPatroni(node)
      })
    },
  )

  test(
    'topology - the primary PostgreSQL node paused (SIGSTOP) under transfers: the standby ' +
      'takes over, every request answered, 503 not 500, nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const { topology } = run!
      await failover('primary paused', async (name) => {
        const pids = topology.nodeProcesses(topology.layout.postgres.find((n) => n.name === name)!)
        signalEach(pids, 'SIGSTOP')
        // A failing test must not leave the node paused (its kill would still work, but
        // nothing else would).
        cleanup.add(() => signalEach(pids, 'SIGCONT'))
        return async () => signalEach(pids, 'SIGCONT')
      })
    },
  )

  test(
    'topology - an etcd member killed, then the primary: the two members left keep the ' +
      'quorum, the standby takes over, nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const { topology } = run!
      await failover('etcd member and primary killed', async (name) => {
        const member = topology.layout.etcd[0]!
        signalEach([topology.layout.pids[member.name]!], 'SIGKILL')
        const node = topology.layout.postgres.find((n) => n.name === name)!
        await topology.killNode(node)
        return async () => {
          topology.startEtcdMember(member)
          topology.startPatroni(node)
        }
      })
    },
  )
}
