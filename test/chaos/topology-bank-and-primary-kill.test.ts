import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// A bank instance and the primary PostgreSQL node of the highly available topology die at
// the same moment (SIGKILL), under transfers: the remaining instance must ride through the
// failover to the synchronous standby by itself, answer 503 (never 500) meanwhile, and
// take over the dead instance's work (its job leases run out). Requests that were with the
// dead instance are lost with it; the partner's client, which waits 5 s, sends them again.
// Nothing acknowledged may be lost or doubled, `ledger verify` must be clean on the new
// primary, and no job may be left running without an owner or dead.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup, until, withClient } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const topo = await import('./topology-faults.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  /** Jobs by state, and those still running whose lease has run out. */
  const jobStates = (url: string) =>
    withClient(url, async (c) => {
      const rows = await c.query<{ state: string; stale: boolean; n: number }>(
        `select state, (state = 'running' and lease_expires_at < now()) as stale, count(*)::int as n
           from jobs group by 1, 2`,
      )
      return rows.rows
    })

  test(
    'topology - a bank instance and the primary PostgreSQL node killed together under ' +
      'transfers: the other instance rides through, nothing lost or doubled, no 500',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const run = await topo.startTopology(cleanup, false)
      const old = await run.topology.primary()
      assert.ok(old, 'the topology has a primary')
      const [survivor, victim] = run.services as [
        (typeof run.services)[0],
        (typeof run.services)[0],
      ]
      await runChaos({
        name: 'topology: bank instance and primary killed',
        bank: run.bank,
        databaseUrl: run.topology.databaseUrl,
        // The one expected to be serving at the end comes last.
        services: () => [victim, survivor],
        fault: (load) =>
          topo.faultUnderLoad(run, load, async () => {
            await Promise.all([victim.kill(), run.topology.killNode(old)])
          }),
      })
      const now = await run.topology.primary()
      run.figures.new_primary = now?.name
      const settled = await until(
        'no job is left running without an owner',
        async () => {
          const states = await jobStates(run.topology.databaseUrl)
          return states.some((s) => s.stale) ? undefined : states
        },
        topo.topologyFaultLimits.test_timeout_ms,
      )
      run.figures.jobs = Object.fromEntries(settled.map((s) => [s.state, s.n]))
      const codes = topo.report('bank instance and primary killed', run)
      assert.notEqual(now?.name, old.name, 'the standby became the primary')
      assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
      assert.ok(!settled.some((s) => s.state === 'dead'), 'no job is dead')
    },
  )
}
