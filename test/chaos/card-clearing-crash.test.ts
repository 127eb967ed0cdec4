import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { chaosPass } from './pass.ts'

// Card clearing survives the bank process being killed outright (SIGKILL) in the middle of
// the network's clearing file (issue 31). The service runs as a child process in sandbox
// mode, on a database of its own and a private nats-server. Two cards (on two accounts)
// authorize 160 payments each; the network then sends their clearings
// (`ops.sandbox.card.clear`: below, at and up to 15 % above the hold) from 8 senders, and
// once a quarter of them are acknowledged the process is killed (no clearing is sent after
// that); a new process takes over the same database. The
// network sends every clearing again, as it retries what it has no answer to (and what it
// has), until each is answered; then once more. Each clearing is one database transaction
// (card-network.ts), so a clearing cut short by the kill either committed whole or left
// nothing; the retry finishes it or is answered the committed result.
// Checked: every authorization is cleared exactly once, with its amount (`lost`: one
// acknowledged before the kill that is not; `doubled`: one whose card row or adjustment
// row is there twice, or whose money moved twice); each repeat of a clearing (same amount)
// answers what the first answered, not 409, and another amount is 409; each account's
// balance is its funding less the sum of its clearings, with nothing held; ledger verify is
// clean. The figures are printed like the other chaos tests' (sent / acknowledged / lost /
// doubled).

if (chaosPass) {
  // Loaded only on the PostgreSQL pass (see pass.ts).
  const fs = await import('node:fs')
  const path = await import('node:path')
  const { BankApiError, OperatorClient } = await import('../../src/client/index.ts')
  const { setUpBank } = await import('./load.ts')
  const processes = await import('./processes.ts')
  const { ChaosNats, Cleanup, ServiceProcess, sharedClusterDatabase, tempDir, withClient } =
    processes
  const { userRequest } = await import('../support/fixtures.ts')
  const { holderAddress } = await import('../cards/helpers.ts')
  type ChaosBank = Awaited<ReturnType<typeof setUpBank>>
  type View = Awaited<ReturnType<ChaosBank['operator']['cardNetwork']['clear']>>

  const limits = {
    test_timeout_ms: 150_000,
    /** The longest any one wait may take (a real process has no injectable clock). */
    wait_ms: 45_000,
    cards: 2,
    authorizations_per_card: 160,
    senders: 8,
    /** The kill lands once this share of the clearings is acknowledged. */
    acknowledged_at_kill: 0.25,
    /** The network's requests time out early, so that one lost in the kill is retried soon. */
    request_timeout_ms: 5_000,
    retry_backoff_ms: 100,
    /** Clearings as per cent of the hold, in turn: below, at and up to 15 % above it. */
    cleared_percent: [85, 100, 115, 93, 107, 100, 110],
  }

  const cleanup = new Cleanup()
  after(() => cleanup.run())

  interface Payment {
    accountId: string
    authorizationId: string
    txId: string
    authorized: number
    cleared: number
    /** The reply to the clearing before the kill, when one came. */
    first?: View
    /** The reply to the clearing sent again after the restart. */
    retried?: View
  }

  /** Two users of the root entity, and a card (virtual, active at once) on `accountId`. */
  async function issueCard(bank: ChaosBank, accountId: string, n: number): Promise<string> {
    const user = async (email: string) =>
      (
        await bank.client.users.create(
          userRequest(bank.rootEntityId, {
            email,
            verified: true,
            address: holderAddress,
          }) as never,
        )
      ).userId
    const holder = await user(`holder${n}@acme.example`)
    const approver = await user(`approver${n}@acme.example`)
    const name = `Chaos card ${n}`
    const { id } = await bank.client.cards.request({
      account_id: accountId,
      user_id: holder,
      name,
      type: 0,
      use_type: 0,
    })
    const entity = { entity_id: bank.rootEntityId, account_id: accountId }
    await bank.client.cards.respondToRequest({
      ...entity,
      initiator: approver,
      request_id: id,
      approved: true,
    })
    const { cards } = await bank.client.cards.list(entity)
    const card = cards.find((c) => c.name === name)
    assert.ok(card, 'the approved request issued a card')
    return card.id
  }

  /** Authorizations of 1 000 + 37·i cents on each card, their clearing amounts in turn. */
  async function authorizeAll(bank: ChaosBank): Promise<Payment[]> {
    const payments: Payment[] = []
    for (let c = 0; c < limits.cards; c++) {
      const accountId = bank.accounts[c]!
      const cardId = await issueCard(bank, accountId, c)
      for (let i = 0; i < limits.authorizations_per_card; i++) {
        const authorized = 1_000 + 37 * i
        const percent = limits.cleared_percent[i % limits.cleared_percent.length]!
        const auth = await bank.operator.cardNetwork.authorize({
          card_id: cardId,
          amount: authorized,
          merchant_name: `Merchant ${i}`,
          mcc: '5812',
          merchant_country: 'ZAF',
          channel: 'pos',
          entry_mode: 'chip',
        })
        assert.equal(auth.status, 'pending', `authorization ${i} of card ${c} is approved`)
        const cleared = Math.floor((authorized * percent) / 100)
        const { authorization_id: authorizationId, tx_id: txId } = auth
        payments.push({ accountId, authorizationId, txId: txId!, authorized, cleared })
      }
    }
    return payments
  }

  /** The network's answer to one clearing: its view, or the refusal's code. */
  async function clear(network: InstanceType<typeof OperatorClient>, p: Payment) {
    try {
      const view = await network.cardNetwork.clear({
        authorization_id: p.authorizationId,
        amount: p.cleared,
      })
      return { ok: true as const, view }
    } catch (error) {
      const code = error instanceof BankApiError ? String(error.code) : (error as Error).name
      return { ok: false as const, code }
    }
  }

  /** What a repeat must answer again: the same authorization, cleared with the same amount. */
  const essence = (v: View) => ({
    authorization_id: v.authorization_id,
    status: v.status,
    amount: v.amount,
    held: v.held,
    reversed: v.reversed,
    cleared: v.cleared,
    tx_id: v.tx_id,
  })

  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  /**
   * Sends every clearing of `queue` from the senders, each until it is answered (a 503 or a
   * timeout while the bank is away is sent again); a refusal other than those fails the test.
   */
  async function sendUntilAnswered(
    network: InstanceType<typeof OperatorClient>,
    queue: Payment[],
    record: (p: Payment, view: View) => void,
  ): Promise<number> {
    let retries = 0
    const deadline = Date.now() + limits.wait_ms
    const sender = async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        for (;;) {
          const reply = await clear(network, p)
          if (reply.ok) {
            record(p, reply.view)
            break
          }
          const transient = ['503', '504', 'TimeoutError'].includes(reply.code)
          assert.ok(transient, `clearing ${p.authorizationId} refused: ${reply.code}`)
          assert.ok(Date.now() < deadline, `clearing ${p.authorizationId} still unanswered`)
          retries++
          await pause(limits.retry_backoff_ms)
        }
      }
    }
    await Promise.all(Array.from({ length: limits.senders }, sender))
    return retries
  }

  /** The authorizations' rows as stored right after the restart, before anything is resent. */
  async function storedAtRestart(databaseUrl: string, payments: Payment[]) {
    const ids = payments.map((p) => p.authorizationId)
    const { rows } = await withClient(databaseUrl, (c) =>
      c.query<{ id: string; status: string; cleared: string }>(
        'select id, status, cleared from card_authorizations where id = any($1)',
        [ids],
      ),
    )
    return new Map(rows.map((r) => [r.id, r]))
  }

  /** Every transaction of the account, all pages. */
  async function transactionsOf(bank: ChaosBank, accountId: string) {
    const rows = []
    let cursor: string | undefined
    do {
      const page = await bank.client.accounts.listTransactions({
        account_id: accountId,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      })
      rows.push(...page.transactions)
      cursor = page.next_cursor
    } while (cursor)
    return rows
  }

  /**
   * Moved exactly once, as each account's transactions show it: the authorization's `card`
   * row once, Successful, and one child row when the clearing differs from the authorized
   * amount (none otherwise); the balance is the funding less the clearings, nothing held.
   */
  async function moneyCheck(bank: ChaosBank, payments: Payment[], funded: Map<string, bigint>) {
    const problems: string[] = []
    const doubled = new Set<string>()
    for (const [accountId, funding] of funded) {
      const rows = await transactionsOf(bank, accountId)
      const mine = payments.filter((p) => p.accountId === accountId)
      for (const p of mine) {
        const own = rows.filter((r) => r.tx_id === p.txId)
        const children = rows.filter((r) => r.parent_tx_id === p.txId)
        const wanted = p.cleared === p.authorized ? 0 : 1
        if (own.length > 1 || children.length > wanted) doubled.add(p.authorizationId)
        if (own.length !== 1 || own[0]!.status !== 'Successful' || children.length !== wanted) {
          const statuses = own.map((r) => r.status).join(',')
          problems.push(`${p.authorizationId}: rows ${statuses}, ${children.length} adjustments`)
        }
      }
      const spent = mine.reduce((sum, p) => sum + BigInt(p.cleared), 0n)
      const details = await bank.client.accounts.getDetails({ account_id: accountId })
      const expected = String(funding - spent)
      if (details.balance !== expected || details.available_balance !== expected) {
        const got = `${details.balance} (available ${details.available_balance})`
        problems.push(`account ${accountId}: balance ${got}, expected ${expected}`)
      }
    }
    return { problems, doubled: doubled.size }
  }

  /** The network's own client: the bank's operator credential, requests that time out early. */
  function networkClient(bank: ChaosBank, dataDir: string) {
    const token = fs.readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
    return new OperatorClient({
      connection: bank.nc,
      token,
      timeoutMs: limits.request_timeout_ms,
    })
  }

  /**
   * The clearing file sent once from the senders; once the given share is acknowledged the
   * process is killed and no new clearing is sent. Answers how many were sent before it.
   */
  async function clearUntilKilled(
    network: InstanceType<typeof OperatorClient>,
    payments: Payment[],
    kill: () => Promise<void>,
  ) {
    const queue = [...payments]
    let sent = 0
    let acknowledged = 0
    let killing: Promise<void> | undefined
    const killAt = Math.ceil(payments.length * limits.acknowledged_at_kill)
    const sender = async () => {
      for (let p = queue.shift(); p && !killing; p = queue.shift()) {
        sent++
        const reply = await clear(network, p)
        if (!reply.ok) continue
        p.first = reply.view
        if (++acknowledged >= killAt) killing ??= kill()
      }
    }
    await Promise.all(Array.from({ length: limits.senders }, sender))
    await killing
    return { sent, acknowledged }
  }

  /** The bank as a child process on its own database and NATS, a partner, its authorizations. */
  async function startBank() {
    const nats = await ChaosNats.start(cleanup)
    const env = {
      natsUrl: nats.url,
      databaseUrl: await sharedClusterDatabase(cleanup),
      dataDir: tempDir(cleanup, 'bank-chaos-data-'),
    }
    const services = [await ServiceProcess.start(env, cleanup)]
    const bank = await setUpBank(nats.url, env.dataDir)
    cleanup.add(() => bank.nc.close())
    const payments = await authorizeAll(bank)
    const funded = new Map<string, bigint>()
    for (const accountId of new Set(payments.map((p) => p.accountId))) {
      const details = await bank.client.accounts.getDetails({ account_id: accountId })
      funded.set(accountId, BigInt(details.balance))
    }
    return { env, services, bank, payments, funded, network: networkClient(bank, env.dataDir) }
  }
  type Started = Awaited<ReturnType<typeof startBank>>

  /**
   * The clearings sent until the kill, a new process, and what the database holds then:
   * `lost` counts clearings acknowledged before the kill but not stored cleared with their
   * amount; `committed` those unanswered that were stored all the same.
   */
  async function killMidClearing({ env, services, payments, network }: Started) {
    const beforeKill = await clearUntilKilled(network, payments, () => services[0]!.kill())
    services.push(await ServiceProcess.start(env, cleanup))
    const atRestart = await storedAtRestart(env.databaseUrl, payments)
    const cleared = (p: Payment) => {
      const row = atRestart.get(p.authorizationId)
      return row?.status === 'cleared' && row.cleared === String(p.cleared)
    }
    const unanswered = payments.filter((p) => !p.first)
    return {
      ...beforeKill,
      unanswered: unanswered.length - (payments.length - beforeKill.sent),
      committed: unanswered.filter(cleared).length,
      lost: payments.filter((p) => p.first && !cleared(p)).length,
    }
  }

  /**
   * The network sends every clearing again until answered, then once more: each repeat must
   * answer what the first answer (before the kill, or the retry) said. Answers the transient
   * refusals met on the way, the clearings whose answers differ, and a clearing of another
   * amount's outcome.
   */
  async function resendAll({ payments, network }: Started) {
    const retries = await sendUntilAnswered(network, [...payments], (p, view) => {
      p.retried = view
    })
    const repeats = new Map<string, View>()
    await sendUntilAnswered(network, [...payments], (p, view) => {
      repeats.set(p.authorizationId, view)
    })
    const differing = payments.filter((p) => {
      const same = (v: View | undefined) =>
        v !== undefined && JSON.stringify(essence(v)) === JSON.stringify(essence(p.retried!))
      return !same(repeats.get(p.authorizationId)) || (p.first !== undefined && !same(p.first))
    })
    const other = await clear(network, { ...payments[0]!, cleared: payments[0]!.cleared + 1 })
    return { retries, differing: differing.length, other }
  }

  test('chaos - card clearings killed (SIGKILL) mid-way and sent again: each authorization cleared exactly once, repeats answered the same, ledger clean', { timeout: limits.test_timeout_ms }, async () => {
    const started = Date.now()
    const run = await startBank()
    const { bank, payments, services } = run
    const kill = await killMidClearing(run)
    const resent = await resendAll(run)
    const money = await moneyCheck(bank, payments, run.funded)
    const ledger = await bank.operator.ledger.verify({})
    const figures = {
      scenario: 'card clearing SIGKILL',
      authorizations: payments.length,
      sent: kill.sent,
      acknowledged: kill.acknowledged,
      unanswered_at_kill: kill.unanswered,
      unanswered_but_committed: kill.committed,
      not_sent_before_kill: payments.length - kill.sent,
      transient_refusals_on_retry: resent.retries,
      repeats_differing: resent.differing,
      lost: kill.lost,
      doubled: money.doubled,
      ledger_ok: ledger.ok,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    }
    console.log('chaos', JSON.stringify(figures))

    assert.equal(services[0]!.child.signalCode, 'SIGKILL', 'the first process ended by the kill')
    for (const [i, s] of services.entries()) {
      assert.equal(s.unexpectedExit, undefined, `service ${i} exited on its own\n${s.logTail()}`)
    }
    assert.ok(kill.acknowledged < payments.length, 'clearings were left at the kill')
    assert.equal(kill.lost, 0, 'no clearing acknowledged before the kill is lost')
    const answers = payments.map((p) => [p.retried?.status, p.retried?.cleared])
    assert.deepEqual(
      answers,
      payments.map((p) => ['cleared', p.cleared]),
      'each cleared, its amount',
    )
    assert.equal(resent.differing, 0, 'a repeated clearing answers what the first answered')
    const other = resent.other
    assert.ok(!other.ok && other.code === '409', 'a clearing of another amount is 409')
    assert.deepEqual(money.problems.slice(0, 10), [], 'every authorization cleared exactly once')
    assert.equal(money.doubled, 0, 'no money moved twice')
    assert.deepEqual(ledger.problems, [])
    assert.equal(ledger.ok, true, 'ledger verify is clean')
  })
}
