// How fast transaction monitoring's sweep evaluates money movements (src/monitoring): never part
// of `npm test`, nothing asserted. On a test bank (BANK_TEST_STORAGE: pglite by default, or
// postgres), with the clock standing still, BENCH_MONITORING_PAYMENTS EFT payouts (2,000) are
// taken through the SDK, 16 in flight, then one sweep evaluates them all (timed), then one more
// finds nothing (timed: the cost of a sweep with nothing new). Three phases:
//   ordinary  the payments spread over 200 accounts, small amounts: no rule hits;
//   alerting  the same over 20 accounts: each account's payments pass the velocity rule's 20
//             an hour, so most movements join an alert (its hardest case: writes per hit);
//   hot       the same from one account (the main bench's hot phase): every movement joins
//             the account's velocity alert with the last 500 rows of the account.
// Prints one JSON line per phase. The payments themselves do no monitoring work (the sweep
// reads the ledger behind them); the payments' own time is printed beside, not compared.
// Beside the sweep's wall time, the CPU it cost per movement evaluated: this process's (the
// bank runs in it) and, on PostgreSQL, the database's backends' (/proc; bench/meter.ts), less
// swayed than wall time by other work on the machine.
//
//   node --import tsx bench/monitoring-sweep.ts
import { onboardPartner, startTestBank, type TestBank } from '../test/support/harness.ts'
import { fund, transferBody } from '../test/transfers/helpers.ts'
import { sql } from 'kysely'
import { procTicks } from './meter.ts'

const payments = Number(process.env.BENCH_MONITORING_PAYMENTS ?? 2_000)
const in_flight = 16

async function phase(tb: TestBank, name: string, accountsCount: number): Promise<void> {
  const p = await onboardPartner(tb, { approve: true })
  const accounts: string[] = []
  for (let i = 0; i < accountsCount; i++) {
    const account = (await p.client.accounts.create({ entity_id: p.rootEntityId })).account_id
    await fund(tb, account, 10_000_000)
    accounts.push(account)
  }
  const sweep = tb.bank.services.monitoringSweep
  await sweep.run()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: in_flight }, async (_, worker) => {
    for (let i = worker; i < payments; i += in_flight) {
      await p.client.accounts.transfer(transferBody(accounts[i % accountsCount]!,
        { amount: 1_000 + i }))
    }
  }))
  const t1 = performance.now()
  const cpu0 = await cpuNow(tb)
  const report = await sweep.run()
  const cpu1 = await cpuNow(tb, cpu0)
  const t2 = performance.now()
  await sweep.run()
  const t3 = performance.now()
  console.log(JSON.stringify({ phase: name, storage: process.env.BANK_TEST_STORAGE ?? 'pglite',
    payments, payments_seconds: +((t1 - t0) / 1000).toFixed(2), ...report,
    sweep_seconds: +((t2 - t1) / 1000).toFixed(2),
    movements_per_second: Math.round(report.evaluated / ((t2 - t1) / 1000)),
    service_cpu_us_per_movement: Math.round((cpu1.service - cpu0.service) / report.evaluated),
    pg_cpu_us_per_movement: storage === 'postgres'
      ? Math.round(pgSpent(cpu0.pg, cpu1.pg) / report.evaluated) : null,
    idle_sweep_ms: +(t3 - t2).toFixed(1) }))
}

const storage = process.env.BANK_TEST_STORAGE ?? 'pglite'
const us_per_tick = 1_000_000 / 100

interface CpuMark {
  service: number
  /** Each backend of the test bank's database: its CPU in µs. */
  pg: Map<number, number>
}

/** This process's CPU and the database's backends' (on PostgreSQL), in µs. */
async function cpuNow(tb: TestBank, before?: CpuMark): Promise<CpuMark> {
  const usage = process.cpuUsage()
  const pg = new Map<number, number>()
  if (storage === 'postgres') {
    const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
      where datname = current_database()`.execute(tb.bank.database.db)
    const pids = new Set([...rows.map((r) => r.pid), ...(before?.pg.keys() ?? [])])
    for (const pid of pids) pg.set(pid, (procTicks(pid) ?? 0) * us_per_tick)
  }
  return { service: usage.user + usage.system, pg }
}

/** The backends' CPU between two marks (a backend new since the first counts from zero). */
function pgSpent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, us] of after) total += Math.max(0, us - (before.get(pid) ?? 0))
  return total
}

const tb = await startTestBank({ persistent: false })
try {
  await phase(tb, 'ordinary', 200)
  await phase(tb, 'alerting', 20)
  await phase(tb, 'hot', 1)
} finally {
  await tb.stop()
}
