import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The bank process is killed outright (SIGKILL) while 64 transfers are in flight, and a new
// process takes over the same database. A transfer acknowledged before the kill must be
// stored once; one whose reply was lost is acknowledged by its retry (409 naming the
// original tx_id) or stored by it, never twice.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { setUpBank } = await import('./load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir } =
    await import('./processes.ts')
  const { chaosLimits, outage, runChaos } = await import('./scenario.ts')

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  test('chaos - a service process killed by SIGKILL under 64 concurrent transfers loses and doubles nothing', { timeout: chaosLimits.test_timeout_ms }, async () => {
    const nats = await ChaosNats.start(cleanup)
    const env = { natsUrl: nats.url, databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-data-') }
    const services = [await ServiceProcess.start(env, cleanup)]
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())

    await runChaos({
      name: 'service SIGKILL',
      bank,
      databaseUrl: env.databaseUrl,
      services: () => services,
      async fault(load) {
        await services[0]!.kill()
        await outage(load)
        services.push(await ServiceProcess.start(env, cleanup))
      },
    })
    assert.equal(services[0]!.child.signalCode, 'SIGKILL',
      'the first process ended by the kill, not before it')
  })
}
