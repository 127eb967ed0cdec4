// `npm run bench`: transfer throughput and latency over NATS against PostgreSQL, never part
// of `npm test`. It starts a private nats-server, the service as its own process (as in
// production) on a fresh PostgreSQL database, funds 1,000 accounts, and drives 128 requests
// in flight: (a) EFT transfers spread over the 1,000 accounts, (b) all from one hot
// account, and (c) a no-op request/reply echo served by a separate process, the ceiling
// the transport allows; then (d) times transaction-list pages on a 1,000,000-row account,
// (e) times bulk payments and webhook deliveries (bench/bulk-phases.ts), and (f) times a
// debit-order collection run of 100,000 due orders (bench/debit-phase.ts; before (d)).
// The card phases (bench/card-phases.ts; after (b), at the same 128 in flight) time card
// authorizations as the card network sends them (net.card.authorize, a card network
// credential: no operator audit row): card-hot on BENCH_HOT_CARDS cards (8) of the hot
// account, card-spread on a card on each of the 1,000 accounts; the cards are issued
// beforehand, not timed.
//
// Beside each rate it reports where the CPU went (bench/meter.ts): CPU microseconds per
// operation of the service, PostgreSQL (the bench database's backends, plus the WAL
// writer, checkpointer and background writer), nats-server and this client, over the
// measured part of each phase (after its warm-up); and the mean ledger batch size and
// commit time there, from the service's Prometheus metrics (BANK_METRICS_PORT, a free
// port). For echo, the service column is the echo responder's. For the bulk phases, CPU
// totals (ms) over the whole phase; for the debit run, per order.
//
// Prints a table and writes bench/results.json.
//
//   npm run bench -- --instances 2   two service processes in one queue group (same NATS,
//                                    same database, a data dir each); service CPU summed
//                                    in the table, per instance in the file (service1_,
//                                    service2_); writes bench/results-2-instances.json
//                                    instead, so results.json keeps one instance's figures.
//   npm run bench -- --profile       a CPU profile of the service(s) over the spread and hot
//                                    phases (from the end of the spread warm-up to the end
//                                    of the hot phase, or over the card phases when
//                                    BENCH_PHASES names neither; SIGUSR2, see
//                                    src/profiling.ts) in a temp directory whose path is
//                                    printed; open it in
//                                    Chrome DevTools. The profiler slows the service: that
//                                    run's figures are not comparable, and no results file
//                                    is written.
//
// Settings (environment): BENCH_PHASE_MS (10000), BENCH_WARMUP_MS (2000), BENCH_IN_FLIGHT
// (128), BENCH_ACCOUNTS (1000), BENCH_DATABASE_URL (admin connection; a database is created
// and dropped), BENCH_SERVICE_NODE_ARGS (node flags of the service; default
//--max-semi-space-size=64), BANK_DB_POOL_MAX (10), BENCH_PAGING_ROWS,
// BENCH_DEBIT_ORDERS, BENCH_DATABASE_TEMPLATE (a database to copy instead of starting empty),
// BENCH_RESULTS_FILE (where to write the results instead; for runs
// that are compared, not kept), BENCH_SCREENING_LIST (a seeded sanctions list of this many
// entries, bench/screening-list.ts, loaded before the phases: every payout's recipient is
// screened against it; 0, the default: no list), BENCH_RECIPIENT_NAMES (the transfers pay
// this many distinct recipient names in turn; 1, the default: all pay 'Bench Recipient',
// whose screening the bank remembers), and BENCH_PHASES: a comma-separated subset of
// echo,spread,hot,card-hot,card-spread,bulk,debit,paging to run (default all; for short
// runs while developing). Each rate's latencies: p50, p90 and p99.
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import pg from 'pg'
import { BankClient, OperatorClient, type CardNetworkClient } from '../src/client/index.ts'
import { findNatsServerBinary, freePort, startNatsServer } from '../dev/nats-server.ts'
import { bulkPhases } from './bulk-phases.ts'
import {
  authorizeOnCard, connectCardNetwork, decisionRoundTrip, declines, hot_cards, issueBenchCards,
} from './card-phases.ts'
import type { BenchCards } from './card-phases.ts'
import { debitPhase } from './debit-phase.ts'
import { Meter, type SpanCost } from './meter.ts'
import { benchPayment } from './payment.ts'
import { benchList, word } from './screening-list.ts'
import { timedRun } from './timed-run.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const in_flight = Number(process.env.BENCH_IN_FLIGHT ?? 128)
const phase_ms = Number(process.env.BENCH_PHASE_MS ?? 10_000)
const warmup_ms = Number(process.env.BENCH_WARMUP_MS ?? 2_000)
const accounts_count = Number(process.env.BENCH_ACCOUNTS ?? 1000)
const screening_list_entries = Number(process.env.BENCH_SCREENING_LIST ?? 0)
const recipient_names = Math.max(1, Number(process.env.BENCH_RECIPIENT_NAMES ?? 1))
/**
 * Request budgets of the bench's credentials: the most the bank allows, far above any rate it
 * reaches.
 */
const bench_limits = { requests_per_second: 1_000_000, burst: 10_000_000 }
/** The bank's keys, one set for every instance of the run (base64 of 32 bytes each). */
const sharedKeys = { secrets: randomBytes(32).toString('base64'), otp: randomBytes(32).toString(
  'base64') }
const allPhases = [
  'echo', 'spread', 'hot', 'card-hot', 'card-spread', 'bulk', 'debit', 'paging',
] as const
const phases = new Set((process.env.BENCH_PHASES ?? allPhases.join(',')).split(',').map(
  (p) => p.trim()))
for (const p of phases) if (!(allPhases as readonly string[]).includes(p)) throw new Error(
  `BENCH_PHASES: unknown phase ${p} (known: ${allPhases.join(', ')})`)

const { values: flags } = parseArgs({
  options: {
    instances: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
  },
  strict: true,
})
const instances = Number(flags.instances)
if (!Number.isInteger(instances) || instances < 1) throw new Error(
  `--instances: a whole number of at least 1, not ${flags.instances}`)
const profile = flags.profile

interface PhaseResult {
  ops_per_s: number
  p50_ms: number
  p90_ms: number
  p99_ms: number
  completed: number
  errors: number
}

/** Hooks around a phase's measured part (after its warm-up). */
interface PhaseHooks {
  beforeMeasured?: () => Promise<void>
  afterMeasured?: () => Promise<void>
}

async function main(): Promise<void> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error('the benchmark needs nats-server on the PATH')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-'))
  const profileDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-profile-'))
    : undefined
  const nats = await startNatsServer({ binary, storeDir: path.join(work, 'nats') })
  const dbName = `bank_bench_${randomBytes(4).toString('hex')}`
  // BENCH_DATABASE_TEMPLATE: a copy of a database prepared beforehand (bench/big-ledger.ts).
  const template = process.env.BENCH_DATABASE_TEMPLATE
  const copied = template ? ` template ${template} strategy file_copy` : ''
  await admin(`create database ${dbName}${copied}`)
  const dbUrl = new URL(adminUrl)
  dbUrl.pathname = `/${dbName}`
  const children: ChildProcess[] = []
  // On the admin database, so that the meter's own queries are not counted as the bench's.
  const monitor = new pg.Client({ connectionString: adminUrl })
  await monitor.connect()
  try {
    const echo = spawnEcho(nats.url)
    children.push(echo)
    // As the SDK opens its own connection (src/client/transport.ts): no Error objects made per
    // request.
    const nc = await connect({ servers: nats.url, noAsyncTraces: true })
    const started = { nc, natsUrl: nats.url, dbUrl: dbUrl.toString(), work, profileDir, children }
    const { services, metricsPorts } = await startServices(started)
    const meter = new Meter({
      servicePids: services.map((s) => s.pid!),
      natsPid: nats.process.pid!,
      echoPid: echo.pid!,
      monitor,
      dbName,
      metricsPorts,
    })
    const token = fs.readFileSync(path.join(work, 'data', 'operator-token'), 'utf8').trim()
    const operator = new OperatorClient({ connection: nc, token, timeoutMs: 60_000 })
    const bench: BenchRun = { ...(await setUp(nc, operator)), nc, operator, meter, token,
      dbUrl: dbUrl.toString(), profiler: profilerOf(services, profileDir) }
    if (screening_list_entries > 0) await loadScreeningList(operator)
    const results = await transferPhases(bench, template)
    await otherPhases(bench, results)
    report(results, profileDir, bench.profiler.files())
    await nc.close()
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null
      ? resolve(null) : c.once('exit', resolve)))))
    await monitor.end()
    await admin(`drop database if exists ${dbName} with (force)`)
    // nats-server's process handle is unref'd: with nothing else pending, awaiting its exit
    // would let Node end right there (the database above was never dropped that way).
    const keepAlive = setInterval(() => {}, 1000)
    await nats.stop().finally(() => clearInterval(keepAlive))
    fs.rmSync(work, { recursive: true, force: true })
  }
}

/**
 * The service instances, one at a time: the first creates the schema and the operator token;
 * the others join its queue group.
 */
async function startServices(o: { nc: NatsConnection; natsUrl: string; dbUrl: string
  work: string; profileDir: string | undefined; children: ChildProcess[] }) {
  const { nc, work, profileDir, children } = o
  // As `npm start`, the Dockerfile and the systemd unit run it (docs/performance.md: the young
  // generation).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '--max-semi-space-size=64').split(' ')
    .filter(Boolean)
  const services: ChildProcess[] = []
  const metricsPorts: number[] = []
  for (let i = 1; i <= instances; i++) {
    const metricsPort = await freePort()
    const service = spawn(process.execPath, [...nodeArgs, '--import', 'tsx',
        path.join(root, 'src/main.ts')], {
      cwd: root,
      env: serviceEnv(o, i, metricsPort),
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    children.push(service)
    services.push(service)
    metricsPorts.push(metricsPort)
    await waitForService(nc, i)
  }
  return { services, metricsPorts }
}

/** Instance `i`'s environment. */
function serviceEnv(o: { natsUrl: string; dbUrl: string; work: string
  profileDir: string | undefined }, i: number, metricsPort: number): NodeJS.ProcessEnv {
  const { work, profileDir } = o
  return {
    ...process.env,
    NATS_URL: o.natsUrl,
    DATABASE_URL: o.dbUrl,
    BANK_DATA_DIR: path.join(work, i === 1 ? 'data' : `data-${i}`),
    // Instances of one bank share its rail folder (the clearing house's files).
    BANK_RAIL_DIR: path.join(work, 'rail'),
    // Instances of one bank share its keys, as in production (docs/operations.md): without
    // them each data directory would make its own, and a PIN one instance issued would
    // not verify on the other.
    BANK_SECRETS_KEY: process.env.BANK_SECRETS_KEY ?? sharedKeys.secrets,
    BANK_OTP_KEY: process.env.BANK_OTP_KEY ?? sharedKeys.otp,
    LOG_LEVEL: 'warn',
    BANK_CLEARING_SCHEDULE: 'off',
    // Sandbox mode lets the bulk phases read OTPs and post webhooks to a loopback receiver.
    BANK_SANDBOX: 'true',
    BANK_DB_POOL_MAX: process.env.BANK_DB_POOL_MAX ?? '10',
    // Request budgets far above the bench's rates, for the operator's set-up and the debit
    // phase's partner; the transfer partner's own are set through ops.partner.limits.
    BANK_RATE_PER_SECOND: String(bench_limits.requests_per_second),
    BANK_RATE_BURST: String(bench_limits.burst),
    // And the card network's (its own budget, 5,000/s by default, would cap the card phases).
    BANK_CARD_NETWORK_RATE_PER_SECOND: String(bench_limits.requests_per_second),
    BANK_CARD_NETWORK_RATE_BURST: String(bench_limits.burst),
    BANK_METRICS_PORT: String(metricsPort),
    ...(profileDir ? { BANK_CPU_PROFILE_DIR: profileDir } : {}),
  }
}

/** What the phases share: the connection, the clients, the set-up's accounts, the meter. */
interface BenchRun extends Awaited<ReturnType<typeof setUp>> {
  nc: NatsConnection
  operator: OperatorClient
  meter: Meter
  token: string
  dbUrl: string
  profiler: ReturnType<typeof profilerOf>
}

/**
 * --profile: SIGUSR2 starts the profiler after the first transfer phase's warm-up, and
 * stops it after the hot phase (so it also covers the hot warm-up).
 */
function profilerOf(services: ChildProcess[], profileDir: string | undefined) {
  let profiling = false
  let profileFiles: string[] = []
  return {
    start: async () => {
      if (!profileDir || profiling) return
      profiling = true
      for (const s of services) s.kill('SIGUSR2')
    },
    stop: async () => {
      if (!profiling || profileFiles.length > 0) return
      for (const s of services) s.kill('SIGUSR2')
      profileFiles = await Promise.all(
        services.map((s) => waitForFile(path.join(profileDir!, `service-${s.pid}-1.cpuprofile`))))
    },
    files: () => profileFiles,
  }
}

/** Hooks that read the meter around a phase's measured part, after `first` (if any). */
function meteredBy(meter: Meter, first?: () => Promise<void>) {
  let mark: Awaited<ReturnType<Meter['begin']>> | undefined
  const out: { cost?: SpanCost } = {}
  const hooks: PhaseHooks = {
    beforeMeasured: async () => {
      await first?.()
      mark = await meter.begin()
    },
    afterMeasured: async () => {
      out.cost = await meter.end(mark!)
    },
  }
  return { out, hooks }
}

/** The results' heading, then the echo, spread and hot phases and their ratios. */
async function transferPhases(bench: BenchRun, template: string | undefined) {
  const { nc, client, accounts, hot, meter, profiler } = bench
  const results = resultsHeading(accounts.length)
  if (phases.has('echo')) {
    const m = meteredBy(meter)
    const echoResult = await drive(async () => {
      await nc.request('bench.echo', '{}', { timeout: 10_000 })
    }, m.hooks)
    Object.assign(results, phaseFigures('echo', echoResult, 'rps'),
      perOperation('echo', m.out.cost!, echoResult.completed, { echo: true }))
  }
  let next = 0
  const names = recipientNames()
  let paid = 0
  const transfer = (accountId: string) => client.accounts.transfer({
    ...benchPayment(accountId), name: names[paid++ % names.length]! })
  if (phases.has('spread')) {
    const m = meteredBy(meter, profiler.start)
    const spread = await drive(() => transfer(accounts[next++ % accounts.length]!), m.hooks)
    Object.assign(results, phaseFigures('spread', spread, 'tps'),
      perOperation('spread', m.out.cost!, spread.completed))
  }
  if (phases.has('hot')) {
    const m = meteredBy(meter, profiler.start)
    const hotResult = await drive(() => transfer(hot), m.hooks)
    Object.assign(results, phaseFigures('hot', hotResult, 'tps'),
      perOperation('hot', m.out.cost!, hotResult.completed))
  }
  await profiler.stop()
  const ratio = (a: unknown, b: unknown) => (typeof a === 'number' && typeof b === 'number'
    ? round(a / b) : undefined)
  Object.assign(results, {
    spread_to_echo: ratio(results.spread_tps, results.echo_rps),
    hot_to_echo: ratio(results.hot_tps, results.echo_rps),
    hot_to_spread: ratio(results.hot_tps, results.spread_tps),
  })
  // On a copy of a big ledger (BENCH_DATABASE_TEMPLATE), from its checkpoints: a full verify
  // of millions of rows outlasts the client's 60 s (bench/big-ledger.ts times it apart).
  const verifyOptions = template ? { incremental: true } : {}
  if (phases.has('spread') || phases.has('hot')) {
    results.ledger_verified = (await bench.operator.ledger.verify(verifyOptions)).ok
  }
  return results
}

/** BENCH_SCREENING_LIST: the seeded list, uploaded as `bank screening load` sends a file. */
async function loadScreeningList(operator: OperatorClient): Promise<void> {
  const { file } = benchList(screening_list_entries)
  const part_bytes = 192 * 1024
  const parts = Math.ceil(file.length / part_bytes)
  const upload_id = randomUUID()
  const sha256 = createHash('sha256').update(file).digest('hex')
  const started = performance.now()
  for (let part = 0; part < parts; part++) {
    await operator.screening.upload({ upload_id, part, parts, sha256,
      data: file.subarray(part * part_bytes, (part + 1) * part_bytes).toString('base64') })
  }
  console.log(`screening list: ${screening_list_entries} entries, ${file.length} bytes, ` +
    `loaded in ${Math.round(performance.now() - started)} ms`)
}

/** BENCH_RECIPIENT_NAMES: the recipients' names the transfers pay in turn. */
function recipientNames(): string[] {
  if (recipient_names === 1) return ['Bench Recipient']
  return Array.from({ length: recipient_names }, () => `${word()} ${word()}`)
}

/** What the results say of the run itself: when, on what, with which settings and phases. */
function resultsHeading(accounts: number): Record<string, unknown> {
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `node ${process.version}`,
    storage: 'postgres',
    instances,
    in_flight,
    phase_ms,
    accounts,
    payment: 'EFT transfer, 100 cents + fee (hold + Pending rows; one grouped DB transaction ' +
      'per batch)',
  }
  if (phases.size < allPhases.length) results.phases = [...phases].join(',')
  if (screening_list_entries > 0) results.screening_list_entries = screening_list_entries
  if (recipient_names > 1) results.recipient_names = recipient_names
  return results
}

/** A phase's rate and latencies (`rps` for the echo, `tps` else), and its errors but the echo's. */
function phaseFigures(phase: string, r: Awaited<ReturnType<typeof drive>>, rate: 'rps' | 'tps') {
  return {
    [`${phase}_${rate}`]: Math.round(r.ops_per_s),
    [`${phase}_p50_ms`]: r.p50_ms,
    [`${phase}_p90_ms`]: r.p90_ms,
    [`${phase}_p99_ms`]: r.p99_ms,
    ...(phase === 'echo' ? {} : { [`${phase}_errors`]: r.errors }),
  }
}

/** The card, bulk, debit and paging phases, each when it is asked for. */
async function otherPhases(bench: BenchRun, results: Record<string, unknown>) {
  const { nc, client, operator, accounts, hot, rootEntityId, meter, profiler, dbUrl } = bench
  if (phases.has('card-hot') || phases.has('card-spread')) {
    const cards = await issueBenchCards(client, rootEntityId, accounts, hot, dbUrl)
    const network = await connectCardNetwork(nc, operator)
    // --profile without the transfer phases profiles the card phases instead.
    Object.assign(results, await cardPhases({ network, operator }, cards,
      () => meteredBy(meter, profiler.start)))
    await profiler.stop()
    // What asking the partner adds (the issue's goal: at most 2 ms at the median).
    if (phases.has('card-spread')) {
      Object.assign(results, await decisionRoundTrip(client, nc, network, cards.spread[0]!))
    }
  }
  if (phases.has('bulk')) {
    const mark = await meter.begin()
    const bulk = await bulkPhases(client, operator, rootEntityId)
    const cost = await meter.end(mark)
    Object.assign(results, bulk,
      { ledger_verified_after_bulk: (await operator.ledger.verify()).ok }, totals('bulk', cost))
  }
  if (phases.has('debit')) {
    let cost: SpanCost | undefined
    const debit = await debitPhase(nc, bench.token, dbUrl, async (timed) => {
      const mark = await meter.begin()
      const out = await timed()
      cost = await meter.end(mark)
      return out
    })
    Object.assign(results, debit, perOperation('debit', cost!, debit.debit_orders))
  }
  // Last: it writes a million rows straight into an account, outside the hash chain.
  if (phases.has('paging')) {
    const paging = await pageOnAMillion(client, dbUrl, client.partnerId)
    Object.assign(results, { million_rows_first_page_ms: paging.first_page_ms,
      million_rows_deep_page_ms: paging.deep_page_ms })
  }
}

/** The table, and results.json unless the run was profiled (then where the profiles are). */
function report(results: Record<string, unknown>, profileDir: string | undefined,
    profileFiles: string[]) {
  if (profileDir) process.stdout.write('Profiled run (--profile): the profiler slows the ' +
    'service; these figures are not comparable with other runs.\n\n')
  printTable(results)
  const file = process.env.BENCH_RESULTS_FILE || path.join(root, 'bench', instances === 1
    ? 'results.json' : `results-${instances}-instances.json`)
  if (profileDir) {
    process.stdout.write(
      `\nCPU profile${profileFiles.length > 1 ? 's' : ''} of the service over the spread and ` +
        `hot phases (open in Chrome DevTools):\n` +
        profileFiles.map((f) => `  ${f}\n`).join('') +
        `The profiler slows the service: this run's figures are not comparable with others, ` +
          `and ${path.relative(root, file)} was not written.\n`,
    )
  } else {
    fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  }
}

type Metered = () => { out: { cost?: SpanCost }; hooks: PhaseHooks }

/**
 * The card phases (bench/card-phases.ts) on cards issued beforehand: the card network's
 * authorizations of 100 cents, `in_flight` at a time, on the hot account's cards and then
 * on one card of each spread account, each card taken in turn; declines count as errors.
 * The operator verifies the ledger after.
 */
async function cardPhases(callers: { network: CardNetworkClient; operator: OperatorClient },
    cards: BenchCards, metered: Metered) {
  const { network, operator } = callers
  const out: Record<string, unknown> = { card_issue_s: cards.issue_s, hot_cards }
  const runs = [
    ['card-hot', 'card_hot', cards.hot],
    ['card-spread', 'card_spread', cards.spread],
  ] as const
  for (const [phase, key, ids] of runs) {
    if (!phases.has(phase)) continue
    let next = 0
    const m = metered()
    const r = await drive(() => authorizeOnCard(network, ids[next++ % ids.length]!), m.hooks)
    Object.assign(out, {
      [`${key}_aps`]: Math.round(r.ops_per_s),
      [`${key}_p50_ms`]: r.p50_ms,
      [`${key}_p90_ms`]: r.p90_ms,
      [`${key}_p99_ms`]: r.p99_ms,
      [`${key}_errors`]: r.errors,
      ...perOperation(key, m.out.cost!, r.completed),
    })
  }
  out.card_declines = { ...declines }
  out.ledger_verified_after_cards = (await operator.ledger.verify()).ok
  return out
}

/**
 * A phase's CPU per operation (µs) and ledger batches, as flat result keys `<phase>_…`.
 * For echo the service is the echo responder, and there is no PostgreSQL or ledger.
 */
function perOperation(phase: string, cost: SpanCost, ops: number,
    o: { echo?: boolean } = {}): Record<string, number | null> {
  const per = (us: number) => (ops > 0 ? Math.round(us / ops) : null)
  const out: Record<string, number | null> = {}
  if (o.echo) {
    out[`${phase}_responder_cpu_us`] = per(cost.echo_us)
  } else {
    out[`${phase}_service_cpu_us`] = per(cost.service_us)
    if (cost.service_us_each.length > 1) cost.service_us_each.forEach(
      (us, i) => (out[`${phase}_service${i + 1}_cpu_us`] = per(us)))
    out[`${phase}_pg_cpu_us`] = per(cost.pg_us)
  }
  out[`${phase}_nats_cpu_us`] = per(cost.nats_us)
  out[`${phase}_client_cpu_us`] = per(cost.client_us)
  out[`${phase}_total_cpu_us`] = per((o.echo ? cost.echo_us : cost.service_us + cost.pg_us)
    + cost.nats_us + cost.client_us)
  if (!o.echo) {
    out[`${phase}_batch_mean`] = cost.batch_mean === null ? null : round1(cost.batch_mean)
    out[`${phase}_batch_ms`] = cost.batch_ms === null ? null : round(cost.batch_ms)
    out[`${phase}_batches_remembered`] = cost.remembered_share === null ? null
      : round(cost.remembered_share)
    out[`${phase}_batches_stale`] = cost.stale
    out[`${phase}_pg_backends_gone`] = cost.pg_gone
    out[`${phase}_wal_bytes`] = cost.wal && ops > 0 ? Math.round(cost.wal.bytes / ops) : null
    out[`${phase}_wal_records`] = cost.wal && ops > 0 ? round1(cost.wal.records / ops) : null
    out[`${phase}_wal_fpi`] = cost.wal ? cost.wal.fpi : null
  }
  return out
}

/** A span's CPU totals (ms) and ledger batches, as flat result keys `<phase>_…`. */
function totals(phase: string, cost: SpanCost): Record<string, number | null> {
  const ms = (us: number) => Math.round(us / 1000)
  const out: Record<string, number | null> = { [`${phase}_service_cpu_ms`]: ms(cost.service_us) }
  if (cost.service_us_each.length > 1) cost.service_us_each.forEach(
    (us, i) => (out[`${phase}_service${i + 1}_cpu_ms`] = ms(us)))
  Object.assign(out, {
    [`${phase}_pg_cpu_ms`]: ms(cost.pg_us),
    [`${phase}_nats_cpu_ms`]: ms(cost.nats_us),
    [`${phase}_client_cpu_ms`]: ms(cost.client_us),
    [`${phase}_batches`]: cost.batches,
    [`${phase}_batch_mean`]: cost.batch_mean === null ? null : round1(cost.batch_mean),
    [`${phase}_batch_ms`]: cost.batch_ms === null ? null : round(cost.batch_ms),
    [`${phase}_pg_backends_gone`]: cost.pg_gone,
  })
  return out
}

async function waitForFile(file: string): Promise<string> {
  for (let attempt = 0; attempt < 1200; attempt++) {
    if (fs.existsSync(file)) return file
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the service wrote no CPU profile ${file} within 120 s`)
}

/**
 * Keyset paging on a big account: 1,000,000 rows written straight into one fresh account
 * (their hashes are not a real chain; only the read path is timed), then the mean time of
 * a 100-row page at the newest end and half-way down, over NATS.
 */
async function pageOnAMillion(client: BankClient, dbUrl: string, partnerId: string) {
  const rows = Number(process.env.BENCH_PAGING_ROWS ?? 1_000_000)
  const { account_id } = await client.accounts.create(
    { entity_id: (await client.entities.list()).entities[0]!.id })
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
      const page = await client.accounts.listTransactions(
        { account_id, limit: 100, ...(cursor ? { cursor } : {}) })
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

function round1(value: number): number {
  return Math.round(value * 10) / 10
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
  return spawn(process.execPath, ['--input-type=module', '-e', script],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
}

/** Waits until `count` service instances answer `$SRV.PING` (and the echo responder answers). */
async function waitForService(nc: NatsConnection, count: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      let answered = 0
      for await (const _reply of await nc.requestMany('$SRV.PING.partner-bank', '',
        { strategy: 'timer', maxWait: 300 })) answered++
      await nc.request('bench.echo', '{}', { timeout: 500 })
      if (answered >= count) return
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`service instance ${count} did not come up within 30 s`)
}

async function setUp(nc: NatsConnection, operator: OperatorClient) {
  const partner = await operator.partners.create({
    name: 'Bench Partner (Pty) Ltd',
    email: 'bench@example.com',
    registration_number: '202099999907',
    trading_name: 'Bench',
  })
  const review = await operator.entities.review({ entity_id: partner.root_entity_id,
    decision: 'approve' })
  // One credential sends thousands of transfers a second: its budget must be far above that.
  await operator.partners.limits({ partner_id: partner.partner_id, ...bench_limits })
  const client = new BankClient({ connection: nc, token: partner.credential.token,
    partnerId: partner.partner_id, timeoutMs: 60_000 })
  const hot = review.account!.account_id
  const accounts: string[] = []
  for (let i = 0; i < accounts_count; i += 50) {
    const created = await Promise.all(
      Array.from({ length: Math.min(50, accounts_count - i) }, () => client.accounts.create(
        { entity_id: partner.root_entity_id })),
    )
    accounts.push(...created.map((a) => a.account_id))
  }
  for (let i = 0; i < accounts.length; i += 50) {
    await Promise.all(accounts.slice(i, i + 50).map((account_id) => operator.accounts.deposit(
      { account_id, amount: 100_000_000 })))
  }
  await operator.accounts.deposit({ account_id: hot, amount: 900_000_000_000 })
  return { client, accounts, hot, rootEntityId: partner.root_entity_id }
}

/** Keeps `in_flight` requests outstanding: a warm-up, then a measured phase (between the hooks). */
async function drive(request: () => Promise<unknown>,
    hooks: PhaseHooks = {}): Promise<PhaseResult> {
  const run = async (ms: number, record: boolean) => {
    const r = await timedRun(request, ms, record, in_flight)
    const p = { p50_ms: r.percentile(0.5), p90_ms: r.percentile(0.9),
      p99_ms: r.percentile(0.99) }
    return { ops_per_s: r.latencies.length / r.elapsed, ...p, completed: r.latencies.length,
      errors: r.errors }
  }
  await run(warmup_ms, false)
  await hooks.beforeMeasured?.()
  const result = await run(phase_ms, true)
  await hooks.afterMeasured?.()
  return result
}

function printTable(r: Record<string, unknown>): void {
  const header = ['phase', 'ops/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors', 'service', 'pg', 'nats',
    'client', 'all', 'size', 'ms']
  printColumns(header, tableRows(r))
  printCpuNotes(r)
  printPhaseNotes(r)
  printOtherNotes(r)
}

const show = (value: unknown) => (value === undefined || value === null ? '-' : String(value))

/** The table's rows: each phase that ran, its rate, latencies, errors and CPU columns. */
function tableRows(r: Record<string, unknown>): string[][] {
  const cpu = (phase: string) => [
    show(r[`${phase}_service_cpu_us`] ?? r[`${phase}_responder_cpu_us`]),
    show(r[`${phase}_pg_cpu_us`]),
    show(r[`${phase}_nats_cpu_us`]),
    show(r[`${phase}_client_cpu_us`]),
    show(r[`${phase}_total_cpu_us`]),
    show(r[`${phase}_batch_mean`]),
    show(r[`${phase}_batch_ms`]),
  ]
  const rows: string[][] = []
  if (r.echo_rps !== undefined) rows.push(['echo (no-op request/reply)*', show(r.echo_rps),
    show(r.echo_p50_ms), show(r.echo_p90_ms), show(r.echo_p99_ms), '0', ...cpu('echo')])
  if (r.spread_tps !== undefined) {
    rows.push([`transfers spread (${r.accounts} accounts)`, show(r.spread_tps),
      show(r.spread_p50_ms), show(r.spread_p90_ms), show(r.spread_p99_ms), show(r.spread_errors),
      ...cpu('spread')])
  }
  if (r.hot_tps !== undefined) rows.push(['transfers hot (one account)', show(r.hot_tps),
    show(r.hot_p50_ms), show(r.hot_p90_ms), show(r.hot_p99_ms), show(r.hot_errors), ...cpu('hot')])
  if (r.debit_run_100k_s !== undefined) {
    const perS = Math.round(Number(r.debit_orders) / Number(r.debit_run_100k_s))
    rows.push([`debit run (${r.debit_orders} orders)`, String(perS), '-', '-', '-', '-',
      ...cpu('debit')])
  }
  rows.push(...cardRows(r, cpu))
  return rows
}

/** The rows in columns, under a group heading over the CPU and the ledger-batch columns. */
function printColumns(header: string[], rows: string[][]) {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => row[i]!.length)))
  const cellOf = (cell: string, i: number) =>
    (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))
  const line = (row: string[]) => `${row.map(cellOf).join('  ')}\n`
  const left = widths.slice(0, 6).reduce((a, b) => a + b + 2, 0)
  const cpuWidth = widths.slice(6, 11).reduce((a, b) => a + b + 2, 0)
  process.stdout.write(
    `${' '.repeat(left)}${'CPU µs per operation'.padEnd(cpuWidth)}ledger batch\n`)
  process.stdout.write(line(header))
  for (const row of rows) process.stdout.write(line(row))
}

/** What the CPU columns count. */
function printCpuNotes(r: Record<string, unknown>) {
  process.stdout.write(
    `\nCPU µs per operation: each process's CPU time over the measured phase ÷ operations ` +
      `completed; service = ${r.instances} instance${r.instances === 1 ? '' : 's'}` +
      `${Number(r.instances) > 1 ? ' summed' : ''}; pg = the bench database's backends + WAL ` +
      `writer, checkpointer, background writer (the last three write for every database on the ` +
      `server); client = this process; all = the four. ledger batch: mean payments per batch, ` +
        `mean ms to write one (service metrics).\n`,
  )
  if (r.echo_rps !== undefined) process.stdout.write(
    '* echo: the service column is the no-op responder process; no PostgreSQL, no ledger.\n')
}

/** Notes on the transfer phases: backends gone, remembered batches, WAL, the ratios, cards. */
function printPhaseNotes(r: Record<string, unknown>) {
  const gone = ['spread', 'hot', 'bulk', 'debit'].filter((p) => Number(r[`${p}_pg_backends_gone`]
    ?? 0) > 0)
  if (gone.length > 0) {
    process.stdout.write(
      `PostgreSQL processes that ended during a phase (their CPU in it is ` +
        `missing): ${gone.map((p) => `${p} ${r[`${p}_pg_backends_gone`]}`).join(', ')}\n`,
    )
  }
  const starts = ['spread', 'hot'].filter((p) => r[`${p}_batches_remembered`] !== undefined
    && r[`${p}_batches_remembered`] !== null)
  if (starts.length > 0) {
    const shares = starts.map((p) =>
      `${p} ${(Number(r[`${p}_batches_remembered`]) * 100).toFixed(1)} % ` +
      `(${r[`${p}_batches_stale`]} found stale)`)
    process.stdout.write(
      'payment batches that started from remembered account states (no lock-and-read ' +
        `statement): ${shares.join(', ')}\n`,
    )
  }
  const logged = ['spread', 'hot'].filter((p) => r[`${p}_wal_bytes`] !== undefined
    && r[`${p}_wal_bytes`] !== null)
  if (logged.length > 0) {
    process.stdout.write(
      `PostgreSQL's WAL per transfer (the whole server's): ${logged
        .map((p) => `${p} ${r[`${p}_wal_bytes`]} bytes in ${r[`${p}_wal_records`]} records ` +
          `(${r[`${p}_wal_fpi`]} full-page images in the phase)`)
        .join(', ')}\n`,
    )
  }
  if (r.spread_tps !== undefined || r.hot_tps !== undefined) {
    process.stdout.write(
      `\ntransfer/echo: spread ${show(r.spread_to_echo)}, hot ${show(r.hot_to_echo)}; ` +
        `hot/spread ${show(r.hot_to_spread)}; ledger verified: ${r.ledger_verified}\n`,
    )
  }
  if (r.card_issue_s !== undefined) process.stdout.write(cardNotes(r))
}

/** The paging, bulk and debit phases' figures. */
function printOtherNotes(r: Record<string, unknown>) {
  if (r.million_rows_first_page_ms !== undefined) {
    process.stdout.write(
      `transaction list on a 1,000,000-row account (100-row page, one request at a time): ` +
        `newest ${r.million_rows_first_page_ms} ms, half-way down ${r.million_rows_deep_page_ms} ` +
        `ms\n`,
    )
  }
  if (r.bulk_initiate_ms !== undefined) {
    process.stdout.write(
      `bulk payments (1000 payments): initiate ${r.bulk_initiate_ms} ms, verify → completed ` +
        `(RTC) ${r.bulk_complete_ms} ms; ` +
        `webhooks ${r.webhooks_per_s}/s from a standing queue, ${r.webhooks_e2e_per_s}/s from ` +
          `verify (${r.webhook_events} events to a loopback receiver); ledger verified ` +
          `after: ${r.ledger_verified_after_bulk}\n` +
        `  CPU over the whole bulk phase: service ${r.bulk_service_cpu_ms} ms, ` +
          `pg ${r.bulk_pg_cpu_ms} ms, nats ${r.bulk_nats_cpu_ms} ms, ` +
          `client ${r.bulk_client_cpu_ms} ms; ` +
        `${r.bulk_batches} ledger batches, mean size ${show(r.bulk_batch_mean)}, ` +
          `mean ${show(r.bulk_batch_ms)} ms\n`,
    )
  }
  if (r.debit_run_100k_s !== undefined) {
    process.stdout.write(
      `debit-order collection run (${r.debit_orders} due once-off orders, ops.debit.run until ` +
        `every order successful): ${r.debit_run_100k_s} s ` +
        `(orders written straight into the tables in ${r.debit_run_seed_s} s beforehand; the ` +
        `table's row is orders/s and CPU per order); ledger verified ` +
          `after: ${r.ledger_verified_after_debit}\n`,
    )
  }
}

/** The card phases' rows of the table (the card network's authorizations, 100 cents each). */
function cardRows(r: Record<string, unknown>, cpu: (phase: string) => string[]): string[][] {
  const row = (label: string, k: string) => {
    const cells = ['aps', 'p50_ms', 'p90_ms', 'p99_ms', 'errors'].map((c) => r[`${k}_${c}`])
    return [label, ...cells.map((c) => (c === undefined ? '-' : String(c))), ...cpu(k)]
  }
  const rows: string[][] = []
  if (r.card_hot_aps !== undefined) {
    rows.push(row(`card authorizations hot (${r.hot_cards} cards, one account)`, 'card_hot'))
  }
  if (r.card_spread_aps !== undefined) {
    rows.push(row(`card authorizations spread (${r.accounts} cards)`, 'card_spread'))
  }
  return rows
}

function cardNotes(r: Record<string, unknown>): string {
  const ratio = (a: unknown, b: unknown) =>
    typeof a === 'number' && typeof b === 'number' && b > 0 ? round(a / b) : '-'
  const issued = `${r.accounts} + ${r.hot_cards}`
  return (
    `\ncards: ${issued} issued (SDK request + approval) in ${r.card_issue_s} s beforehand,` +
    ` not timed; authorized by a card network credential (net.card.authorize, no operator` +
    ` audit row); card/transfer: hot ${ratio(r.card_hot_aps, r.hot_tps)},` +
    ` spread ${ratio(r.card_spread_aps, r.spread_tps)};` +
    ` declines ${JSON.stringify(r.card_declines)};` +
    (r.decision_pairs === undefined
      ? ''
      : ` partner decision round trip (${r.decision_pairs} pairs, one at a time): p50` +
        ` ${r.decision_p50_ms} ms asked, ${r.decision_alone_p50_ms} ms not,` +
        ` +${r.decision_added_ms} ms;`) +
    ` ledger verified after: ${r.ledger_verified_after_cards}\n` +
    groupStarts(r)
  )
}

/** How the card phases' authorization groups started: from memory, or locked and read. */
function groupStarts(r: Record<string, unknown>): string {
  const phases = ['card_hot', 'card_spread'].filter(
    (p) => typeof r[`${p}_batches_remembered`] === 'number',
  )
  if (phases.length === 0) return ''
  const share = (p: string) => `${(Number(r[`${p}_batches_remembered`]) * 100).toFixed(1)} %`
  return (
    'card authorization groups that started from remembered cards and accounts: ' +
    phases
      .map((p) => `${p.slice(5)} ${share(p)} (${r[`${p}_batches_stale`]} found stale)`)
      .join(', ') +
    '\n'
  )
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
