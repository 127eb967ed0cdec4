import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The primary PostgreSQL node of the highly available topology hangs under transfers from
// two bank instances: its Patroni and every PostgreSQL process are paused (SIGSTOP), as a
// machine that freezes or whose network is cut without a reset. Nothing is refused and no
// connection closes by itself. HAProxy's health check of the node times out, so it drops
// the node's sessions; the leader lease runs out and Patroni promotes the synchronous
// standby. Only then is the old primary let go on (SIGCONT): its Patroni finds it has lost
// the lease and turns it into a standby. The bank must answer every request (503, never
// 500, never silence), lose and double nothing it acknowledged, and `ledger verify` must be
// clean on the new primary.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const { signalEach } = await import('../../scripts/topology.ts')
  const topo = await import('./topology-faults.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test(
    'topology - the primary PostgreSQL node paused (SIGSTOP) under transfers: the standby ' +
      'takes over, every request answered, 503 not 500, nothing lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const run = await topo.startTopology(cleanup, true)
      const old = await run.topology.primary()
      assert.ok(old, 'the topology has a primary')
      let pids: number[] = []
      let resumed = 0
      const pause = async () => {
        pids = run.topology.nodeProcesses(old)
        signalEach(pids, 'SIGSTOP')
        // A failing test must not leave the node paused (its stop would wait on it).
        cleanup.add(() => signalEach(pids, 'SIGCONT'))
      }
      const resume = async () => {
        signalEach(pids, 'SIGCONT')
        resumed = performance.now()
      }
      await runChaos({
        name: 'topology: primary paused',
        bank: run.bank,
        databaseUrl: run.topology.databaseUrl,
        services: () => run.services,
        fault: (load) => topo.faultUnderLoad(run, load, pause, resume),
      })
      const now = await run.topology.primary()
      run.figures.new_primary = now?.name
      await topo.untilStandbyBack(run, resumed)
      const codes = topo.report('primary paused', run)
      assert.notEqual(now?.name, old.name, 'the standby became the primary')
      assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
      assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
    },
  )
}
