import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The NATS server is killed (SIGKILL) under load and started again on the same port: every
// request and reply in flight is lost. The service and the clients reconnect by
// themselves; a transfer whose reply was lost is acknowledged by its retry, never stored twice.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { setUpBank } = await import('./load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir } =
    await import('./processes.ts')
  const { chaosLimits, outage, runChaos } = await import('./scenario.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test('chaos - the NATS server restarted under 64 concurrent transfers: the service stays up, loses and doubles nothing', { timeout: chaosLimits.test_timeout_ms }, async () => {
    const nats = await ChaosNats.start(cleanup)
    const env = { natsUrl: nats.url, databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-data-') }
    const service = await ServiceProcess.start(env, cleanup)
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())

    await runChaos({
      name: 'NATS restart',
      bank,
      databaseUrl: env.databaseUrl,
      services: () => [service],
      async fault(load) {
        await nats.kill()
        await outage(load)
        await nats.startAgain()
      },
    })
  })
}
