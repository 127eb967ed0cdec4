// `npm run bench:rails`: the ISO 20022 rails at a clearing cycle's size, never part of
// `npm test`. It starts a private nats-server and the bank in this process (startBank) on a
// fresh PostgreSQL database, a sandbox whose clearing-house simulator is off
// (BANK_RAIL_SIMULATOR=false: the benchmark plays the clearing house) and whose pacs.008 may
// carry a whole cycle (BANK_CLEARING_CHUNK_MAX=100000); funds BENCH_ACCOUNTS accounts and
// takes BENCH_RAIL_PAYMENTS EFT transfers through the SDK over NATS, as bench/run.ts does,
// which stay Pending (not timed). Then:
//
// 1. clearing: one clearing run (services.clearing.runNow()) writes them into outbound/ as
//    one pacs.008: the run's wall time, the time from the message's record to its file
//    written (rail_messages' created_at → written_at), the file's size;
// 2. status: the clearing house's answer to that file (ClearingHouse.answerTransfers, by the
//    magic recipients: one payment in 10,000 to 4000000010 → Invalid, one to 4000000002 →
//    Failed) written into inbound/ with RailFolder.write (atomic; outside the bank's timing),
//    then services.isoRail.applyInbound() timed: the counts it reports, and every payment
//    settled; then `ledger verify` (the service's, timed), which must be clean;
// 3. incoming credits beside transfers: EFT transfers through the SDK (BENCH_IN_FLIGHT in
//    flight, spread over the accounts as bench/run.ts's spread phase: BENCH_WARMUP_MS, then
//    BENCH_PHASE_MS measured) → transfers/s; other banks' pacs.008 files of
//    BENCH_INCOMING_PER_FILE credits each to the same accounts, one file moved into inbound/
//    and applied with applyInbound() after another for BENCH_PHASE_MS → credits/s; first
//    each alone, then both at once; `ledger verify` after. ClearingHouse.incoming makes one
//    credit per message: a file is made of its messages' CdtTrfTxInf under one group header
//    (NbOfTxs, CtrlSum), as the bank's reader (pacs008-read.ts) takes a cycle's file. The
//    files (BENCH_INCOMING_FILES) are written into a folder beside inbound/ beforehand.
//
// Beside each step: its wall time, and this process's peak RSS and V8 heap in use during it
// (process.memoryUsage() every 50 ms), with their values at its start, after a garbage
// collection. The process holds the bank, the load generator and the clearing house's side
// (the last two idle during steps 1 and 2).
//
// Prints the figures and writes bench/rails-results.json (or BENCH_RESULTS_FILE).
//
//   npm run bench:rails
//   BENCH_RAIL_PAYMENTS=5000 npm run bench:rails     a short run
//
// Settings (environment): BENCH_DATABASE_URL (admin connection; a database is created and
// dropped), BENCH_RAIL_PAYMENTS (100000), BENCH_ACCOUNTS (1000), BENCH_PHASE_MS (10000),
// BENCH_WARMUP_MS (2000), BENCH_IN_FLIGHT (128), BENCH_INCOMING_PER_FILE (1000),
// BENCH_INCOMING_FILES (60), BANK_DB_POOL_MAX (10), BENCH_RESULTS_FILE.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import pg from 'pg'
import { startBank, type Bank } from '../src/app.ts'
import { BankClient, OperatorClient } from '../src/client/index.ts'
import { systemClock } from '../src/clock.ts'
import { loadConfig, type Config } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { ClearingHouse } from '../src/rails/clearing-house/clearing-house.ts'
import { magicRecipients } from '../src/rails/clearing-house/magic-recipients.ts'
import { clearingHouseId } from '../src/rails/clearing-house/message-ids.ts'
import { centsToIsoAmount } from '../src/rails/iso20022/amount.ts'
import type { InboundSummary } from '../src/rails/iso-rail.ts'
import { findNatsServerBinary, startNatsServer } from '../dev/nats-server.ts'
import { benchPayment } from './payment.ts'
import { timedRun } from './timed-run.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const payments = Number(process.env.BENCH_RAIL_PAYMENTS ?? 100_000)
const accounts_count = Number(process.env.BENCH_ACCOUNTS ?? 1000)
const phase_ms = Number(process.env.BENCH_PHASE_MS ?? 10_000)
const warmup_ms = Number(process.env.BENCH_WARMUP_MS ?? 2_000)
const in_flight = Number(process.env.BENCH_IN_FLIGHT ?? 128)
const per_file = Number(process.env.BENCH_INCOMING_PER_FILE ?? 1000)
const incoming_files = Number(process.env.BENCH_INCOMING_FILES ?? 60)
const chunk_max = 100_000
/** Each incoming credit: R5.00. */
const incoming_cents = 500n
/** One payment in this many goes to each magic recipient (Invalid, Failed). */
const magic_every = 10_000
const bench_limits = { requests_per_second: 1_000_000, burst: 10_000_000 }
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10
const round = (value: number) => Math.round(value * 1000) / 1000

/** A full garbage collection (V8's gc(), without --expose-gc on the command line). */
const collect = (() => {
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc') as () => void
})()

interface StepFigures {
  ms: number
  rss_start_mb: number
  rss_peak_mb: number
  heap_start_mb: number
  heap_peak_mb: number
}

/** Runs a step, timed, sampling this process's memory every 50 ms. */
async function measured<T>(step: () => Promise<T>): Promise<{ value: T; figures: StepFigures }> {
  collect()
  const start = process.memoryUsage()
  let rss = start.rss
  let heap = start.heapUsed
  const sample = () => {
    const now = process.memoryUsage()
    rss = Math.max(rss, now.rss)
    heap = Math.max(heap, now.heapUsed)
  }
  const timer = setInterval(sample, 50)
  const t0 = performance.now()
  try {
    const value = await step()
    const ms = Math.round(performance.now() - t0)
    sample()
    return { value, figures: { ms, rss_start_mb: mb(start.rss), rss_peak_mb: mb(rss),
      heap_start_mb: mb(start.heapUsed), heap_peak_mb: mb(heap) } }
  } finally {
    clearInterval(timer)
  }
}

/** A step's figures as flat result keys `<step>_…`. */
function flat(step: string, figures: StepFigures): Record<string, number> {
  return Object.fromEntries(Object.entries(figures).map(([k, v]) => [`${step}_${k}`, v]))
}

function memoryText(f: StepFigures): string {
  return `peak RSS ${f.rss_peak_mb} MB (${f.rss_start_mb} at the start), peak heap ` +
    `${f.heap_peak_mb} MB (${f.heap_start_mb})`
}

interface Account {
  id: string
  number: string
}

interface BenchRun {
  bank: Bank
  config: Config
  db: pg.Client
  client: BankClient
  accounts: Account[]
  house: ClearingHouse
  results: Record<string, unknown>
}

async function main(): Promise<void> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error('the benchmark needs nats-server on the PATH')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-rails-'))
  const nats = await startNatsServer({ binary, storeDir: path.join(work, 'nats') })
  const dbName = `bank_bench_rails_${randomBytes(4).toString('hex')}`
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  let started: { bank: Bank; config: Config } | undefined
  let nc: NatsConnection | undefined
  const db = new pg.Client({ connectionString: dbUrl.toString() })
  try {
    await admin(`create database ${dbName}`)
    await db.connect()
    started = await startInProcess(dbUrl.toString(), nats.url, work)
    nc = await connect({ servers: nats.url, noAsyncTraces: true })
    const { rail } = started.config
    const house = new ClearingHouse({ settlement_account_id: rail.settlementAccount,
      bank_branch_code: rail.branchCode })
    const run = { ...started, db, house, ...(await setUp(nc, started.bank)), results: heading() }
    await pendingEfts(run)
    const outbound = await clearingStep(run)
    await statusStep(run, outbound)
    await incomingStep(run)
    writeResults(run.results)
  } finally {
    await nc?.close().catch(() => {})
    await started?.bank.stop().catch((error: unknown) => warn('stopping the bank', error))
    await db.end().catch(() => {})
    await admin(`drop database if exists ${dbName} with (force)`)
      .catch((error: unknown) => warn(`dropping database ${dbName}`, error))
    // nats-server's handle is unref'd: keep Node alive until it has exited (see bench/run.ts).
    const keepAlive = setInterval(() => {}, 1000)
    await nats.stop().finally(() => clearInterval(keepAlive))
    fs.rmSync(work, { recursive: true, force: true })
  }
}

function warn(what: string, error: unknown): void {
  process.stderr.write(`${what} failed: ${error instanceof Error ? error.message : error}\n`)
}

/** The bank in this process: a sandbox, its simulator off, a cycle in one file. */
async function startInProcess(dbUrl: string, natsUrl: string, work: string) {
  const config = loadConfig({
    ...process.env,
    NATS_URL: natsUrl,
    DATABASE_URL: dbUrl,
    BANK_DATA_DIR: path.join(work, 'data'),
    LOG_LEVEL: 'warn',
    BANK_SANDBOX: 'true',
    BANK_RAIL_SIMULATOR: 'false',
    BANK_CLEARING_CHUNK_MAX: String(chunk_max),
    BANK_CLEARING_SCHEDULE: 'off',
    BANK_DB_POOL_MAX: process.env.BANK_DB_POOL_MAX ?? '10',
    BANK_RATE_PER_SECOND: String(bench_limits.requests_per_second),
    BANK_RATE_BURST: String(bench_limits.burst),
  })
  const bank = await startBank({ config, clock: systemClock, log: createLogger(config.logLevel),
    natsUrl })
  return { bank, config }
}

/** A partner with its budget raised, and its accounts, each funded with R1,000,000. */
async function setUp(nc: NatsConnection, bank: Bank) {
  const token = bank.bootstrapToken
  if (!token) throw new Error('a fresh bank should have made an operator credential')
  const operator = new OperatorClient({ connection: nc, token, timeoutMs: 120_000 })
  const partner = await operator.partners.create({
    name: 'Rails Bench (Pty) Ltd',
    email: 'rails-bench@example.com',
    registration_number: '202099999908',
    trading_name: 'Rails Bench',
  })
  await operator.entities.review({ entity_id: partner.root_entity_id, decision: 'approve' })
  await operator.partners.limits({ partner_id: partner.partner_id, ...bench_limits })
  const client = new BankClient({ connection: nc, token: partner.credential.token,
    partnerId: partner.partner_id, timeoutMs: 60_000 })
  const accounts: Account[] = []
  for (let i = 0; i < accounts_count; i += 50) {
    const created = await Promise.all(Array.from({ length: Math.min(50, accounts_count - i) },
      () => client.accounts.create({ entity_id: partner.root_entity_id })))
    accounts.push(...created.map((a) => ({ id: a.account_id, number: a.account_number })))
  }
  for (let i = 0; i < accounts.length; i += 50) {
    await Promise.all(accounts.slice(i, i + 50).map((a) => operator.accounts.deposit(
      { account_id: a.id, amount: 100_000_000 })))
  }
  return { client, accounts }
}

/** What the results say of the run itself. */
function heading(): Record<string, unknown> {
  return {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `node ${process.version}`,
    storage: 'postgres',
    bank: 'in-process (startBank), sandbox, BANK_RAIL_SIMULATOR=false, ' +
      `BANK_CLEARING_CHUNK_MAX=${chunk_max}`,
    payments,
    accounts: accounts_count,
    in_flight,
    phase_ms,
    incoming_per_file: per_file,
  }
}

/** A pending EFT of 100 cents from the account; one in `magic_every` to each magic recipient. */
function paymentOf(accountId: string, i: number) {
  const payment = benchPayment(accountId)
  if (i % magic_every === 1) return { ...payment, account_number: magicRecipients
    .invalid_account_number }
  if (i % magic_every === 2) return { ...payment, account_number: magicRecipients
    .failed_account_number }
  return payment
}

/** The payments to clear, `in_flight` at a time through the SDK (not timed: the set-up). */
async function pendingEfts(run: BenchRun): Promise<void> {
  let next = 0
  const t0 = performance.now()
  const worker = async () => {
    while (next < payments) {
      const i = next++
      await run.client.accounts.transfer(paymentOf(run.accounts[i % run.accounts.length]!.id, i))
    }
  }
  await Promise.all(Array.from({ length: in_flight }, worker))
  const s = (performance.now() - t0) / 1000
  const { rows } = await run.db.query<{ n: string }>(
    `select count(*)::text as n from transactions
     where tx_type = 'transfer' and tx_payment_type = 'EFT' and status = 'Pending'`)
  const pending = Number(rows[0]!.n)
  Object.assign(run.results, { pending_efts: pending, pending_efts_s: round(s) })
  say(`set-up: ${accounts_count} accounts funded; ${pending} pending EFT transfers taken ` +
    `through the SDK in ${s.toFixed(1)} s (${Math.round(payments / s)}/s; not timed)`)
  if (pending !== payments) throw new Error(`${payments} EFTs were sent, ${pending} are Pending`)
}

function say(line: string): void {
  process.stdout.write(`${line}\n`)
}

/** Step 1: one clearing run writes the pending EFTs as one pacs.008. Resolves with its name. */
async function clearingStep(run: BenchRun): Promise<string> {
  const { value: report, figures } = await measured(() => run.bank.services.clearing.runNow())
  const folder = run.bank.services.isoRail.folder
  const files = (await folder.list(folder.outbound)).filter((n) => n.startsWith('pacs.008.'))
  const { rows } = await run.db.query<{ file_name: string; transaction_count: number
      recorded_ms: number }>(
    `select file_name, transaction_count,
       extract(epoch from written_at - created_at) * 1000 as recorded_ms
     from rail_messages where direction = 'out' order by created_at`)
  const bytes = files.map((n) => fs.statSync(path.join(folder.outbound, n)).size)
  const written = rows.map((r) => Math.round(Number(r.recorded_ms)))
  Object.assign(run.results, flat('clearing', figures), {
    clearing_files: files.length,
    clearing_file_payments: rows.map((r) => r.transaction_count),
    clearing_file_bytes: bytes,
    clearing_record_to_written_ms: written,
    clearing_report: report,
  })
  say(`\n1. clearing run (services.clearing.runNow()): ${(figures.ms / 1000).toFixed(2)} s; ` +
    `${files.length} pacs.008 file${files.length === 1 ? '' : 's'} of ` +
    `${rows.map((r) => r.transaction_count).join(', ')} payments, ` +
    `${bytes.map((b) => `${b} bytes (${mb(b)} MB)`).join(', ')}; record → file written ` +
    `${written.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ')}\n   ${memoryText(figures)}`)
  if (files.length !== 1) throw new Error(`the run wrote ${files.length} pacs.008 files, not 1`)
  return files[0]!
}

/** How many of the payments went to each magic recipient (paymentOf). */
function magicCounts() {
  let invalid = 0
  let failed = 0
  for (let i = 0; i < payments; i++) {
    if (i % magic_every === 1) invalid++
    else if (i % magic_every === 2) failed++
  }
  return { invalid, failed, settled: payments - invalid - failed }
}

/**
 * Step 2: the clearing house answers the file (outside the bank's timing), its pacs.002 goes
 * into inbound/, and the bank applies it (timed); then `ledger verify`.
 */
async function statusStep(run: BenchRun, outbound: string): Promise<void> {
  const folder = run.bank.services.isoRail.folder
  const t0 = performance.now()
  const answer = await run.house.answerTransfers({ file: path.join(folder.outbound, outbound) },
    new Date())
  const name = `pacs.002.${answer.status_report_id}.xml`
  await folder.write(folder.inbound, name, answer.statusReport())
  const answerMs = Math.round(performance.now() - t0)
  const bytes = fs.statSync(path.join(folder.inbound, name)).size
  const { value: summary, figures } = await measured(() =>
    run.bank.services.isoRail.applyInbound())
  const { rows } = await run.db.query<{ n: string }>(
    `select count(*)::text as n from transactions
     where tx_type = 'transfer' and tx_payment_type = 'EFT' and status = 'Pending'`)
  const pending = Number(rows[0]!.n)
  Object.assign(run.results, { status_answer_ms: answerMs, status_file_bytes: bytes,
    ...flat('status_apply', figures), status_summary: summary, status_pending_after: pending })
  say(`\n2. status file: pacs.002 of ${answer.original.transaction_count} statuses, ${bytes} ` +
    `bytes (${mb(bytes)} MB), made and written into inbound/ in ` +
    `${(answerMs / 1000).toFixed(2)} s (the clearing house's side, not the bank's)\n` +
    `   applied (services.isoRail.applyInbound()): ${(figures.ms / 1000).toFixed(2)} s; ` +
    `${counted(summary)}; EFTs still Pending after: ${pending}\n   ${memoryText(figures)}`)
  checkSettled(summary, pending)
  await verified(run, 'status')
}

function counted(s: InboundSummary): string {
  return `settled ${s.settled}, failed ${s.failed}, invalid ${s.invalid}, returned ` +
    `${s.returned}, credited ${s.credited}, files applied ${s.files_applied}, refused ` +
    `${s.files_refused}`
}

/** Every payment answered as its recipient says, and none left Pending. */
function checkSettled(summary: InboundSummary, pending: number): void {
  const expected = magicCounts()
  const wrong = (['settled', 'failed', 'invalid'] as const).filter(
    (k) => summary[k] !== expected[k])
  if (wrong.length > 0 || pending !== 0 || summary.files_applied !== 1) {
    throw new Error(`the status file was not applied whole: expected ` +
      `${JSON.stringify(expected)}, got ${counted(summary)}, ${pending} still Pending`)
  }
}

/** `ledger verify` (the service's own, in this process), timed; throws unless it is clean. */
async function verified(run: BenchRun, step: string): Promise<void> {
  const { value: report, figures } = await measured(() => run.bank.services.ledger.verify())
  Object.assign(run.results, { [`${step}_ledger_verified`]: report.ok,
    [`${step}_verify_ms`]: figures.ms })
  say(`   ledger verify: ${report.ok ? 'clean' : 'NOT CLEAN'} in ` +
    `${(figures.ms / 1000).toFixed(1)} s (${report.transactions_checked} transactions, ` +
    `${report.accounts_checked} accounts, ${report.problems.length} problems)`)
  if (!report.ok) {
    throw new Error(`ledger verify found problems: ${JSON.stringify(report.problems.slice(0, 5))}`)
  }
}

/** Incoming files written beforehand, moved into inbound/ one at a time. */
interface Staged {
  dir: string
  names: string[]
  next: number
}

/**
 * Another bank's pacs.008 of `per_file` credits to the accounts, in turn: the messages
 * ClearingHouse.incoming makes (one credit each), their CdtTrfTxInf under the first one's
 * group header with the count and the control sum of all.
 */
async function incomingFile(run: BenchRun, file: number, at: Date) {
  const blocks: string[] = []
  let head = ''
  let tail = ''
  for (let i = 0; i < per_file; i++) {
    const sequence = file * per_file + i
    const made = await run.house.incoming({ cents: incoming_cents, sequence,
      account_number: run.accounts[sequence % run.accounts.length]!.number,
      reference: `bench incoming ${sequence}` }, at)
    const text = made.message.text
    const start = text.lastIndexOf('\n', text.indexOf('<CdtTrfTxInf>')) + 1
    const end = text.indexOf('\n', text.indexOf('</CdtTrfTxInf>')) + 1
    if (i === 0) [head, tail] = [text.slice(0, start), text.slice(end)]
    blocks.push(text.slice(start, end))
  }
  const messageId = clearingHouseId('incoming', 'bench file', at.toISOString(), String(file))
  const control = centsToIsoAmount(incoming_cents * BigInt(per_file))
  const header = head.replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`)
    .replace(/<NbOfTxs>1<\/NbOfTxs>/, `<NbOfTxs>${per_file}</NbOfTxs>`)
    .replace(/<CtrlSum>[^<]*<\/CtrlSum>/, `<CtrlSum>${control}</CtrlSum>`)
  return { name: `pacs.008.${messageId}.xml`, text: header + blocks.join('') + tail }
}

/** The incoming files, written (as RailFolder.write does) into a folder beside inbound/. */
async function stageIncoming(run: BenchRun): Promise<Staged> {
  const folder = run.bank.services.isoRail.folder
  const dir = path.join(folder.root, 'bench-staged')
  fs.mkdirSync(dir, { recursive: true })
  const t0 = performance.now()
  const at = new Date()
  const names: string[] = []
  for (let file = 0; file < incoming_files; file++) {
    const made = await incomingFile(run, file, at)
    await folder.write(dir, made.name, [made.text])
    names.push(made.name)
  }
  const s = (performance.now() - t0) / 1000
  say(`\n3. incoming credits beside transfers: ${incoming_files} files of ${per_file} credits ` +
    `made beforehand in ${s.toFixed(1)} s`)
  return { dir, names, next: 0 }
}

/** Moves one staged file after another into inbound/ and applies it, until `until`. */
async function applyIncoming(run: BenchRun, staged: Staged, until: number) {
  const { folder } = run.bank.services.isoRail
  const total = { credited: 0, files: 0, refused: 0 }
  const t0 = performance.now()
  while (performance.now() < until && staged.next < staged.names.length) {
    await folder.move(staged.dir, staged.names[staged.next++]!, folder.inbound)
    const summary = await run.bank.services.isoRail.applyInbound()
    total.credited += summary.credited
    total.files += summary.files_applied
    total.refused += summary.files_refused
  }
  const s = (performance.now() - t0) / 1000
  if (total.refused > 0) throw new Error(`${total.refused} incoming files were refused`)
  return { ...total, s: round(s), credits_per_s: Math.round(total.credited / s),
    ran_out: staged.next >= staged.names.length }
}

interface PhaseHooks {
  beforeMeasured?: () => void
}

/** `in_flight` requests outstanding: a warm-up, then the measured phase (as bench/run.ts). */
async function drive(request: () => Promise<unknown>, hooks: PhaseHooks = {}) {
  const run = async (ms: number, record: boolean) => {
    const r = await timedRun(request, ms, record, in_flight)
    return { tps: Math.round(r.latencies.length / r.elapsed), p50_ms: r.percentile(0.5),
      p99_ms: r.percentile(0.99), completed: r.latencies.length, errors: r.errors }
  }
  await run(warmup_ms, false)
  hooks.beforeMeasured?.()
  return run(phase_ms, true)
}

type Transfers = Awaited<ReturnType<typeof drive>>
type Credits = Awaited<ReturnType<typeof applyIncoming>>

/**
 * Step 3: transfers alone, incoming credits alone, then both at once (the credits during the
 * transfers' measured part); `ledger verify` after.
 */
async function incomingStep(run: BenchRun): Promise<void> {
  const staged = await stageIncoming(run)
  let next = 0
  const transfer = () => run.client.accounts.transfer(
    benchPayment(run.accounts[next++ % run.accounts.length]!.id))
  const transfers = await measured(() => drive(transfer))
  const credits = await measured(() => applyIncoming(run, staged, performance.now() + phase_ms))
  const both = await measured(async () => {
    let beside: Promise<Credits> | undefined
    const t = await drive(transfer, { beforeMeasured: () => {
      beside = applyIncoming(run, staged, performance.now() + phase_ms)
      // Awaited below; a failure meanwhile must not end the process as unhandled.
      beside.catch(() => {})
    } })
    return { transfers: t, credits: await beside! }
  })
  Object.assign(run.results,
    phaseResults('alone', transfers.value, credits.value),
    phaseResults('together', both.value.transfers, both.value.credits),
    flat('transfers_alone', transfers.figures), flat('credits_alone', credits.figures),
    flat('together', both.figures))
  printRates('alone, one after the other', transfers.value, credits.value)
  printRates('at once', both.value.transfers, both.value.credits)
  say(`   memory: transfers alone ${memoryText(transfers.figures)}\n` +
    `           credits alone ${memoryText(credits.figures)}\n` +
    `           at once ${memoryText(both.figures)}`)
  await verified(run, 'incoming')
}

function phaseResults(phase: string, t: Transfers, c: Credits): Record<string, unknown> {
  return {
    [`${phase}_transfers_per_s`]: t.tps, [`${phase}_transfer_p50_ms`]: t.p50_ms,
    [`${phase}_transfer_p99_ms`]: t.p99_ms, [`${phase}_transfer_errors`]: t.errors,
    [`${phase}_credits_per_s`]: c.credits_per_s, [`${phase}_credits`]: c.credited,
    [`${phase}_credit_files`]: c.files, [`${phase}_credits_s`]: c.s,
    [`${phase}_credit_files_ran_out`]: c.ran_out,
    [`${phase}_credits_to_transfers`]: t.tps > 0 ? round(c.credits_per_s / t.tps) : null,
  }
}

function printRates(label: string, t: Transfers, c: Credits): void {
  const ratio = t.tps > 0 ? (c.credits_per_s / t.tps).toFixed(2) : '-'
  say(`   ${label}: transfers ${t.tps}/s (p50 ${t.p50_ms} ms, p99 ${t.p99_ms} ms, ` +
    `${t.errors} errors) | incoming credits ${c.credits_per_s}/s (${c.credited} in ` +
    `${c.s} s, ${c.files} files${c.ran_out ? '; the staged files ran out' : ''}) | ` +
    `credits/transfers ${ratio}`)
}

function writeResults(results: Record<string, unknown>): void {
  const file = process.env.BENCH_RESULTS_FILE || path.join(root, 'bench', 'rails-results.json')
  results.max_rss_mb = mb(process.resourceUsage().maxRSS * 1024)
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  say(`\nprocess peak RSS over the whole run: ${results.max_rss_mb} MB; ` +
    `results written to ${file.startsWith(`${root}/`) ? path.relative(root, file) : file}`)
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
