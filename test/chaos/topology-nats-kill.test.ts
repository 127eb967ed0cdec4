import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// One of the three NATS servers of the highly available topology dies (SIGKILL) under
// transfers: the one the first bank instance is connected to. That instance reconnects to
// another server of the cluster (the servers tell their clients of each other); requests
// that were on the dead server are lost with it, and the partner's client, which waits 5 s,
// sends them again (504, then 200 or a 409 naming the original). Nothing acknowledged may
// be lost or doubled, no request may be answered 500, and the server comes back into the
// cluster when it starts again.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { Cleanup } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const topo = await import('./topology-faults.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test(
    'topology - a NATS server killed under transfers: the bank reconnects to the cluster, ' +
      'nothing acknowledged lost or doubled, no 500',
    { timeout: topo.topologyFaultLimits.test_timeout_ms },
    async (t) => {
      if (!topo.topologyAvailable(t)) return
      const run = await topo.startTopology(cleanup, false)
      const node = run.topology.layout.nats[0]!
      let killed = 0
      await runChaos({
        name: 'topology: NATS server killed',
        bank: run.bank,
        databaseUrl: run.topology.databaseUrl,
        services: () => run.services,
        fault: (load) =>
          topo.faultUnderLoad(run, load, async () => {
            await run.topology.killNats(node)
            killed = performance.now()
          }),
      })
      run.topology.startNats(node)
      await run.topology.untilNatsClustered()
      run.figures.server_back_ms = Math.round(performance.now() - killed)
      const codes = topo.report('NATS server killed', run)
      assert.equal(codes['500'] ?? 0, 0, 'no internal errors')
    },
  )
}
