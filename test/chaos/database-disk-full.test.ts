import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// The bank's database runs out of disk under 64 concurrent transfers. The test's own
// cluster (initdb into a temporary directory, its own port) keeps the bank's database in a
// tablespace on a small tmpfs of the test's own, which a table of the test's fills until
// PostgreSQL itself refuses to extend a file (SQLSTATE 53100, "could not extend file"):
// every transfer that needs a new page then fails. Each must be answered 503, never 500
// (before, 5,051 replies in 25 s were 500). Dropping the filler frees the space, and the
// bank must serve again by itself, with nothing lost or doubled and the ledger clean.
// Mounting a tmpfs needs root; elsewhere a trigger of the test's makes PostgreSQL raise the
// same SQLSTATE on every transfer, which tests the reply but not a real disk (the output's
// `real_disk` says which ran).

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const { ChaosNats, Cleanup, PrivatePostgres, withClient } = await import('./processes.ts')
  const { runChaos } = await import('./scenario.ts')
  const faults = await import('./database-faults.ts')
  const { faultLimits, since } = faults
  type TransferLoad = import('./load.ts').TransferLoad

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  const tmpfs_mb = 48
  const database = 'bank_disk'
  const figures: Record<string, unknown> = {}
  let codesWhileFull: Record<string, number> = {}
  let logWhileFull = ''

  /** Fills the database's tablespace, 1 MB then a row at a time, until PostgreSQL answers 53100. */
  async function fill(url: string): Promise<string> {
    return withClient(url, async (c) => {
      await c.query('create table disk_filler (pad text not null)')
      for (const rows of [1000, 1]) {
        for (;;) {
          try {
            await c.query(
              `insert into disk_filler select repeat('x', 1000) from generate_series(1, ${rows})`,
            )
          } catch (error) {
            if ((error as { code?: string }).code !== '53100') throw error
            if (rows === 1) return (error as Error).message
            break
          }
        }
      }
      throw new Error('unreachable')
    })
  }

  /** Without a tmpfs: every transfer's insert raises 53100, as PostgreSQL raises it. */
  const raise53100 = `
    create function disk_full() returns trigger language plpgsql as $$ begin
      raise exception 'could not extend file (raised by the test: no tmpfs here)'
        using errcode = '53100';
    end $$;
    create trigger disk_full before insert on transactions
      for each statement execute function disk_full();`
  const free = (realDisk: boolean) =>
    realDisk
      ? 'drop table disk_filler'
      : 'drop trigger disk_full on transactions; drop function disk_full()'

  /** Fills the disk until every sender has met it, frees the space, waits for a transfer. */
  async function diskFull(
    load: TransferLoad,
    url: string,
    realDisk: boolean,
    log: () => string,
  ): Promise<void> {
    const repliedBefore = new Map(load.codes)
    const filling = performance.now()
    if (realDisk) figures.postgres_said = await fill(url)
    else await withClient(url, (c) => c.query(raise53100))
    figures.fill_ms = since(filling)
    const full = performance.now()
    await load.untilFailures(faultLimits.failures_min)
    figures.failures_after_ms = since(full)
    codesWhileFull = faults.codesSince(load, repliedBefore)
    logWhileFull = log()
    const freeing = performance.now()
    await withClient(url, (c) => c.query(free(realDisk)))
    await load.untilAcknowledged(1)
    figures.first_acknowledged_after_freeing_ms = since(freeing)
  }

  /** The bank's database, in a tablespace on the tmpfs when there is one; its URL. */
  async function bankDatabase(
    adminUrl: string,
    tablespaceDir: string | undefined,
  ): Promise<string> {
    await withClient(adminUrl, async (c) => {
      if (!tablespaceDir) return c.query(`create database ${database}`)
      await c.query(`create tablespace tiny location '${tablespaceDir}'`)
      return c.query(`create database ${database} tablespace tiny`)
    })
    const url = new URL(adminUrl)
    url.pathname = `/${database}`
    return url.toString()
  }

  test(
    'chaos - the database disk fills up (53100) under 64 concurrent transfers: 503 not 500, ' +
      'and the bank recovers once space is freed',
    { timeout: faultLimits.test_timeout_ms },
    async () => {
      const nats = await ChaosNats.start(cleanup)
      const cluster = await PrivatePostgres.create(cleanup)
      const tablespaceDir = faults.smallFilesystem(cleanup, tmpfs_mb, 'postgres')
      // Stopped before the tmpfs is unmounted (clean-up runs in reverse order).
      cleanup.add(() => cluster.stop('SIGQUIT'))
      const realDisk = tablespaceDir !== undefined
      figures.real_disk = realDisk
      const url = await bankDatabase(cluster.url, tablespaceDir)
      const { service, bank } = await faults.startFaultBank(cleanup, nats.url, url)
      await runChaos({
        name: 'database disk full',
        bank,
        databaseUrl: url,
        services: () => [service],
        fault: (load) => diskFull(load, url, realDisk, () => service.logTail()),
      })
      console.log(
        'chaos-disk-full',
        JSON.stringify({ ...figures, codes_while_full: codesWhileFull }),
      )
      assert.equal(codesWhileFull['500'] ?? 0, 0, 'no internal errors while the disk is full')
      const unavailable = codesWhileFull['503'] ?? 0
      assert.ok(unavailable >= faultLimits.failures_min, `503s while full: ${unavailable}`)
      assert.match(
        logWhileFull,
        /"code":"53100"/,
        'the 503s were PostgreSQL refusing to extend a file',
      )
    },
  )
}
