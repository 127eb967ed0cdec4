import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The bank's PostgreSQL goes away twice under load: a fast shutdown (every session is
// terminated with 57P01) and an immediate shutdown (a crash, recovered when it starts
// again). The cluster is the test's own (initdb into a temporary directory, its own port),
// so the shared server is never touched. The service must stay up, answer 503 while the
// database is away, and serve again by itself once it is back.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { setUpBank } = await import('./load.ts')
  const { ChaosNats, Cleanup, PrivatePostgres, ServiceProcess, tempDir } =
    await import('./processes.ts')
  const { chaosLimits, outage, runChaos } = await import('./scenario.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test('chaos - PostgreSQL restarted under 64 concurrent transfers: the service stays up, loses and doubles nothing', { timeout: chaosLimits.test_timeout_ms }, async () => {
    const nats = await ChaosNats.start(cleanup)
    const cluster = await PrivatePostgres.create(cleanup)
    const env = { natsUrl: nats.url, databaseUrl: cluster.url,
      dataDir: tempDir(cleanup, 'bank-chaos-data-') }
    const service = await ServiceProcess.start(env, cleanup)
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())

    await runChaos({
      name: 'PostgreSQL restart',
      bank,
      databaseUrl: env.databaseUrl,
      services: () => [service],
      async fault(load) {
        for (const signal of ['SIGINT', 'SIGQUIT'] as const) {
          await cluster.stop(signal)
          await outage(load)
          await cluster.start()
          // Serving again before the next outage, so that both are met under load.
          if (signal === 'SIGINT') await load.untilAcknowledged(
            chaosLimits.acknowledged_before_fault_min)
        }
      },
    })
  })
}
