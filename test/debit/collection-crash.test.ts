import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from '../chaos/pass.ts'

// A collection run survives the bank process being killed outright (SIGKILL) in its middle
// and a new process taking over the same database (issue 9, "Proof: crash safety"). The
// service runs as a child process in sandbox mode on a database of its own. 10,000 due
// orders (one made through the interface, the rest copies of it written straight into the
// database, which is what makes the set-up take seconds instead of minutes) are collected
// by the run the sandbox advance starts; the process is killed once some have been booked;
// a new process takes the run over once the dead one's lease has expired (made to expire
// at once, as the passing of its lease would); every order ends collected exactly once,
// with one credit, one `processing` and one `successful` event, and the ledger verifies.
// PostgreSQL pass only, like the other chaos tests.

if (chaosPass) {
  const { setUpBank } = await import('../chaos/load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir, until: waitUntil,
    withClient } = await import('../chaos/processes.ts')
  const { SouthAfricanCalendar, fromSast } = await import('../../src/calendar/sa-calendar.ts')
  const { earliestCollectionDate } = await import('../../src/debit/debit-schedule.ts')
  const { randomUUID } = await import('node:crypto')

  const limits = { orders: 10_000, test_timeout_ms: 300_000, wait_ms: 180_000,
    poll_interval_ms: 50 }
  const cleanup = new Cleanup()
  after(() => cleanup.run())
  const until = <T,>(what: string, check: () => Promise<T | undefined> | T
    | undefined) => waitUntil(what, check, limits.wait_ms, limits.poll_interval_ms)

  type ChaosBank = Awaited<ReturnType<typeof setUpBank>>
  type Service = Awaited<ReturnType<typeof ServiceProcess.start>>
  type ServiceEnv = Parameters<typeof ServiceProcess.start>[0]
  type Sql =
    <R extends Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]>

  /** One order through the interface, on the earliest date the bank's clock allows. */
  async function orderThroughInterface(bank: ChaosBank): Promise<{ date: string; id: string }> {
    const { now } = await bank.operator.sandbox.clock({})
    const date = earliestCollectionDate(new Date(now), new SouthAfricanCalendar())
    const debtor = { account_holder_name: 'Thandi Nkosi', account_number: '1234567890',
      account_type: 'cheque' as const, branch_code: '250655' }
    await bank.client.mandates.create({ entity_id: bank.rootEntityId, mandate_reference: 'CRASH-1',
      ...debtor, max_amount: 100_000, frequency: 'once_off' })
    await until('the mandate is active', async () =>
      (await bank.client.mandates.get({ entity_id: bank.rootEntityId,
        mandate_reference: 'CRASH-1' })).status === 'active' ? true : undefined,
    )
    const first = await bank.client.debitOrders.create({
      entity_id: bank.rootEntityId, clientTxId: randomUUID(), mandate_reference: 'CRASH-1',
        amount: 10_000, collection_date: date,
      ...debtor, reference: 'Crash test', frequency: 'once_off',
    })
    return { date, id: first.debit_order_id }
  }

  /**
   * The rest of the orders, copies of the first written straight into the database (each with
   * its history row); answers the account they credit, its balance and the orders' sum.
   */
  async function copiesInDatabase(sql: Sql, firstId: string) {
    await sql(
      `insert into debit_orders (id, partner_id, entity_id, account_id, mandate_id,
         mandate_reference, client_tx_id, amount, account_holder_name,
         account_number, account_type, branch_code, reference, frequency,
         requested_collection_date, collection_date, next_collection_date,
         end_date, tracking_days, status, added_by, created_at, updated_at)
       select gen_random_uuid(), partner_id, entity_id, account_id, mandate_id,
         mandate_reference, gen_random_uuid()::text, amount + n,
         account_holder_name, account_number, account_type, branch_code, reference, frequency,
         requested_collection_date, collection_date,
         next_collection_date, end_date, tracking_days, status, added_by, created_at, updated_at
       from debit_orders, generate_series(1, $2::int) as n where id = $1`,
      [firstId, limits.orders - 1],
    )
    await sql(`insert into debit_order_history (debit_order_id, status, description, occurred_at)
      select id, 'scheduled', 'created by the crash test', created_at from debit_orders where id <> $1`, [firstId])
    const [{ account_id }] = await sql<{ account_id: string }>(`select account_id from debit_orders where id = $1`, [firstId]) as [{ account_id: string }]
    const [{ total }] = await sql<{ total: string }>(`select sum(amount)::text as total from debit_orders`) as [{ total: string }]
    const [{ balance: before }] = await sql<{ balance: string }>(`select balance::text from accounts where id = $1`, [account_id]) as [{ balance: string }]
    return { account_id, total, before }
  }

  /**
   * The sandbox advance to `date` starts the collection run; the process is killed once some
   * collections are booked, its lease made to expire, and a new process started.
   */
  async function killMidRun(bank: ChaosBank, sql: Sql, services: Service[], env: ServiceEnv,
      date: string): Promise<void> {
    // The advance runs the collection run of `date` before it answers; the process dies first.
    const advance = bank.operator.sandbox.advance({ to: fromSast(date, 30).toISOString() }).catch(
      () => undefined)
    const booked = await until('some collections are booked', async () => {
      const [{ count }] = (await sql<{ count: string }>(`select count(*)::text as count from debit_collections where status = 'successful'`)) as [{ count: string }]
      return Number(count) > 0 ? Number(count) : undefined
    })
    await services.at(-1)!.kill()
    // The killed process never answers the advance; its request ends with the connection.
    void advance
    const [{ count: atKill }] = (await sql<{ count: string }>(`select count(*)::text as count from debit_collections where status = 'successful'`)) as [{ count: string }]
    assert.ok(Number(atKill) >= booked && Number(atKill) < limits.orders,
      `killed in the middle (${atKill} of ${limits.orders} booked)`)
    await sql(`update jobs set lease_expires_at = now() where state = 'running'`)
    services.push(await ServiceProcess.start(env, cleanup))
  }

  /**
   * Each order collected exactly once: one successful collection, one credit, one `processing`
   * and one `successful` event; the account gained the orders' sum less 350 an order.
   */
  async function assertEachCollectedOnce(sql: Sql, accountId: string, total: string,
      before: string): Promise<void> {
    const [counts] = (await sql<Record<string, string>>(
      `select (select count(*) from debit_collections where status = 'successful')::text as collections,
              (select count(*) from transactions where tx_type = 'debit_order')::text as credits,
              (select count(*) from events
                where type = 'debit_order.processing')::text as processing,
              (select count(*) from events
                where type = 'debit_order.successful')::text as successful,
              (select count(distinct resource_id) from events
                where type = 'debit_order.successful')::text as announced,
              (select balance::text from accounts where id = $1) as balance`,
      [accountId],
    )) as [Record<string, string>]
    const n = String(limits.orders)
    assert.deepEqual(
      { collections: counts.collections, credits: counts.credits, processing: counts.processing,
        successful: counts.successful, announced: counts.announced },
      { collections: n, credits: n, processing: n, successful: n, announced: n },
    )
    assert.equal(BigInt(counts.balance!) - BigInt(before), BigInt(total) - 350n * BigInt(
      limits.orders))
  }

  test('collection crash - SIGKILL in the middle of a run of 10,000 orders, restart: each collected exactly once, ledger clean', { timeout: limits.test_timeout_ms }, async () => {
    const nats = await ChaosNats.start(cleanup)
    const env = {
      natsUrl: nats.url,
      databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-debit-'),
      settings: { BANK_SANDBOX: 'true', BANK_JOBS_POLL_MS: '100', BANK_DEBIT_BATCH_MAX: '250' },
    }
    const services = [await ServiceProcess.start(env, cleanup)]
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())
    const sql: Sql = <R extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
      withClient(env.databaseUrl, async (c) => (await c.query<R>(text, values)).rows)

    const first = await orderThroughInterface(bank)
    const { account_id, total, before } = await copiesInDatabase(sql, first.id)
    await killMidRun(bank, sql, services, env, first.date)

    await until('every order is collected', async () => {
      const [{ open }] = (await sql<{ open: string }>(`select count(*)::text as open from debit_orders where status <> 'successful'`)) as [{ open: string }]
      return open === '0' ? true : undefined
    })
    await assertEachCollectedOnce(sql, account_id, total, before)
    const report = await bank.operator.ledger.verify({})
    assert.deepEqual(report.problems, [])
    assert.equal(report.ok, true)
    for (const service of services.slice(0, -1)) assert.equal(service.unexpectedExit, undefined)
  })
}
