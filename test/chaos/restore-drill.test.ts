import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The restore drill (docs/operations.md, "Backups and restore"): the bank's PostgreSQL
// archives its WAL through pgBackRest (scripts/backup.sh) while the bank takes payments; a
// full and an incremental backup are taken between batches of them; the time T is read from
// the database's clock once every payment of the third batch has its reply, and a fourth
// batch follows. The cluster is then restored to T into a fresh data directory (another
// port, another directory), the bank is started on it, and:
//
// - `ledger verify` is clean;
// - every payment acknowledged before T is there, under the tx_id its reply gave: its commit
//   came before its reply, so its commit time is before T, and recovery to a time replays
//   every transaction that committed at or before it;
// - no payment sent after T is there: each committed after T, and recovery stops before the
//   first commit later than T.
//
// Background work (the pay-and-clear settlements) may commit on either side of T; each of
// its transactions is whole on one side, which `ledger verify` checks. The figures (backup
// sizes and times, the restore's time, the WAL replayed) are printed as one JSON line
// (`restore drill {...}`) before anything is asserted.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { ChaosNats, Cleanup, ServiceProcess, tempDir, withClient } = await import('./processes.ts')
  const { loadLimits, setUpBank, TransferLoad } = await import('./load.ts')
  const drill = await import('./restore-cluster.ts')
  type ChaosBank = import('./load.ts').ChaosBank
  type DrillCluster = import('./restore-cluster.ts').DrillCluster
  type TransferLoadType = import('./load.ts').TransferLoad

  const drillLimits = {
    test_timeout_ms: 180_000,
    /** Payments acknowledged in each of the four batches. */
    batch_payments: 256,
    /** The load's request budget, far above the four batches. */
    load_requests_max: 4_000,
  }

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  /** Sends payments until `count` more are acknowledged; resolves once each has its reply. */
  async function batch(load: TransferLoadType, count: number): Promise<void> {
    const target = load.acknowledged + count
    await load.run(() => load.acknowledged >= target)
  }

  /** The transfers of `partnerId` in the database at `url`: tx_ids by ref. */
  async function storedTransfers(url: string, partnerId: string): Promise<Map<string, string[]>> {
    const sql = `select id, ref from transactions where partner_id = $1 and tx_type = 'transfer'`
    const rows = await withClient(
      url,
      async (c) => (await c.query<{ id: string; ref: string }>(sql, [partnerId])).rows,
    )
    const byRef = new Map<string, string[]>()
    for (const row of rows) byRef.set(row.ref, [...(byRef.get(row.ref) ?? []), row.id])
    return byRef
  }

  /** What the restored database holds of the payments before and after T. */
  function compare(
    before: ReadonlyArray<{ ref: string; txId: string }>,
    after: readonly string[],
    stored: Map<string, string[]>,
  ) {
    const examples: string[] = []
    const note = (text: string) => examples.length < 5 && examples.push(text)
    let missing = 0
    for (const { ref, txId } of before) {
      const ids = stored.get(ref) ?? []
      if (ids.length !== 1 || ids[0] !== txId)
        (missing++, note(`${ref}: acknowledged ${txId}, restored ${JSON.stringify(ids)}`))
    }
    const present = after.filter((ref) => stored.has(ref))
    for (const ref of present) note(`${ref} was sent after T and is restored`)
    return { missing, present: present.length, examples }
  }

  interface Primary {
    cluster: DrillCluster
    backup: import('./restore-cluster.ts').BackupScript
    nats: import('./processes.ts').ChaosNats
    dataDir: string
  }

  /** The primary cluster archiving into the drill's repository, its stanza made, and NATS. */
  async function startPrimary(deadline: { at: number }): Promise<Primary> {
    const base = drill.ownedDir(cleanup, 'bank-restore-')
    const cluster = await drill.DrillCluster.at(
      cleanup,
      drill.ownedDir(cleanup, 'bank-restore-primary-'),
    )
    cluster.initdb()
    const backup = new drill.BackupScript(base, cluster, deadline)
    await backup.run(['configure'])
    await cluster.start(await backup.postgresSettings(), deadline)
    await backup.run(['init'])
    const nats = await ChaosNats.start(cleanup)
    return { cluster, backup, nats, dataDir: tempDir(cleanup, 'bank-chaos-data-') }
  }

  /** Restores to `target` into a fresh cluster and starts it; the times of both steps. */
  async function restore(primary: Primary, target: string, deadline: { at: number }) {
    const cluster = await drill.DrillCluster.at(
      cleanup,
      drill.ownedDir(cleanup, 'bank-restore-restored-'),
    )
    const restored = await primary.backup.run([
      'restore',
      '--to',
      cluster.dataDir,
      '--time',
      target,
      '--archive-off',
    ])
    const started = performance.now()
    await cluster.start([], deadline)
    return {
      cluster,
      restore_ms: restored.ms,
      recovery_ms: Math.round(performance.now() - started),
    }
  }

  /** Payments before T (acknowledged, with their tx_ids) and after T (every one sent). */
  async function paymentsAroundT(primary: Primary, bank: ChaosBank, deadline: { at: number }) {
    const load = new TransferLoad(bank, drillLimits.load_requests_max, deadline.at)
    const figures: Record<string, number | string> = {}
    await batch(load, drillLimits.batch_payments)
    const full = await primary.backup.run(['full'])
    await batch(load, drillLimits.batch_payments)
    const incr = await primary.backup.run(['incr'])
    await batch(load, drillLimits.batch_payments)
    // A payment whose reply timed out (504) is sent again with its clientTxId until it has
    // one, so that each payment before T is known to have committed before T, or not at all.
    await load.retryUnacknowledged()
    const sql = `select clock_timestamp()::text as t`
    const target = await withClient(
      primary.cluster.url,
      async (c) => (await c.query<{ t: string }>(sql)).rows[0]!.t,
    )
    const before = load.transfers.flatMap(({ body, txId }) =>
      txId ? [{ ref: body.ref, txId }] : [],
    )
    const sentBefore = load.transfers.length
    await batch(load, drillLimits.batch_payments)
    const afterT = load.transfers.slice(sentBefore).map(({ body }) => body.ref)
    // A WAL switch, once archived, puts every commit after T in the repository.
    await primary.backup.run(['check'])
    Object.assign(figures, {
      full_backup_ms: full.ms,
      incr_backup_ms: incr.ms,
      unacknowledged_before_t: sentBefore - before.length,
    })
    return { load, target, before, afterT, figures }
  }

  type Drill = Awaited<ReturnType<typeof runDrill>>

  /** Payments around T on the primary, then the restore to T and the bank started on it. */
  async function runDrill(deadline: { at: number }) {
    const primary = await startPrimary(deadline)
    const env = {
      natsUrl: primary.nats.url,
      databaseUrl: primary.cluster.url,
      dataDir: primary.dataDir,
    }
    const service = await ServiceProcess.start(env, cleanup)
    const bank = await setUpBank(primary.nats.url, primary.dataDir)
    cleanup.add(() => bank.nc.close())
    const payments = await paymentsAroundT(primary, bank, deadline)
    // Only the bank on the restored cluster may answer in the queue group from here on.
    await service.stop()
    const backups = await primary.backup.backups()
    const restored = await restore(primary, payments.target, deadline)
    const replayed = await withClient(restored.cluster.url, async (c) => {
      const sql = `select pg_wal_lsn_diff($1, $2)::bigint as bytes`
      const lsns = [restored.cluster.redoDoneAt ?? '0/0', backups.at(-1)!.lsn.start]
      return Number((await c.query<{ bytes: string }>(sql, lsns)).rows[0]!.bytes)
    })
    const service2 = await ServiceProcess.start(
      { ...env, databaseUrl: restored.cluster.url },
      cleanup,
    )
    const ledger = await bank.operator.ledger.verify()
    const stored = await storedTransfers(restored.cluster.url, bank.partnerId)
    const check = compare(payments.before, payments.afterT, stored)
    const burst = await payments.load.burst()
    return { ...payments, backups, restored, replayed, service: service2, ledger, check, burst }
  }

  /** The drill's figures, as one JSON line. */
  function report(d: Drill): void {
    const backups = d.backups.map((b) => ({
      type: b.type,
      database_bytes: b.info.size,
      delta_bytes: b.info.delta,
      repository_bytes: b.info.repository.delta,
      seconds: b.timestamp.stop - b.timestamp.start,
    }))
    const figures = {
      ...d.figures,
      target: d.target,
      backups,
      restore_ms: d.restored.restore_ms,
      recovery_ms: d.restored.recovery_ms,
      wal_replayed_bytes: d.replayed,
      wal_segments_restored: d.restored.cluster.walSegmentsRestored,
      payments_before_t: d.before.length,
      payments_after_t: d.afterT.length,
      missing_before_t: d.check.missing,
      present_after_t: d.check.present,
      ledger_ok: d.ledger.ok,
      burst_acknowledged: d.burst,
    }
    console.log('restore drill', JSON.stringify(figures))
  }

  test('restore drill - a cluster restored from pgBackRest to a point in time T holds every payment acknowledged before T and none sent after, and the bank serves on it with a clean ledger', { timeout: drillLimits.test_timeout_ms }, async () => {
    drill.requirePgBackRest()
    const d = await runDrill({ at: Date.now() + drillLimits.test_timeout_ms })
    report(d)
    const examples = d.check.examples.join('; ')
    assert.equal(
      d.service.unexpectedExit,
      undefined,
      `the bank on the restored cluster runs\n${d.service.logTail()}`,
    )
    assert.deepEqual(d.load.surprises, [], 'no reply other than 200 or 409 before the restore')
    assert.equal(
      d.figures.unacknowledged_before_t,
      0,
      'every payment sent before T had its reply',
    )
    assert.ok(
      d.before.length >= 3 * drillLimits.batch_payments,
      `payments before T: ${d.before.length}`,
    )
    assert.equal(
      d.check.missing,
      0,
      `every payment acknowledged before T is restored: ${examples}`,
    )
    assert.equal(d.check.present, 0, `no payment sent after T is restored: ${examples}`)
    assert.deepEqual(
      d.ledger.problems,
      [],
      'ledger verify finds no problems on the restored cluster',
    )
    assert.equal(d.ledger.ok, true, 'ledger verify is clean on the restored cluster')
    assert.equal(
      d.burst,
      loadLimits.concurrency,
      'the bank on the restored cluster takes payments',
    )
  })
}
