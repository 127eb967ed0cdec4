import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The bank's PostgreSQL stops answering without going away: its postmaster and every
// process it started are paused (SIGSTOP) under 64 concurrent transfers, as a server that
// hangs or a link that is cut without a reset would look. Connections stay open and
// nothing is refused; only the bank's own bounds (src/db/bounds.ts: the query timeout, the
// connect timeout) can end a wait. The bank runs with its default bounds, and the clients
// wait longer than the test may run: every request must get a reply from the bank, 503
// while the database is paused, never a 500 and never silence. Once the processes go on
// (SIGCONT) the bank must serve again by itself. The cluster is the test's own (initdb
// into a temporary directory, its own port); only its processes are signalled.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { ChaosNats, Cleanup, PrivatePostgres, until } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const faults = await import('./database-faults.ts')
  const { faultLimits, since } = faults
  type TransferLoad = import('./load.ts').TransferLoad

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  const figures: Record<string, number> = {}
  let codesWhilePaused: Record<string, number> = {}

  /** Pauses the cluster until every sender has met it and every earlier request has its reply. */
  async function pause(load: TransferLoad, clusterUrl: string): Promise<void> {
    const pids = await faults.clusterProcesses(clusterUrl)
    const sentBefore = load.requests
    const repliedBefore = new Map(load.codes)
    const paused = performance.now()
    faults.signalEach(pids, 'SIGSTOP')
    // A failing test must not leave the cluster paused (its stop would wait on it).
    cleanup.add(() => faults.signalEach(pids, 'SIGCONT'))
    try {
      await load.untilFailures(1)
      figures.first_failure_ms = since(paused)
      await load.untilFailures(faultLimits.failures_min)
      const answered = () => (faults.replies(load) >= sentBefore ? true : undefined)
      await until(
        'every request sent before the pause has a reply',
        answered,
        faultLimits.test_timeout_ms,
      )
      figures.all_answered_ms = since(paused)
      codesWhilePaused = faults.codesSince(load, repliedBefore)
    } finally {
      faults.signalEach(pids, 'SIGCONT')
    }
    const resumed = performance.now()
    figures.paused_ms = Math.round(resumed - paused)
    await load.untilAcknowledged(1)
    figures.first_acknowledged_after_resume_ms = since(resumed)
  }

  test(
    'chaos - PostgreSQL paused (SIGSTOP) under 64 concurrent transfers: every request gets a ' +
      'reply, 503 not 500, and the bank recovers by itself',
    { timeout: faultLimits.test_timeout_ms },
    async () => {
      const nats = await ChaosNats.start(cleanup)
      const cluster = await PrivatePostgres.create(cleanup)
      const { service, bank } = await faults.startFaultBank(cleanup, nats.url, cluster.url)
      await runChaos({
        name: 'PostgreSQL paused',
        bank,
        databaseUrl: cluster.url,
        services: () => [service],
        fault: (load) => pause(load, cluster.url),
      })
      console.log(
        'chaos-stall',
        JSON.stringify({ ...figures, codes_while_paused: codesWhilePaused }),
      )
      assert.equal(
        codesWhilePaused['500'] ?? 0,
        0,
        'no internal errors while the database is paused',
      )
      assert.equal(codesWhilePaused['504'] ?? 0, 0, 'every request was answered by the bank')
      const unavailable = codesWhilePaused['503'] ?? 0
      assert.ok(unavailable >= faultLimits.failures_min, `503s while paused: ${unavailable}`)
    },
  )
}
