import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The primary PostgreSQL node of the highly available topology dies under transfers from
// two bank instances: its Patroni and its PostgreSQL are killed (SIGKILL) together, as a
// machine that is switched off. Patroni promotes the synchronous standby once the leader
// lease runs out; HAProxy sends new connections to it. The bank must answer 503 (never 500)
// meanwhile, find the new primary by itself, lose and double nothing that it acknowledged,
// and `ledger verify` must be clean on the new primary. The dead node then comes back as
// the synchronous standby (pg_rewind when its WAL went further than the standby's).

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const topo = await import('./topology-faults.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test(
    'topology - the primary PostgreSQL node killed under transfers: the standby takes over, ' +
      '503 not 500, nothing acknowledged lost or doubled',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const run = await topo.startTopology(cleanup, true)
      const old = await run.topology.primary()
      assert.ok(old, 'the topology has a primary')
      await runChaos({
        name: 'topology: primary killed',
        bank: run.bank,
        databaseUrl: run.topology.databaseUrl,
        services: () => run.services,
        fault: (load) => topo.faultUnderLoad(run, load, () => run.topology.killNode(old)),
      })
      const now = await run.topology.primary()
      run.figures.new_primary = now?.name
      const restarted = performance.now()
      run.topology.startPatroni(old)
      await topo.untilStandbyBack(run, restarted)
      const codes = topo.report('primary killed', run)
      assert.notEqual(now?.name, old.name, 'the standby became the primary')
      assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
      assert.equal(codes['504'] ?? 0, 0, 'every request was answered by the bank')
    },
  )
}
