import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { chaosPass } from './pass.ts'

// Two faults of the highly available topology under transfers, one after the other on one
// topology, each with a partner of its own whose client waits 5 s for a reply (a request
// lost with a dead process is a 504 and is sent again, as a partner would):
// 1. One of the three NATS servers dies (SIGKILL): the one the first bank instance is
//    connected to. The instance reconnects to another server of the cluster (the servers
//    tell their clients of each other); the server then starts again and rejoins.
// 2. A bank instance and the primary PostgreSQL node die at the same moment (SIGKILL): the
//    remaining instance must ride through the failover to the synchronous standby by itself,
//    answering 503 (never 500) meanwhile, and take over the dead instance's jobs once their
//    leases run out; no job may be left running without an owner, or dead.
// Nothing acknowledged may be lost or doubled, and `ledger verify` must be clean.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup, until, withClient } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const topo = await import('./topology-faults.ts')
  type TopologyRun = import('./topology-faults.ts').TopologyRun

  const cleanup = new Cleanup()
  after(() => cleanup.run())
  let run: TopologyRun | undefined

  before(
    async () => {
      if (topo.topologyMissing().length === 0) run = await topo.startTopology(cleanup)
    },
    { timeout: topo.topologyFaultLimits.start_timeout_ms },
  )

  /** Jobs by state, and whether those running have a lease that has run out. */
  const jobStates = (url: string) =>
    withClient(url, async (c) => {
      const rows = await c.query<{ state: string; stale: boolean; n: number }>(
        `select state, (state = 'running' and lease_expires_at < now()) as stale, count(*)::int as n
           from jobs group by 1, 2`,
      )
      return rows.rows
    })

  test(
    'topology - a NATS server killed under transfers: the bank reconnects to the cluster, ' +
      'nothing acknowledged lost or doubled, no 500',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      await topo.explained(run!.topology, async () => {
        const { topology, services } = run!
        const faultRun = await topo.newFaultRun(run!, cleanup, false)
        const node = topology.layout.nats[0]!
        let killed = 0
        await runChaos({
          name: 'topology: NATS server killed',
          bank: faultRun.bank,
          databaseUrl: topology.databaseUrl,
          services: () => services,
          fault: (load) =>
            topo.faultUnderLoad(faultRun, load, async () => {
              await topology.killNats(node)
              killed = performance.now()
            }),
        })
        topology.startNats(node)
        await topology.untilNatsClustered()
        faultRun.figures.server_back_ms = Math.round(performance.now() - killed)
        const codes = topo.report('NATS server killed', faultRun)
        assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
      })
    },
  )

  test(
    'topology - a bank instance and the primary PostgreSQL node killed together under ' +
      'transfers: the other instance rides through, nothing lost or doubled, no 500',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      await topo.explained(run!.topology, async () => {
        const { topology, services } = run!
        const faultRun = await topo.newFaultRun(run!, cleanup, false)
        const old = await topology.primary()
        assert.ok(old, 'the topology has a primary')
        const [survivor, victim] = [services[0]!, services[1]!]
        await runChaos({
          name: 'topology: bank instance and primary killed',
          bank: faultRun.bank,
          databaseUrl: topology.databaseUrl,
          // The one expected to be serving at the end comes last.
          services: () => [victim, survivor],
          fault: (load) =>
            topo.faultUnderLoad(faultRun, load, async () => {
              await Promise.all([victim.kill(), topology.killNode(old)])
            }),
        })
        const now = await topology.primary()
        faultRun.figures.new_primary = now?.name
        const settled = await until(
          'no job is left running without an owner',
          async () => {
            const states = await jobStates(topology.databaseUrl)
            return states.some((s) => s.stale) ? undefined : states
          },
          topo.topologyFaultLimits.test_timeout_ms,
        )
        faultRun.figures.jobs = Object.fromEntries(settled.map((s) => [s.state, s.n]))
        const codes = topo.report('bank instance and primary killed', faultRun)
        assert.notEqual(now?.name, old.name, 'the standby became the primary')
        assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
        assert.ok(!settled.some((s) => s.state === 'dead'), 'no job is dead')
      })
    },
  )
}
