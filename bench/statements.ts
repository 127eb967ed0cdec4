// `npm run bench:statements`: the time and memory of one account's statement for a month of
// BENCH_STATEMENT_ROWS posted transactions (100,000), never part of `npm test`. It makes a
// fresh PostgreSQL database with the bank's migrations, writes the month straight into the
// ledger's tables as the ledger writes them (one transactions row and one posting each,
// deposits and payouts alternating, each row's running balance and posted order, every
// 50th a fee), then times, each alone after a garbage collection:
//
// 1. data: StatementsService.buildStatement (the range's posted rows, opening and closing
//    balances, held at the end, the invariant asserted);
// 2. camt053: the statement as camt.053.001.08 (statement-camt.ts), its size;
// 3. pdf: the statement as a PDF (statement-pdf.ts), its size.
//
// Beside each: its wall time, and this process's peak RSS and V8 heap in use during it
// (process.memoryUsage() every 25 ms). Prints the figures as JSON lines.
//
//   npm run bench:statements
//   BENCH_STATEMENT_ROWS=10000 npm run bench:statements      a short run
//
// Settings (environment): BENCH_DATABASE_URL (admin connection; a database is created and
// dropped), BENCH_STATEMENT_ROWS (100000).
import { randomBytes, randomUUID } from 'node:crypto'
import v8 from 'node:v8'
import vm from 'node:vm'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { SouthAfricanCalendar, fromSast } from '../src/calendar/sa-calendar.ts'
import { systemClock } from '../src/clock.ts'
import { openDatabase } from '../src/db/database.ts'
import { JobRunner } from '../src/jobs/job-runner.ts'
import { createLogger } from '../src/logger.ts'
import { migrations } from '../src/modules.ts'
import type { Database } from '../src/schema.ts'
import { statementCamt } from '../src/statements/statement-camt.ts'
import { renderStatementPdf } from '../src/statements/statement-pdf.ts'
import { StatementsService } from '../src/statements/statements-service.ts'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const rows = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000)
const month = { from: '2026-10-01', to: '2026-10-31' }
const accountNumber = '1000000017'

const gc = (() => {
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc') as () => void
})()

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** Runs `work` and reports its wall time and the process's peak memory during it. */
async function measured<T>(name: string, work: () => Promise<T>): Promise<T> {
  gc()
  const start = process.memoryUsage()
  let rss = start.rss
  let heap = start.heapUsed
  const timer = setInterval(() => {
    const now = process.memoryUsage()
    rss = Math.max(rss, now.rss)
    heap = Math.max(heap, now.heapUsed)
  }, 25)
  const began = performance.now()
  try {
    const value = await work()
    const ms = Math.round(performance.now() - began)
    const now = process.memoryUsage()
    console.log(JSON.stringify({ step: name, ms, rss_start_mb: mb(start.rss),
      rss_peak_mb: mb(Math.max(rss, now.rss)), heap_start_mb: mb(start.heapUsed),
      heap_peak_mb: mb(Math.max(heap, now.heapUsed)) }))
    return value
  } finally {
    clearInterval(timer)
  }
}

/**
 * The month's rows of one account, as the ledger writes them, in one statement each (the
 * statement reads no account row: the account's number and holder come from the stand-in).
 */
async function seed(db: Kysely<Database>, accountId: string): Promise<void> {
  const partnerId = randomUUID()
  const start = fromSast(month.from)
  // Spread over the month's first 30 days; even rows are deposits, odd ones payouts; every
  // 50th row is a fee. The running balance is the sum of the rows before and including it.
  await sql`
    insert into transactions (id, partner_id, account_id, seq, created_at, tx_type,
      tx_payment_type, status, amount, fee, credit, debit, hold_amount, running_balance,
      posted_order, ref, added_by, status_at, prev_sha, tx_sha)
    select gen_random_uuid(), ${partnerId}, ${accountId}, i, at, kind,
      case when kind = 'deposit' then 'EFT' else 'INTERNAL' end, 'Successful', amount, 0,
      credit, debit, 0, sum(credit - debit) over (order by i), i, 'bench ' || i, 'bench', at,
      '', ''
    from (select i, ${start}::timestamptz + (i * interval '25920 milliseconds') as at,
        case when i % 50 = 0 then 'fee' when i % 2 = 0 then 'deposit' else 'transfer' end
          as kind,
        case when i % 2 = 0 and i % 50 <> 0 then 20000 + i % 1000 else 0 end as credit,
        case when i % 50 = 0 then 250 when i % 2 = 1 then 10000 + i % 700 else 0 end as debit,
        10000 + i % 1000 as amount
      from generate_series(1, ${rows}) as i) as g
  `.execute(db)
  await sql`
    insert into postings (journal_id, tx_id, account_id, amount, created_at)
    select gen_random_uuid(), id, account_id, credit - debit, created_at from transactions
    where account_id = ${accountId}
  `.execute(db)
  await sql`analyze`.execute(db)
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try { await client.query(statement) } finally { await client.end() }
}

async function main(): Promise<void> {
  const dbName = `bank_bench_statements_${randomBytes(4).toString('hex')}`
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  await admin(`create database ${dbName}`)
  const handle = await openDatabase<Database>({ migrations, databaseUrl: url.toString(),
    pgliteDir: 'memory://', poolMax: 4 })
  try {
    const accountId = randomUUID()
    await measured('seed', () => seed(handle.db, accountId))
    const log = createLogger('silent')
    const jobs = new JobRunner(handle.db, systemClock, log, { poll_ms: 1000, concurrency_max: 1 })
    const service = new StatementsService(handle.db, systemClock, jobs, {
      accountOf: async () => ({ id: accountId }),
      detailsOf: async () => ({ account_number: accountNumber, holder_name: 'Bench Holder' }),
    }, new SouthAfricanCalendar(), { branchCode: '632005', renderPdf: renderStatementPdf })
    const statement = await measured('data', () => service.buildStatement(accountId, month.from,
      month.to))
    console.log(JSON.stringify({ lines: statement.lines.length,
      closing_balance: statement.closing_balance.toString() }))
    const camt = await measured('camt053', () => statementCamt(statement))
    console.log(JSON.stringify({ camt053_bytes: camt.length }))
    const pdf = await measured('pdf', () => renderStatementPdf(statement))
    console.log(JSON.stringify({ pdf_bytes: pdf.length }))
  } finally {
    await handle.close()
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

await main()
