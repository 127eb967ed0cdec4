import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// Bulk payments and their webhooks survive the bank process being killed outright
// (SIGKILL), the way a crash or an OOM killer ends it, and a new process taking over the
// same database (issue 8, "Proof: crash safety"). The service runs as a child process in
// sandbox mode, on a database of its own and a private nats-server; its webhooks go to a
// real HTTP receiver on 127.0.0.1 that checks every signature with the standardwebhooks
// library, as a partner's receiver would.
//  1. A 1000-payment batch (RTC and EFT, some to the simulated rail's failing recipients)
//     is killed while it pays out: after the restart every payment is paid exactly once,
//     the batch ends `completed` with counts and amounts that add up, every event reaches
//     the receiver at least once under one webhook-id, payment.* before
//     bulk_payment.completed, and the ledger verifies.
//  2. The bank is killed while a webhook POST is in flight, after the receiver has
//     answered 500 for a while: after the restart every event still arrives, each under
//     the webhook-id it had before.
// A killed process leaves its running jobs leased to it for their lease (60 s of wall-clock
// time), which is how the other instances learn that it is gone. The tests do not wait that
// out: with no instance running, they let those leases expire at once (expireLeases), as
// the minute would, so that each scenario stays well under a minute.

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const http = await import('node:http')
  const { Webhook } = await import('standardwebhooks')
  const { setUpBank } = await import('./load.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir, until: waitUntil,
    withClient } = await import('./processes.ts')
  const { magic } = await import('../transfers/helpers.ts')
  type ChaosBank = Awaited<ReturnType<typeof setUpBank>>
  type Service = Awaited<ReturnType<typeof ServiceProcess.start>>
  type Batch = Awaited<ReturnType<ChaosBank['client']['bulkPayments']['status']>>

  const limits = {
    /** A scenario's deadline: the machine may be slow (a loaded CI host took 96 s for one). */
    test_timeout_ms: 240_000,
    /**
     * The longest any one wait may take (a real process has no injectable clock): as long as the
     * scenario's own deadline, so that a slow machine is never a failure and a hang still is.
     */
    wait_ms: 240_000,
    poll_interval_ms: 25,
    payments_big: 1000,
    payments_small: 100,
    /** The service's job poll: short, so that a scenario's work goes at the pace of its jobs. */
    jobs_poll_ms: 100,
  }

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  const until =
    <T,>(what: string, check: () => Promise<T | undefined> | T | undefined) => waitUntil(what,
    check, limits.wait_ms, limits.poll_interval_ms)

  // ------------------------------------------------------------ the partner's receiver

  interface Arrival {
    id: string
    type: string
    bulkPaymentId: string | undefined
    paymentId: string | undefined
    verified: boolean
  }

  /**
   * A partner's webhook endpoint: records every POST (webhook-id, type, whether its
   * signature verifies) and answers what `respond` says, which may be a promise that a
   * test keeps pending (a receiver in the middle of answering).
   */
  async function startReceiver(secret: string) {
    const webhook = new Webhook(secret)
    const arrivals: Arrival[] = []
    let respond: (arrival: Arrival, n: number) => number | Promise<number> = () => 200
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const header = (name: string) => String(request.headers[name] ?? '')
        let verified = true
        try {
          webhook.verify(body, { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header(
            'webhook-timestamp'), 'webhook-signature': header('webhook-signature') })
        } catch {
          verified = false
        }
        const parsed = JSON.parse(body) as {
          type: string; data: { bulk_payment_id?: string; payment_id?: string } }
        const arrival = { id: header('webhook-id'), type: parsed.type,
          bulkPaymentId: parsed.data.bulk_payment_id, paymentId: parsed.data.payment_id, verified }
        arrivals.push(arrival)
        void Promise.resolve(respond(arrival, arrivals.length)).then((status) => {
          if (!response.destroyed) response.writeHead(status).end()
        })
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanup.add(() => new Promise<void>((resolve) => (server.closeAllConnections(),
      server.close(() => resolve()))))
    const { port } = server.address() as { port: number }
    return {
      url: `http://127.0.0.1:${port}/hooks`,
      arrivals,
      answer(how: typeof respond) {
        respond = how
      },
      /** The arrivals about one batch, in the order they came. */
      of: (bulkPaymentId: string) => arrivals.filter((a) => a.bulkPaymentId === bulkPaymentId),
    }
  }
  type Receiver = Awaited<ReturnType<typeof startReceiver>>

  // ------------------------------------------------------------ the bank

  async function startBank() {
    const nats = await ChaosNats.start(cleanup)
    const env = {
      natsUrl: nats.url,
      databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-data-'),
      settings: { BANK_SANDBOX: 'true', BANK_JOBS_POLL_MS: String(limits.jobs_poll_ms) },
    }
    const services = [await ServiceProcess.start(env, cleanup)]
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())
    const receiver = await startReceiver(bank.webhookSecret)
    await bank.client.webhooks.setEndpoint({ url: receiver.url })
    return {
      env,
      bank,
      receiver,
      services,
      /** SIGKILL, the dead process's leases expired, and a new process on the same database. */
      async crashAndRestart(): Promise<string[]> {
        await services.at(-1)!.kill()
        const orphaned = await expireLeases(env.databaseUrl)
        services.push(await ServiceProcess.start(env, cleanup))
        return orphaned
      },
    }
  }

  /**
   * With no instance running, every job still `running` is the dead process's: its lease
   * is made to expire now, as the passing of `lease_ms` would. Returns their kinds.
   */
  async function expireLeases(databaseUrl: string): Promise<string[]> {
    const result = await withClient(databaseUrl, (c) =>
      c.query<{ kind: string }>(`update jobs set lease_expires_at = now() where state = 'running' returning kind`),
    )
    return result.rows.map((row) => row.kind).sort()
  }

  /**
   * Payment i of a batch: every third one EFT, the rest RTC; `failing` maps positions to magic
   * recipients.
   */
  function batchRequest(bank: ChaosBank, id: string, count: number, failing: Map<number,
      Partial<{ account_number: string; branch_code: string }>>) {
    const payments = Array.from({ length: count }, (_, i) => ({
      payment_id: `p-${i}`,
      amount: 1_000 + i,
      ref: `Chaos ${i}`,
      own_ref: `chaos bulk ${i}`,
      account_number: '62000000001',
      branch_code: '250655',
      name: `Recipient ${i}`,
      real_time: i % 3 !== 0,
      ...failing.get(i),
    }))
    return {
      entity_id: bank.rootEntityId,
      account_id: bank.accounts[1]!,
      bulk_payment_id: id,
      total_amount: payments.reduce((sum, p) => sum + p.amount, 0),
      payment_count: count,
      description: 'chaos batch',
      payments,
    }
  }

  async function initiateAndVerify(bank: ChaosBank,
      request: ReturnType<typeof batchRequest>): Promise<void> {
    await bank.client.bulkPayments.initiate(request)
    const { otp } = await bank.operator.sandbox.otp({ bulk_payment_id: request.bulk_payment_id,
      partner_id: bank.partnerId })
    await bank.client.bulkPayments.verify({ entity_id: bank.rootEntityId,
      bulk_payment_id: request.bulk_payment_id, otp })
  }

  const statusOf = (bank: ChaosBank, id: string) => bank.client.bulkPayments.status(
    { entity_id: bank.rootEntityId, bulk_payment_id: id })
  const processed = (batch: Batch) => batch.successful_count + batch.failed_count

  /** Every transaction of the account, all pages. */
  async function transactionsOf(bank: ChaosBank, accountId: string) {
    const rows = []
    let cursor: string | undefined
    do {
      const page = await bank.client.accounts.listTransactions({ account_id: accountId, limit: 1000,
        ...(cursor ? { cursor } : {}) })
      rows.push(...page.transactions)
      cursor = page.next_cursor
    } while (cursor)
    return rows
  }

  /**
   * Paid exactly once, as the account's transaction list shows it: one `bulk_payment` row
   * per payment (its tx_id), a `refund` of it for a failed payment only, and the balance
   * down by exactly the successful payments and their fees.
   */
  async function paymentsCheck(bank: ChaosBank, batch: Batch, funded: bigint) {
    const accountId = bank.accounts[1]!
    const rows = await transactionsOf(bank, accountId)
    const byTx = new Map<string, number>()
    const refunds = new Map<string, number>()
    for (const row of rows) {
      if (row.tx_type === 'bulk_payment') byTx.set(row.tx_id, (byTx.get(row.tx_id) ?? 0) + 1)
      if (row.tx_type === 'refund') refunds.set(row.parent_tx_id, (refunds.get(row.parent_tx_id)
        ?? 0) + 1)
    }
    const problems: string[] = []
    let spent = 0n
    const payRows = new Map(rows.filter((r) => r.tx_type === 'bulk_payment').map(
      (r) => [r.tx_id, r]))
    for (const p of batch.payments) {
      const listed = p.tx_id ? (byTx.get(p.tx_id) ?? 0) : 0
      const refunded = p.tx_id ? (refunds.get(p.tx_id) ?? 0) : 0
      if (listed !== 1) problems.push(`${p.payment_id}: listed ${listed} times`)
      if (refunded !== (p.status === 'failed' ? 1 : 0)) problems.push(
        `${p.payment_id} (${p.status}): refunded ${refunded} times`)
      if (p.status === 'success') spent += BigInt(p.amount) + BigInt(payRows.get(p.tx_id!)?.fee
        ?? '0')
    }
    // The batch's own funding row, plus one row per payment, and nothing else of the kind.
    const bulkRows = rows.filter((r) => r.tx_type === 'bulk_payment').length
    if (bulkRows !== batch.payment_count + 1) problems.push(
      `${bulkRows} bulk_payment rows for ${batch.payment_count} payments and the funding`)
    const details = await bank.client.accounts.getDetails({ account_id: accountId })
    if (BigInt(details.balance) !== funded - spent) problems.push(
      `balance ${details.balance}, expected ${funded - spent}`)
    return { problems, refunds: [...refunds.values()].reduce((a, b) => a + b, 0) }
  }

  /** Every event of the batch at the receiver: ids, repeats, order and signatures. */
  function deliveryCheck(receiver: Receiver, bulkPaymentId: string, paymentCount: number) {
    const arrivals = receiver.of(bulkPaymentId)
    const idsByEvent = new Map<string, Set<string>>()
    const seen = new Map<string, number>()
    for (const a of arrivals) {
      const key = a.type.startsWith('payment.') ? `payment:${a.paymentId}` : a.type
      idsByEvent.set(key, (idsByEvent.get(key) ?? new Set()).add(a.id))
      seen.set(a.id, (seen.get(a.id) ?? 0) + 1)
    }
    const firstCompleted = arrivals.findIndex((a) => a.type === 'bulk_payment.completed')
    const lastFirstPayment =
      Math.max(...[...idsByEvent.keys()].filter((k) => k.startsWith('payment:')).map((k) =>
      arrivals.findIndex((a) => `payment:${a.paymentId}` === k && a.type.startsWith('payment.'))))
    return {
      posts: arrivals.length,
      events: seen.size,
      payment_events: [...idsByEvent.keys()].filter((k) => k.startsWith('payment:')).length,
      repeated_ids: [...seen.values()].filter((n) => n > 1).length,
      /** Events that arrived under more than one webhook-id (must be none). */
      events_with_two_ids: [...idsByEvent.values()].filter((ids) => ids.size > 1).length,
      unsigned: arrivals.filter((a) => !a.verified).length,
      completed_after_payments: firstCompleted > lastFirstPayment,
      expected_events: paymentCount + 2,
    }
  }

  const failingRecipients = new Map<number,
      Partial<{ account_number: string; branch_code: string }>>([
    [7, { account_number: magic.failed }],
    [250, { account_number: magic.invalid }],
    [301, { branch_code: magic.invalidBranch }],
    [501, { account_number: magic.failed }],
    [600, { account_number: magic.invalid }],
    [999, { branch_code: magic.invalidBranch }],
  ])

  /**
   * A 1000-payment batch whose process is killed once some payments are booked; waits until
   * it is completed and its events delivered.
   */
  async function killWhilePayingOut() {
    const { bank, receiver, services, crashAndRestart } = await startBank()
    const id = 'chaos-big'
    const request = batchRequest(bank, id, limits.payments_big, failingRecipients)
    const rtc = request.payments.filter((p) => p.real_time).length
    const funded =
      BigInt((await bank.client.accounts.getDetails({ account_id: request.account_id })).balance)

    await initiateAndVerify(bank, request)
    // The kill lands once some payments are booked; the EFTs wait for a clearing cycle, so
    // the batch is certainly still paying out.
    const atKill = await until('some payments are booked', async () => {
      const batch = await statusOf(bank, id)
      return processed(batch) > 0 ? batch : undefined
    })
    const orphaned = await crashAndRestart()

    // The RTC payments are all answered by the new process; then a clearing cycle takes the EFTs.
    await until('every RTC payment is booked', async () => {
      const batch = await statusOf(bank, id)
      return processed(batch) >= rtc ? batch : undefined
    })
    await bank.operator.clearing.run()
    const batch = await until('the batch is completed', async () => {
      const b = await statusOf(bank, id)
      return b.status === 'completed' ? b : undefined
    })
    const completedAt = Date.now()
    await until('every event of the batch reached the receiver', () =>
      new Set(receiver.of(id).map((a) => a.id)).size >= limits.payments_big + 2 ? true : undefined,
    )
    return { bank, receiver, services, id, request, rtc, funded, atKill, orphaned, batch,
      completedAt }
  }

  test('chaos - a 1000-payment batch killed (SIGKILL) while it pays out: every payment paid once, completed, events delivered', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const { bank, receiver, services, id, request, rtc, funded, atKill, orphaned, batch,
      completedAt } = await killWhilePayingOut()
    const payments = await paymentsCheck(bank, batch, funded)
    const delivery = deliveryCheck(receiver, id, limits.payments_big)
    const ledger = await bank.operator.ledger.verify()
    const failedExpected = failingRecipients.size
    console.log('chaos', JSON.stringify({
      scenario: 'bulk SIGKILL while paying out',
      payments: batch.payment_count, rtc, eft: batch.payment_count - rtc,
      processed_at_kill: processed(atKill), jobs_taken_over: orphaned,
      successful: batch.successful_count, failed: batch.failed_count, refunds: payments.refunds,
      paid_twice_or_missing: payments.problems.length,
      ...delivery,
      ledger_ok: ledger.ok,
      seconds_to_completed: Math.round((completedAt - started) / 100) / 10,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    }))

    assert.equal(services[0]!.child.signalCode, 'SIGKILL', 'the first process ended by the kill')
    for (const [i, s] of services.entries()) assert.equal(s.unexpectedExit, undefined,
      `service process ${i} exited on its own\n${s.logTail()}`)
    assert.equal(atKill.status, 'processing',
      'the batch was paying out when the process was killed')
    assert.ok(processed(atKill) < batch.payment_count, 'payments were still unbooked at the kill')
    assert.ok(orphaned.includes('bulk.process'),
      `the killed process was running the batch's processing job (${orphaned.join(', ')})`)
    assert.deepEqual(payments.problems.slice(0, 10), [], 'every payment is paid exactly once')
    assert.equal(batch.failed_count, failedExpected, 'the magic recipients fail, and only they')
    assert.equal(payments.refunds, failedExpected, 'a refund for each failed payment only')
    assert.equal(batch.successful_count + batch.failed_count, batch.payment_count,
      'the counts add up')
    assert.equal(BigInt(batch.successful_amount) + BigInt(batch.failed_amount),
      BigInt(batch.total_amount), 'the amounts add up')
    assert.equal(batch.total_amount, String(request.total_amount))
    assert.ok(batch.payments.every((p) => p.status === 'success' || p.status === 'failed'),
      'every payment is final')
    assert.equal(delivery.events, delivery.expected_events,
      'verified, one event per payment and completed: each delivered')
    assert.equal(delivery.payment_events, limits.payments_big)
    assert.equal(delivery.events_with_two_ids, 0, 'a repeated event keeps its webhook-id')
    assert.equal(delivery.unsigned, 0, 'every POST verifies with the partner secret')
    assert.ok(delivery.completed_after_payments,
      'every payment.* arrives before bulk_payment.completed')
    assert.deepEqual(ledger.problems, [])
    assert.equal(ledger.ok, true, 'ledger verify is clean')
  })

  /**
   * A batch whose webhooks are refused twice, then one held open while the process is killed;
   * waits until the batch is completed and every event delivered.
   */
  async function killMidDelivery() {
    const { bank, receiver, services, crashAndRestart } = await startBank()
    const id = 'chaos-webhooks'
    const request = batchRequest(bank, id, limits.payments_small,
      new Map([[7, { account_number: magic.failed }], [50, { account_number: magic.invalid }]]))
    const rtcOnly =
      { ...request, payments: request.payments.map((p) => ({ ...p, real_time: true })) }
    // The first two POSTs are answered 500; the 15th is held open until the process is dead.
    let release!: (status: number) => void
    const held = new Promise<number>((resolve) => (release = resolve))
    const hold_at = 15
    receiver.answer((_, n) => (n <= 2 ? 500 : n === hold_at ? held : 200))

    await initiateAndVerify(bank, rtcOnly)
    await until('the receiver has answered 500 once', () => (receiver.arrivals.length >= 1 ? true
      : undefined))
    // Retries are due on the bank's clock (30 s, then 60 s): the sandbox moves it, and runs
    // what falls due on the way, which goes on down the batch's events until the held one.
    await bank.operator.sandbox.advance({ seconds: 45 })
    await until('the receiver has answered 500 twice', () => (receiver.arrivals.length >= 2 ? true
      : undefined))
    const advancing = bank.operator.sandbox.advance({ seconds: 120 }).catch((error: Error) => error)
    const inFlight = await until('a POST is held open', () => (receiver.arrivals.length >= hold_at
      ? receiver.arrivals[hold_at - 1] : undefined))
    const orphaned = await crashAndRestart()
    release(200)
    // The killed process never answers that advance; its request ends with the connection.
    void advancing

    const batch = await until('the batch is completed', async () => {
      const b = await statusOf(bank, id)
      return b.status === 'completed' ? b : undefined
    })
    await until('every event of the batch reached the receiver', () =>
      new Set(receiver.of(id).map((a) => a.id)).size >= limits.payments_small + 2 ? true
        : undefined,
    )
    return { bank, receiver, services, id, inFlight, orphaned, batch }
  }

  test('chaos - the bank killed (SIGKILL) in the middle of webhook delivery: every event delivered, each under one webhook-id', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const { bank, receiver, services, id, inFlight, orphaned, batch } =
      await killMidDelivery()
    const delivery = deliveryCheck(receiver, id, limits.payments_small)
    const retried = receiver.arrivals.filter((a) => a.id === receiver.arrivals[0]!.id).length
    const heldAgain = receiver.arrivals.filter((a) => a.id === inFlight.id).length
    const ledger = await bank.operator.ledger.verify()
    console.log('chaos', JSON.stringify({
      scenario: 'bulk webhooks SIGKILL mid-delivery',
      payments: batch.payment_count, successful: batch.successful_count, failed: batch.failed_count,
      jobs_taken_over: orphaned, first_event_posts: retried, held_event_posts: heldAgain,
      ...delivery,
      ledger_ok: ledger.ok,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    }))

    assert.equal(services[0]!.child.signalCode, 'SIGKILL', 'the first process ended by the kill')
    for (const [i, s] of services.entries()) assert.equal(s.unexpectedExit, undefined,
      `service process ${i} exited on its own\n${s.logTail()}`)
    assert.ok(orphaned.includes('webhook.deliver'),
      `the killed process was running a delivery job (${orphaned.join(', ')})`)
    assert.equal(receiver.arrivals[0]!.type, 'bulk_payment.verified',
      'the batch\'s first event heads its lane')
    assert.ok(retried >= 3,
      `the event answered 500 twice was sent again under its id (${retried} POSTs)`)
    assert.ok(heldAgain >= 2,
      `the event whose POST the kill cut short was sent again under its id (${heldAgain} POSTs)`)
    assert.equal(delivery.events, delivery.expected_events, 'every event of the batch delivered')
    assert.equal(delivery.events_with_two_ids, 0, 'a repeated event keeps its webhook-id')
    assert.equal(delivery.unsigned, 0, 'every POST verifies with the partner secret')
    assert.ok(delivery.completed_after_payments,
      'every payment.* arrives before bulk_payment.completed')
    assert.equal(batch.successful_count + batch.failed_count, batch.payment_count)
    assert.equal(BigInt(batch.successful_amount) + BigInt(batch.failed_amount),
      BigInt(batch.total_amount))
    assert.deepEqual(ledger.problems, [])
    assert.equal(ledger.ok, true, 'ledger verify is clean')
  })
}
