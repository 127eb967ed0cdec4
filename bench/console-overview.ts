// How long the operator console's overview takes on a bank with a million transactions:
//
//   node --import tsx bench/console-overview.ts   (BENCH_OVERVIEW_TRANSACTIONS, default 1000000)
//
// Needs PostgreSQL (BENCH_DATABASE_URL, default the test server) and nats-server. It starts a
// private NATS server and the bank (src/main.ts, sandbox mode, the console on a free port) on a
// scratch database, onboards a partner through the operator interface, then fills the ledger
// with SQL (generate_series): N transactions over 1,000 accounts spread evenly over the last 30
// days, with UUIDv7 ids of their times as the ledger makes them, one in ten a fee row, one in a
// thousand a pending EFT, and two postings each (the account's and an internal one, fee income
// for the fee rows). The rows carry placeholder hashes: `ledger verify` would flag them, the
// overview does not read them. Then it signs in to the console as an operator and times GET /
// (the page: ops.summary, the KYC queue and the latest audit rows) and ops.summary alone, and
// prints the figures. The scratch database is dropped at the end.

import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { OperatorClient } from '../src/client/index.ts'
import { findNatsServerBinary, freePort, startNatsServer } from '../dev/nats-server.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const transactions = Number(process.env.BENCH_OVERVIEW_TRANSACTIONS ?? 1_000_000)
const accounts = 1000
const days = 30
const loads = 7

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text)
  } finally {
    await client.end()
  }
}

/** Waits until the bank answers an operator's request (its start: migrations, NATS). */
async function ready(operator: OperatorClient): Promise<void> {
  let last: unknown
  for (let attempt = 0; attempt < 120; attempt++) {
    try {
      await operator.partners.list()
      return
    } catch (error) {
      last = error
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
  throw new Error(`the bank did not answer within 30 s: ${String(last)}`)
}

/** UUIDv7 text in SQL from a millisecond expression and a row number (the random part). */
const uuidv7 = (ms: string, n: string) =>
  `(lpad(to_hex((${ms})::bigint), 12, '0') || '7' || substr(md5(${n}::text), 1, 3) || '8' ||
    substr(md5(${n}::text), 4, 15))::uuid`

async function fill(dbUrl: string, partnerId: string): Promise<number> {
  const started = performance.now()
  const spanMs = days * 86_400_000
  // Row n's time: evenly over the last 30 days, the newest a second ago.
  const now = 'extract(epoch from now()) * 1000 - 1000'
  const ms = `(${now} - ${spanMs} + n * ${spanMs}::float8 / ${transactions})`
  await sql(
    dbUrl,
    `insert into transactions (id, partner_id, account_id, seq, created_at, tx_type,
       tx_payment_type, status, amount, fee, credit, debit, hold_amount, running_balance,
       ref, added_by, prev_sha, tx_sha)
     select ${uuidv7(ms, 'n')}, '${partnerId}'::uuid,
       ('00000000-0000-4000-8000-' || lpad(to_hex(n % ${accounts}), 12, '0'))::uuid,
       n / ${accounts} + 1, to_timestamp((${ms}) / 1000.0),
       case when n % 10 = 0 then 'fee' else 'transfer' end, 'EFT',
       case when n % 1000 = 7 then 'Pending' else 'Successful' end,
       1500, case when n % 10 = 0 then 0 else 250 end, 0, 1500, 0, 0,
       'bench', 'bench', md5((n - 1)::text), md5(n::text)
     from generate_series(1, ${transactions}) as n`,
  )
  await sql(
    dbUrl,
    `insert into postings (journal_id, tx_id, account_id, internal_account, amount, created_at)
     select t.id, t.id, t.account_id, null, -t.amount, t.created_at from transactions t
     union all
     select t.id, t.id, null,
       case when t.tx_type = 'fee' then 'fee_income' else 'settlement:EFT' end,
       t.amount, t.created_at from transactions t`,
  )
  await sql(dbUrl, 'vacuum analyze transactions')
  await sql(dbUrl, 'vacuum analyze postings')
  return performance.now() - started
}

/** Signs in through the console's form, as a browser would; answers the session cookie. */
async function signIn(base: string, token: string): Promise<string> {
  const form = await fetch(`${base}/sign-in`)
  const pre = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!
  const reply = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `bank_console_pre=${pre}`,
    },
    body: new URLSearchParams({ csrf: pre, token }).toString(),
  })
  const cookie = reply.headers.getSetCookie().find((c) => c.startsWith('bank_console='))
  if (!cookie) throw new Error(`sign-in refused: ${reply.status}`)
  return cookie.split(';')[0]!
}

async function timed<T>(run: () => Promise<T>): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < loads; i++) {
    const started = performance.now()
    await run()
    ms.push(performance.now() - started)
  }
  return ms
}

function figures(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  const [min, max] = [sorted[0]!, sorted.at(-1)!]
  const f = (n: number) => n.toFixed(1)
  return `median ${f(median)} ms, min ${f(min)}, max ${f(max)} (${ms.length} loads)`
}

interface Running {
  service: ChildProcess
  operator: OperatorClient
  token: string
}

/** Starts the bank on the scratch database, its console on `consolePort`; waits for it. */
async function startBank(work: string, natsUrl: string, dbUrl: string, consolePort: number) {
  const service = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      DATABASE_URL: dbUrl,
      BANK_DATA_DIR: path.join(work, 'data'),
      BANK_SANDBOX: 'true',
      BANK_CLEARING_SCHEDULE: 'off',
      BANK_CONSOLE_PORT: String(consolePort),
      // Node's fetch resolves no `*.localhost` name (browsers do): the benchmark, no browser,
      // names the console by its address, which it alone reaches.
      BANK_CONSOLE_HOST_NAME: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const tokenFile = path.join(work, 'data', 'operator-token')
  for (let i = 0; i < 120 && !fs.existsSync(tokenFile); i++) {
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const token = fs.readFileSync(tokenFile, 'utf8').trim()
  const operator = new OperatorClient({ servers: natsUrl, token, timeoutMs: 60_000 })
  await ready(operator)
  return { service, operator, token }
}

async function measure(bank: Running, dbUrl: string, consolePort: number): Promise<void> {
  const partner = await bank.operator.partners.create({
    name: 'Overview Bench (Pty) Ltd',
    email: 'overview@example.com',
    registration_number: '202099999907',
    trading_name: 'Overview Bench',
  })
  const fillMs = await fill(dbUrl, partner.partner_id)
  const count = await sql(dbUrl, 'select count(*) as n from transactions')
  const base = `http://127.0.0.1:${consolePort}`
  const cookie = await signIn(base, bank.token)
  const page = await timed(async () => {
    const reply = await fetch(`${base}/`, { headers: { cookie } })
    const body = await reply.text()
    if (reply.status !== 200 || !body.includes('Payments per minute')) {
      throw new Error(`the overview answered ${reply.status}`)
    }
  })
  const summary = await timed(() => bank.operator.summary.get())
  const s = await bank.operator.summary.get()
  const filled = (fillMs / 1000).toFixed(1)
  console.log(`transactions: ${String(count.rows[0].n)} (filled in ${filled} s)`)
  console.log(`overview page GET /: ${figures(page)}`)
  console.log(`ops.summary alone:   ${figures(summary)}`)
  console.log(
    `summary: ${s.payments.last_hour} payments in the last hour, ` +
      `${s.payments.pending_eft_count} pending EFTs, ` +
      `fee income today ${s.payments.fee_income_today} cents`,
  )
}

async function main(): Promise<void> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error('the benchmark needs nats-server on the PATH')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-overview-'))
  const nats = await startNatsServer({ binary, storeDir: path.join(work, 'nats') })
  const dbName = `bank_overview_${randomBytes(4).toString('hex')}`
  await sql(adminUrl, `create database ${dbName}`)
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  const consolePort = await freePort()
  let bank: Running | undefined
  try {
    bank = await startBank(work, nats.url, dbUrl.toString(), consolePort)
    await measure(bank, dbUrl.toString(), consolePort)
  } finally {
    await bank?.operator.close()
    bank?.service.kill('SIGTERM')
    if (bank) await new Promise((resolve) => bank!.service.once('exit', resolve))
    await nats.stop()
    await sql(adminUrl, `drop database if exists ${dbName} with (force)`)
    fs.rmSync(work, { recursive: true, force: true })
  }
}

await main()
