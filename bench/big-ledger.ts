// The benchmark on a ledger already holding millions of transactions (issue 33: transfers
// within 10 % of an empty ledger, a transaction page under 10 ms, `ledger verify` full and
// incremental timed). Never part of `npm test`. In a private PostgreSQL cluster of its own
// (bench/private-cluster.ts):
//
// 1. Seeds a template database: the bank started on it once (its migrations, a partner and
//    BENCH_BIG_ACCOUNTS accounts made through the SDK), then BENCH_BIG_ROWS transactions
//    written with COPY, as the ledger writes them: every row hashed into its account's chain
//    (src/ledger/tx-chain.ts), posted in order with its running balance, each journal's
//    postings summing to zero (a deposit into every other account, then internal payments of
//    100 cents back and forth between the accounts of each pair), the accounts' balances and
//    chain heads set to match.
// 2. On the bank started on the template: a full `ledger verify` (timed; it leaves the
//    checkpoints), BENCH_BIG_TRANSFERS transfers, an incremental verify (timed), and the
//    mean time of a 100-row page of one seeded account at its newest end and half-way down.
// 3. The transfer phases of bench/run.ts on a copy of the template (BENCH_DATABASE_TEMPLATE)
//    and on an empty database, alternated, BENCH_BIG_ROUNDS rounds (2).
//
//   node --import tsx bench/big-ledger.ts
//
// Every internal payment of the seeded history has its clientTxId key in `transfer_keys`, as
// the bank writes them (random UUIDs, in no order), so the keys' index is as large as such a
// history makes it. BENCH_BIG_KEYS says how old they are:
//   expired (the default) as old as their payments, so past their 24 h window: the bank's
//           daily `transfers.key_expiry` deletes them (timed here, on the template, before
//           anything is measured), as it does in a bank that has run it every day;
//   live    all used within the last 12 hours (a day of 5 million transfers, which no expiry
//           may delete): the largest index of keys the window allows at that volume;
//   none    no keys.
//
// Settings: BENCH_BIG_ROWS (10,000,000), BENCH_BIG_ACCOUNTS (20), BENCH_BIG_TRANSFERS (10,000),
// BENCH_BIG_ROUNDS (2), BENCH_BIG_KEYS (expired), BENCH_PHASES (echo,spread,hot), and
// bench/run.ts's own.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Writable } from 'node:stream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { JobRunner } from '../src/jobs/job-runner.ts'
import type { Database } from '../src/schema.ts'
import { systemClock } from '../src/clock.ts'
import { TransferKeyExpiry } from '../src/transfers/transfer-key-expiry.ts'
import { LedgerService } from '../src/ledger/ledger-service.ts'
import { BankClient, OperatorClient } from '../src/client/index.ts'
import { findNatsServerBinary, startNatsServer } from '../dev/nats-server.ts'
import { chainHash } from '../src/ledger/tx-chain.ts'
import { newRowId } from '../src/ledger/row-id.ts'
import { PrivateCluster } from './private-cluster.ts'
import { benchPayment } from './payment.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const rows_total = Number(process.env.BENCH_BIG_ROWS ?? 10_000_000)
const accounts_count = Number(process.env.BENCH_BIG_ACCOUNTS ?? 20)
const transfers_after = Number(process.env.BENCH_BIG_TRANSFERS ?? 10_000)
const rounds = Number(process.env.BENCH_BIG_ROUNDS ?? 2)
const keys_mode = process.env.BENCH_BIG_KEYS ?? 'expired'
if (!['expired', 'live', 'none'].includes(keys_mode))
  throw new Error('BENCH_BIG_KEYS: expired, live or none')
const key_window_ms = 24 * 3600 * 1000
const template = 'bank_big_tpl'
const deposit_cents = 1_000_000_000n
const payment_cents = 100n

interface Bank {
  nc: NatsConnection
  operator: OperatorClient
  stop(): Promise<void>
}

/** The bank (src/main.ts) on `databaseUrl`, with a NATS server of its own, as in bench/run.ts. */
async function startBank(databaseUrl: string, dataDir: string): Promise<Bank> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error('needs nats-server on the PATH')
  const nats = await startNatsServer({ binary, storeDir: path.join(dataDir, 'nats') })
  const service: ChildProcess = spawn(
    process.execPath,
    ['--max-semi-space-size=64', '--import', 'tsx', path.join(root, 'src/main.ts')],
    {
      cwd: root,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        DATABASE_URL: databaseUrl,
        BANK_DATA_DIR: path.join(dataDir, 'data'),
        LOG_LEVEL: 'warn',
        BANK_CLEARING_SCHEDULE: 'off',
        BANK_SANDBOX: 'true',
        BANK_RATE_PER_SECOND: '1000000',
        BANK_RATE_BURST: '10000000',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const nc = await connect({ servers: nats.url, noAsyncTraces: true })
  for (let attempt = 0; ; attempt++) {
    const token = path.join(dataDir, 'data', 'operator-token')
    if (fs.existsSync(token)) {
      try {
        const operator = new OperatorClient({
          connection: nc,
          token: fs.readFileSync(token, 'utf8').trim(),
          timeoutMs: 900_000,
        })
        await nc.request('$SRV.PING.partner-bank', '', { timeout: 1000 })
        const stop = async () => {
          await nc.close()
          service.kill('SIGTERM')
          if (service.exitCode === null) await once(service, 'exit')
          const keepAlive = setInterval(() => {}, 1000)
          await nats.stop().finally(() => clearInterval(keepAlive))
        }
        return { nc, operator, stop }
      } catch {
        // not answering yet
      }
    }
    if (attempt > 600) throw new Error('the bank did not start within 60 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A COPY … FROM STDIN through psql into `table`; write lines, then end(). */
function copyInto(url: string, table: string, columns: readonly string[]) {
  const psql = spawn(
    'psql',
    [url, '-v', 'ON_ERROR_STOP=1', '-c', `copy ${table} (${columns.join(', ')}) from stdin`],
    {
      stdio: ['pipe', 'ignore', 'inherit'],
    },
  )
  const exited = once(psql, 'exit')
  const input = psql.stdin as Writable
  let buffer: string[] = []
  const flush = async () => {
    if (buffer.length === 0) return
    const ok = input.write(buffer.join(''))
    buffer = []
    if (!ok) await once(input, 'drain')
  }
  return {
    async line(text: string) {
      buffer.push(text)
      if (buffer.length >= 2000) await flush()
    },
    async end() {
      await flush()
      input.end()
      const [code] = await exited
      if (code !== 0) throw new Error(`COPY into ${table} failed (psql exited ${code})`)
    },
  }
}

const tx_columns = [
  'id',
  'partner_id',
  'account_id',
  'seq',
  'created_at',
  'tx_type',
  'tx_payment_type',
  'status',
  'amount',
  'fee',
  'credit',
  'debit',
  'hold_amount',
  'running_balance',
  'posted_order',
  'ref',
  'own_ref',
  'recipient_name',
  'recipient_account',
  'recipient_branch',
  'user_id',
  'added_by',
  'status_at',
  'prev_sha',
  'tx_sha',
] as const
const posting_columns = [
  'journal_id',
  'tx_id',
  'account_id',
  'internal_account',
  'amount',
  'created_at',
]

interface SeedAccount {
  id: string
  seq: bigint
  sha: string
  balance: bigint
}

/** One chained, posted row of `account` (a credit when `amount` > 0); its line for COPY. */
function chainRow(
  partnerId: string,
  a: SeedAccount,
  at: Date,
  type: 'deposit' | 'transfer',
  amount: bigint,
) {
  a.seq += 1n
  a.balance += amount
  const id = newRowId()
  const fields = seedFields(id, a, at, type, amount)
  const sha = chainHash(a.sha, fields)
  const iso = at.toISOString()
  const { credit, debit } = fields
  const line =
    `${id}\t${partnerId}\t${a.id}\t${a.seq}\t${iso}\t${type}\t${fields.tx_payment_type}\t` +
    `Successful\t${fields.amount}\t0\t${credit}\t${debit}\t0\t${a.balance}\t${a.seq}\tseed\t` +
    `\t\t\t\t\tsystem\t${iso}\t${a.sha}\t${sha}\n`
  a.sha = sha
  return { id, line }
}

/** What the chain covers of a seeded row (src/ledger/tx-chain.ts ChainFields). */
function seedFields(id: string, a: SeedAccount, at: Date, type: string, amount: bigint) {
  const credit = amount > 0n ? amount : 0n
  const debit = amount < 0n ? -amount : 0n
  const paymentType = type === 'deposit' ? 'EFT' : 'INTERNAL'
  const blank = { own_ref: '', recipient_name: '', recipient_account: '', recipient_branch: '' }
  return {
    ...{ id, account_id: a.id, seq: a.seq, created_at: at, tx_type: type },
    ...{ tx_payment_type: paymentType, amount: credit + debit, fee: 0n, credit, debit },
    ...{ ref: 'seed', ...blank, parent_tx_id: null, added_by: 'system', user_id: '' },
  }
}

/** Writes `rows_total` chained transactions over the seeded accounts, pair by pair. */
async function seedRows(url: string, partnerId: string, accounts: SeedAccount[]): Promise<void> {
  const txs = copyInto(url, 'transactions', tx_columns)
  const postings = copyInto(url, 'postings', posting_columns)
  const keys = copyInto(url, 'transfer_keys', ['partner_id', 'client_tx_id', 'tx_id', 'created_at'])
  const now = Date.now()
  const keyAt = (t: Date) =>
    keys_mode === 'live'
      ? new Date(now - Math.random() * (key_window_ms / 2)).toISOString()
      : t.toISOString()
  const pairs = Math.floor(accounts.length / 2)
  const perPair = Math.floor(rows_total / pairs)
  let at = Date.now() - rows_total * 1000
  for (let p = 0; p < pairs; p++) {
    const [a, b] = [accounts[2 * p]!, accounts[2 * p + 1]!]
    const when = new Date((at += 1000))
    const deposit = chainRow(partnerId, a, when, 'deposit', deposit_cents)
    const journal = newRowId()
    const iso = when.toISOString()
    await txs.line(deposit.line)
    await postings.line(
      `${journal}\t${deposit.id}\t\\N\tsettlement:EFT\t${-deposit_cents}\t${iso}\n`,
    )
    await postings.line(`${journal}\t${deposit.id}\t${a.id}\t\\N\t${deposit_cents}\t${iso}\n`)
    for (let i = 1; i + 1 < perPair; i += 2) {
      const [payer, payee] = i % 4 === 1 ? [a, b] : [b, a]
      const t = new Date((at += 1000))
      const out = chainRow(partnerId, payer, t, 'transfer', -payment_cents)
      const into = chainRow(partnerId, payee, t, 'transfer', payment_cents)
      const j = newRowId()
      const tIso = t.toISOString()
      await txs.line(out.line)
      await txs.line(into.line)
      await postings.line(`${j}\t${out.id}\t${payer.id}\t\\N\t${-payment_cents}\t${tIso}\n`)
      await postings.line(`${j}\t${into.id}\t${payee.id}\t\\N\t${payment_cents}\t${tIso}\n`)
      if (keys_mode !== 'none')
        await keys.line(`${partnerId}\t${randomUUID()}\t${out.id}\t${keyAt(t)}\n`)
    }
    process.stdout.write(`  pair ${p + 1}/${pairs}: ${a.seq + b.seq} rows\n`)
  }
  await Promise.all([txs.end(), postings.end(), keys.end()])
}

async function sql(url: string, text: string): Promise<void> {
  const psql = spawn('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', text], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const [code] = await once(psql, 'exit')
  if (code !== 0) throw new Error(`psql failed: ${text}`)
}

function seconds(since: number): number {
  return Math.round((performance.now() - since) / 100) / 10
}

/** The template: the bank's schema, a partner and its accounts, then the seeded rows. */
async function seedTemplate(cluster: PrivateCluster, work: string) {
  await cluster.query(`create database ${template}`)
  const url = cluster.urlOf(template)
  const bank = await startBank(url, work)
  const partner = await bank.operator.partners.create({
    name: 'Big Ledger (Pty) Ltd',
    email: 'big@example.com',
    registration_number: '202099999911',
    trading_name: 'Big',
  })
  await bank.operator.entities.review({ entity_id: partner.root_entity_id, decision: 'approve' })
  const client = new BankClient({
    connection: bank.nc,
    token: partner.credential.token,
    partnerId: partner.partner_id,
    timeoutMs: 60_000,
  })
  const accounts: SeedAccount[] = []
  for (let i = 0; i < accounts_count; i++) {
    const { account_id } = await client.accounts.create({ entity_id: partner.root_entity_id })
    accounts.push({ id: account_id, seq: 0n, sha: '', balance: 0n })
  }
  await bank.stop()
  const t0 = performance.now()
  await seedRows(url, partner.partner_id, accounts)
  const values = accounts
    .map((a) => `('${a.id}'::uuid, ${a.balance}, ${a.seq}, '${a.sha}')`)
    .join(',')
  await sql(
    url,
    `update accounts as a set balance = v.b, last_seq = v.s, last_posted = v.s, last_sha = v.h from (values ${values}) as v(id, b, s, h) where a.id = v.id`,
  )
  const copy_s = seconds(t0)
  const t1 = performance.now()
  await sql(url, 'vacuum analyze transactions')
  await sql(url, 'vacuum analyze postings')
  await sql(url, 'vacuum analyze transfer_keys')
  const vacuum_s = seconds(t1)
  const size = await cluster.query(`select pg_size_pretty(pg_database_size('${template}')) as size`)
  return { partner, accounts, copy_s, vacuum_s, size: String(size[0]!.size) }
}

/** Verify full and incremental, and paging, on the bank started on the template. */
async function measureOnTemplate(
  cluster: PrivateCluster,
  work: string,
  partnerToken: string,
  partnerId: string,
  account: SeedAccount,
) {
  const bank = await startBank(cluster.urlOf(template), work)
  const out: Record<string, unknown> = {}
  if (keys_mode === 'expired') out.key_expiry = await expireKeys(cluster.urlOf(template))
  const full = await timedVerify(bank.operator, false)
  out.full_verify_s = full.s
  out.full_verify = full.found
  const client = new BankClient({
    connection: bank.nc,
    token: partnerToken,
    partnerId,
    timeoutMs: 60_000,
  })
  const limits = { requests_per_second: 1_000_000, burst: 10_000_000 }
  await bank.operator.partners.limits({ partner_id: partnerId, ...limits })
  const t = performance.now()
  for (let i = 0; i < transfers_after; i += 100) {
    await Promise.all(
      Array.from({ length: 100 }, () => client.accounts.transfer(benchPayment(account.id))),
    )
  }
  out.transfers_after = transfers_after
  out.transfers_after_s = seconds(t)
  const incremental = await timedVerify(bank.operator, true)
  out.incremental_verify_s = incremental.s
  out.incremental_verify = incremental.found
  out.paging = await timePages(client, account)
  await bank.stop()
  await dropOperators(cluster.urlOf(template))
  return out
}

/** A `ledger verify`, full or incremental: its seconds and what it found. */
async function timedVerify(operator: OperatorClient, incremental: boolean) {
  const t = performance.now()
  const r = await operator.ledger.verify({ incremental })
  const { ok, transactions_checked, journals_checked, checkpoint_written } = r
  const found = { ok, incremental, transactions_checked, journals_checked, checkpoint_written }
  return { s: seconds(t), found }
}

/**
 * What the bank's daily `transfers.key_expiry` job does, run once now (its own code), timed:
 * the seeded keys are past their window. Then a vacuum, as autovacuum would after it.
 */
async function expireKeys(url: string) {
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  })
  const noRunner = { register: () => undefined } as unknown as JobRunner
  try {
    const t = performance.now()
    const ledger = new LedgerService(db, { write: () => Promise.reject(new Error('no writes')) })
    const expiry = new TransferKeyExpiry(ledger, systemClock, noRunner, key_window_ms)
    const deleted = await expiry.sweep()
    const sweep_s = seconds(t)
    await sql(url, 'vacuum analyze transfer_keys')
    return { deleted, sweep_s }
  } finally {
    await db.destroy()
  }
}

/** Without an operator the template's copies make their own first one, as bench/run.ts expects. */
async function dropOperators(url: string): Promise<void> {
  const operators = "select id from credentials where role = 'operator'"
  await sql(url, `delete from rate_buckets where credential_id in (${operators})`)
  await sql(url, "delete from credentials where role = 'operator'")
}

/** The mean time of a 100-row page of `account`, newest first and half-way down (50 each). */
async function timePages(client: BankClient, account: SeedAccount) {
  const time = async (cursor?: string) => {
    const n = 50
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      const page = await client.accounts.listTransactions({
        account_id: account.id,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      })
      if (page.transactions.length !== 100) throw new Error('a page came back short')
    }
    return Math.round(((performance.now() - t0) / n) * 100) / 100
  }
  const deep = Buffer.from(`s${account.seq / 2n}`).toString('base64url')
  return {
    account_rows: Number(account.seq),
    newest_page_ms: await time(),
    half_way_page_ms: await time(deep),
  }
}

/** One bench/run.ts run against the cluster, on a copy of `from` or on an empty database. */
async function benchRun(cluster: PrivateCluster, from: string | undefined, file: string) {
  const env = {
    ...process.env,
    BENCH_DATABASE_URL: cluster.url,
    BENCH_PHASES: process.env.BENCH_PHASES ?? 'echo,spread,hot',
    BENCH_RESULTS_FILE: file,
    ...(from ? { BENCH_DATABASE_TEMPLATE: from } : {}),
  }
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/run.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`bench/run.ts exited ${code}`)
  const r = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
  return {
    echo_rps: r.echo_rps,
    spread_tps: r.spread_tps,
    hot_tps: r.hot_tps,
    spread_p99_ms: r.spread_p99_ms,
    hot_p99_ms: r.hot_p99_ms,
    ledger_verified: r.ledger_verified,
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-big-'))
  const cluster = await PrivateCluster.create('big', {
    max_wal_size: '8GB',
    checkpoint_timeout: '30min',
  })
  try {
    process.stdout.write(
      `seeding ${rows_total} transactions over ${accounts_count} accounts` +
        ` (cluster on port ${cluster.port})\n`,
    )
    const seeded = await seedTemplate(cluster, path.join(work, 'seed'))
    process.stdout.write(
      `${JSON.stringify({ copy_s: seeded.copy_s, vacuum_s: seeded.vacuum_s, size: seeded.size })}` +
        '\n',
    )
    const deepest = seeded.accounts.reduce((a, b) => (b.seq > a.seq ? b : a))
    const measured = await measureOnTemplate(
      cluster,
      path.join(work, 'seed'),
      seeded.partner.credential.token,
      seeded.partner.partner_id,
      deepest,
    )
    process.stdout.write(`${JSON.stringify(measured)}\n`)
    if (process.env.BENCH_BIG_KEEP === '1')
      process.stdout.write(`kept: ${cluster.urlOf(template)}\n`)
    for (let round = 1; round <= rounds; round++) {
      const order: Array<[string, string | undefined]> = [
        ['big', template],
        ['empty', undefined],
      ]
      if (round % 2 === 0) order.reverse()
      for (const [label, from] of order) {
        const r = await benchRun(cluster, from, path.join(work, `${label}-${round}.json`))
        process.stdout.write(`${JSON.stringify({ round, ledger: label, ...r })}\n`)
      }
    }
  } finally {
    await cluster.destroy()
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
