// `npm run bench`: transfer throughput and latency over NATS against PostgreSQL, never part
// of `npm test`. It starts a private nats-server, the service as its own process (as in
// production) on a fresh PostgreSQL database, funds 1,000 accounts, and drives 128 requests
// in flight: (a) EFT transfers spread over the 1,000 accounts, (b) all from one hot
// account, and (c) a no-op request/reply echo served by a separate process, the ceiling
// the transport allows; then (d) times transaction-list pages on a 1,000,000-row account,
// (e) times bulk payments and webhook deliveries (bench/bulk-phases.ts), and (f) times a
// debit-order collection run of 100,000 due orders (bench/debit-phase.ts; before (d)).
// Prints a table and writes bench/results.json.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import pg from 'pg'
import { BankClient, OperatorClient } from '../src/client/index.ts'
import { findNatsServerBinary, startNatsServer } from '../src/transport/nats/nats-server.ts'
import { bulkPhases } from './bulk-phases.ts'
import { debitPhase } from './debit-phase.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const in_flight = Number(process.env.BENCH_IN_FLIGHT ?? 128)
const phase_ms = Number(process.env.BENCH_PHASE_MS ?? 10_000)
const warmup_ms = Number(process.env.BENCH_WARMUP_MS ?? 2_000)
const accounts_count = Number(process.env.BENCH_ACCOUNTS ?? 1000)

interface PhaseResult {
  ops_per_s: number
  p50_ms: number
  p99_ms: number
  completed: number
  errors: number
}

async function main(): Promise<void> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error('the benchmark needs nats-server on the PATH')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-'))
  const nats = await startNatsServer({ binary, storeDir: path.join(work, 'nats') })
  const dbName = `bank_bench_${randomBytes(4).toString('hex')}`
  await admin(`create database ${dbName}`)
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  const children: ChildProcess[] = []
  try {
    const echo = spawnEcho(nats.url)
    children.push(echo)
    const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean)
    const service = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(root, 'src/main.ts')], {
      cwd: root,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        DATABASE_URL: dbUrl.toString(),
        BANK_DATA_DIR: path.join(work, 'data'),
        LOG_LEVEL: 'warn',
        BANK_CLEARING_SCHEDULE: 'off',
        // Sandbox mode lets the bulk phases read OTPs and post webhooks to a loopback receiver.
        BANK_SANDBOX: 'true',
        BANK_DB_POOL_MAX: process.env.BANK_DB_POOL_MAX ?? '10',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    children.push(service)
    const nc = await connect({ servers: nats.url })
    await waitForService(nc)
    const token = fs.readFileSync(path.join(work, 'data', 'operator-token'), 'utf8').trim()
    const operator = new OperatorClient({ connection: nc, token, timeoutMs: 60_000 })
    const { client, accounts, hot, rootEntityId } = await setUp(nc, operator)

    const echoResult = await drive(nc, async () => {
      await nc.request('bench.echo', '{}', { timeout: 10_000 })
    })
    let next = 0
    const transfer = (accountId: string) =>
      client.accounts.transfer({
        account_id: accountId,
        clientTxId: randomUUID(),
        amount: 100,
        ref: 'bench',
        own_ref: 'bench payment',
        account_number: '62000000001',
        branch_code: '250655',
        name: 'Bench Recipient',
      })
    const spread = await drive(nc, () => transfer(accounts[next++ % accounts.length]!))
    const hotResult = await drive(nc, () => transfer(hot))
    const verify = await operator.ledger.verify()
    const bulk = await bulkPhases(client, operator, rootEntityId)
    const verifyAfterBulk = await operator.ledger.verify()
    const debit = await debitPhase(nc, token, dbUrl.toString())
    // Last: it writes a million rows straight into an account, outside the hash chain.
    const paging = await pageOnAMillion(client, dbUrl.toString(), client.partnerId)

    const results = {
      date: new Date().toISOString(),
      machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
      storage: 'postgres',
      in_flight,
      phase_ms,
      accounts: accounts.length,
      payment: 'EFT transfer, 100 cents + fee (hold + Pending rows; one grouped DB transaction per batch)',
      echo_rps: Math.round(echoResult.ops_per_s),
      echo_p50_ms: echoResult.p50_ms,
      echo_p99_ms: echoResult.p99_ms,
      spread_tps: Math.round(spread.ops_per_s),
      spread_p50_ms: spread.p50_ms,
      spread_p99_ms: spread.p99_ms,
      spread_errors: spread.errors,
      hot_tps: Math.round(hotResult.ops_per_s),
      hot_p50_ms: hotResult.p50_ms,
      hot_p99_ms: hotResult.p99_ms,
      hot_errors: hotResult.errors,
      spread_to_echo: round(spread.ops_per_s / echoResult.ops_per_s),
      hot_to_echo: round(hotResult.ops_per_s / echoResult.ops_per_s),
      hot_to_spread: round(hotResult.ops_per_s / spread.ops_per_s),
      ledger_verified: verify.ok,
      million_rows_first_page_ms: paging.first_page_ms,
      million_rows_deep_page_ms: paging.deep_page_ms,
      bulk_initiate_ms: bulk.bulk_initiate_ms,
      bulk_complete_ms: bulk.bulk_complete_ms,
      webhooks_per_s: bulk.webhooks_per_s,
      webhooks_e2e_per_s: bulk.webhooks_e2e_per_s,
      webhook_events: bulk.webhook_events,
      ledger_verified_after_bulk: verifyAfterBulk.ok,
      debit_run_100k_s: debit.debit_run_100k_s,
      debit_orders: debit.debit_orders,
      debit_run_seed_s: debit.debit_run_seed_s,
      ledger_verified_after_debit: debit.ledger_verified_after_debit,
    }
    printTable(results)
    fs.writeFileSync(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`)
    await nc.close()
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve)))))
    await admin(`drop database if exists ${dbName} with (force)`)
    // nats-server's process handle is unref'd: with nothing else pending, awaiting its exit
    // would let Node end right there (the database above was never dropped that way).
    const keepAlive = setInterval(() => {}, 1000)
    await nats.stop().finally(() => clearInterval(keepAlive))
    fs.rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Keyset paging on a big account: 1,000,000 rows written straight into one fresh account
 * (their hashes are not a real chain; only the read path is timed), then the mean time of
 * a 100-row page at the newest end and half-way down, over NATS.
 */
async function pageOnAMillion(client: BankClient, dbUrl: string, partnerId: string) {
  const rows = Number(process.env.BENCH_PAGING_ROWS ?? 1_000_000)
  const { account_id } = await client.accounts.create({ entity_id: (await client.entities.list()).entities[0]!.id })
  const db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  await db.query(
    `insert into transactions (id, partner_id, account_id, seq, created_at, tx_type, tx_payment_type, status, amount, fee,
       credit, debit, hold_amount, running_balance, added_by, prev_sha, tx_sha)
     select gen_random_uuid(), $1, $2, g, now(), 'deposit', 'EFT', 'Successful', 100, 0, 100, 0, 0, g * 100, 'system', '', ''
     from generate_series(1, $3::bigint) g`,
    [partnerId, account_id, rows],
  )
  await db.query('update accounts set last_seq = $2 where id = $1', [account_id, rows])
  await db.query('analyze transactions')
  await db.end()
  const time = async (cursor?: string) => {
    const n = 50
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      const page = await client.accounts.listTransactions({ account_id, limit: 100, ...(cursor ? { cursor } : {}) })
      if (page.transactions.length !== 100) throw new Error('a page came back short')
    }
    return round((performance.now() - t0) / n)
  }
  const deepCursor = Buffer.from(`s${Math.floor(rows / 2)}`).toString('base64url')
  return { first_page_ms: await time(), deep_page_ms: await time(deepCursor) }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  await client.query(statement)
  await client.end()
}

/** A no-op responder in its own process: the NATS request/reply ceiling on this machine. */
function spawnEcho(url: string): ChildProcess {
  const script = `
    import { connect } from '@nats-io/transport-node'
    const nc = await connect({ servers: ${JSON.stringify(url)} })
    nc.subscribe('bench.echo', { callback: (_e, m) => m.respond(m.data) })
    await nc.flush()
    process.send?.('ready')
  `
  return spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
}

async function waitForService(nc: NatsConnection): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      await nc.request('$SRV.PING.partner-bank', '', { timeout: 500 })
      await nc.request('bench.echo', '{}', { timeout: 500 })
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error('the service did not come up within 30 s')
}

async function setUp(nc: NatsConnection, operator: OperatorClient) {
  const partner = await operator.partners.create({
    name: 'Bench Partner (Pty) Ltd',
    email: 'bench@example.com',
    registration_number: '202099999907',
    trading_name: 'Bench',
  })
  const review = await operator.entities.review({ entity_id: partner.root_entity_id, decision: 'approve' })
  const client = new BankClient({ connection: nc, token: partner.credential.token, partnerId: partner.partner_id, timeoutMs: 60_000 })
  const hot = review.account!.account_id
  const accounts: string[] = []
  for (let i = 0; i < accounts_count; i += 50) {
    const created = await Promise.all(
      Array.from({ length: Math.min(50, accounts_count - i) }, () => client.accounts.create({ entity_id: partner.root_entity_id })),
    )
    accounts.push(...created.map((a) => a.account_id))
  }
  for (let i = 0; i < accounts.length; i += 50) {
    await Promise.all(accounts.slice(i, i + 50).map((account_id) => operator.accounts.deposit({ account_id, amount: 100_000_000 })))
  }
  await operator.accounts.deposit({ account_id: hot, amount: 900_000_000_000 })
  return { client, accounts, hot, rootEntityId: partner.root_entity_id }
}

/** Keeps `in_flight` requests outstanding: a warm-up, then a measured phase. */
async function drive(_nc: NatsConnection, request: () => Promise<unknown>): Promise<PhaseResult> {
  const run = async (ms: number, record: boolean) => {
    const latencies: number[] = []
    let errors = 0
    const started = performance.now()
    const deadline = started + ms
    const worker = async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        try {
          await request()
          if (record) latencies.push(performance.now() - t0)
        } catch {
          errors++
        }
      }
    }
    await Promise.all(Array.from({ length: in_flight }, worker))
    const elapsed = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    const pct = (p: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0)
    return { ops_per_s: latencies.length / elapsed, p50_ms: pct(0.5), p99_ms: pct(0.99), completed: latencies.length, errors }
  }
  await run(warmup_ms, false)
  return run(phase_ms, true)
}

function printTable(r: Record<string, unknown>): void {
  const rows = [
    ['phase', 'ops/s', 'p50 ms', 'p99 ms', 'errors'],
    ['echo (no-op request/reply)', r.echo_rps, r.echo_p50_ms, r.echo_p99_ms, 0],
    [`transfers spread (${r.accounts} accounts)`, r.spread_tps, r.spread_p50_ms, r.spread_p99_ms, r.spread_errors],
    ['transfers hot (one account)', r.hot_tps, r.hot_p50_ms, r.hot_p99_ms, r.hot_errors],
  ].map((row) => row.map(String))
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}\n`)
  process.stdout.write(
    `\ntransfer/echo: spread ${r.spread_to_echo}, hot ${r.hot_to_echo}; hot/spread ${r.hot_to_spread}; ledger verified: ${r.ledger_verified}\n`,
  )
  process.stdout.write(
    `transaction list on a 1,000,000-row account (100-row page, one request at a time): newest ${r.million_rows_first_page_ms} ms, half-way down ${r.million_rows_deep_page_ms} ms\n`,
  )
  process.stdout.write(
    `bulk payments (1000 payments): initiate ${r.bulk_initiate_ms} ms, verify → completed (RTC) ${r.bulk_complete_ms} ms; ` +
      `webhooks ${r.webhooks_per_s}/s from a standing queue, ${r.webhooks_e2e_per_s}/s from verify (${r.webhook_events} events to a loopback receiver); ledger verified after: ${r.ledger_verified_after_bulk}\n`,
  )
  process.stdout.write(
    `debit-order collection run (${r.debit_orders} due once-off orders, ops.debit.run until every order successful): ${r.debit_run_100k_s} s ` +
      `(orders written straight into the tables in ${r.debit_run_seed_s} s beforehand); ledger verified after: ${r.ledger_verified_after_debit}\n`,
  )
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
