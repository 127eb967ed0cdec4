// Where a bench phase's CPU goes (bench/run.ts): the CPU time the service process(es),
// PostgreSQL, nats-server and the benchmark client each spent between a phase's start and
// end, and the service's ledger batches over the same span (from its Prometheus metrics).
//
// - Service and nats-server: utime + stime of their processes (/proc/<pid>/stat; every
//   thread's, also those that ended).
// - PostgreSQL: the backends connected to the bench database (pg_stat_activity, datname),
//   plus the WAL writer, checkpointer and background writer, which write for every
//   database on the server: another database busy at the same time shows up here too. A
//   backend that starts during the phase counts from zero; one that ends during the phase
//   is lost (its CPU is no longer in /proc) and is counted in `gone`. The monitoring
//   connection itself is on the admin database, so it is not counted.
// - Client: process.cpuUsage() of this process (it also reads the metrics and /proc).
// - Ledger batches: differences of `bank_ledger_batch_size` and `bank_ledger_batch_seconds`
//   _sum and _count, over every committer (reserve, settle) and every instance.
// - WAL: differences of `pg_stat_wal`'s wal_bytes, wal_records and wal_fpi (full-page
//   images): what PostgreSQL wrote to its log, for the whole server as the WAL writer's CPU
//   is (PostgreSQL 14 and later; null on an older server).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import type pg from 'pg'

const ticksPerSecond = clockTicks()
const usPerTick = 1_000_000 / ticksPerSecond

export interface MeterTargets {
  /** One pid per service instance. */
  servicePids: number[]
  natsPid: number
  /** The echo responder: the "service" of the echo phase. */
  echoPid?: number
  /** A connection to the admin database (not the bench database, or it would count itself). */
  monitor: pg.Client
  dbName: string
  /** The service instances' BANK_METRICS_PORT, one each. */
  metricsPorts: number[]
}

interface Mark {
  service: number[]
  echo: number
  nats: number
  pg: Map<number, number>
  client: NodeJS.CpuUsage
  batches: BatchCounters
  wal: WalCounters | null
}

interface WalCounters {
  bytes: number
  records: number
  fpi: number
}

interface BatchCounters {
  sizeSum: number
  sizeCount: number
  secondsSum: number
  secondsCount: number
  /**
   * Reserve batches that started from remembered account states, and those that read them under
   * lock.
   */
  remembered: number
  locked: number
  stale: number
}

/** CPU microseconds spent over a span (totals, not per operation), and the ledger batches in it. */
export interface SpanCost {
  service_us: number
  service_us_each: number[]
  echo_us: number
  pg_us: number
  nats_us: number
  client_us: number
  batches: number
  batch_mean: number | null
  batch_ms: number | null
  /**
   * Of the span's payment batches, the share that started from remembered account states (null
   * without any).
   */
  remembered_share: number | null
  /** Remembered batches found stale and written again under lock. */
  stale: number
  /**
   * PostgreSQL processes seen at the start and gone at the end: their CPU in the span is missing.
   */
  pg_gone: number
  /** What the server wrote to its WAL over the span (null without pg_stat_wal). */
  wal: WalCounters | null
}

export class Meter {
  constructor(private readonly targets: MeterTargets) {}

  /** The start of a span. The metrics are read first, so that reading them is not counted. */
  async begin(): Promise<Mark> {
    const batches = await this.batchCounters()
    const wal = await this.walCounters()
    const pgCpu = await this.pgCpu()
    return { ...this.processCpu(), pg: pgCpu, client: process.cpuUsage(), batches, wal }
  }

  /** The end of a span begun with `begin()`. The CPU is read first, then the metrics. */
  async end(start: Mark): Promise<SpanCost> {
    const client = process.cpuUsage(start.client)
    const now = this.processCpu()
    const pgNow = await this.pgCpu()
    const wal = await this.walCounters()
    const batches = await this.batchCounters()
    let pgUs = 0
    let gone = 0
    for (const [pid, ticks] of pgNow) pgUs += (ticks - (start.pg.get(pid) ?? 0)) * usPerTick
    for (const pid of start.pg.keys()) if (!pgNow.has(pid)) gone++
    const serviceEach = now.service.map((ticks, i) => (ticks - start.service[i]!) * usPerTick)
    const count = batches.sizeCount - start.batches.sizeCount
    const secondsCount = batches.secondsCount - start.batches.secondsCount
    return {
      service_us: serviceEach.reduce((a, b) => a + b, 0),
      service_us_each: serviceEach,
      echo_us: (now.echo - start.echo) * usPerTick,
      pg_us: pgUs,
      nats_us: (now.nats - start.nats) * usPerTick,
      client_us: client.user + client.system,
      batches: count,
      batch_mean: count > 0 ? (batches.sizeSum - start.batches.sizeSum) / count : null,
      batch_ms: secondsCount > 0 ? ((batches.secondsSum - start.batches.secondsSum) / secondsCount)
        * 1000 : null,
      remembered_share: shareOf(batches.remembered - start.batches.remembered,
        batches.locked - start.batches.locked),
      stale: batches.stale - start.batches.stale,
      pg_gone: gone,
      wal:
        wal && start.wal
          ? { bytes: wal.bytes - start.wal.bytes, records: wal.records - start.wal.records,
            fpi: wal.fpi - start.wal.fpi }
          : null,
    }
  }

  private async walCounters(): Promise<WalCounters | null> {
    try {
      const { rows } = await this.targets.monitor.query<{
          bytes: string; records: string; fpi: string }>(
        'select wal_bytes::text as bytes, wal_records::text as records, wal_fpi::text as fpi from pg_stat_wal',
      )
      const row = rows[0]
      return row ? { bytes: Number(row.bytes), records: Number(row.records), fpi: Number(row.fpi) }
        : null
    } catch {
      return null // before PostgreSQL 14
    }
  }

  private processCpu() {
    return {
      service: this.targets.servicePids.map((pid) => procTicks(pid) ?? 0),
      echo: this.targets.echoPid === undefined ? 0 : (procTicks(this.targets.echoPid) ?? 0),
      nats: procTicks(this.targets.natsPid) ?? 0,
    }
  }

  /** utime + stime (ticks) of PostgreSQL's processes serving the bench, by pid. */
  private async pgCpu(): Promise<Map<number, number>> {
    const { rows } = await this.targets.monitor.query<{ pid: number }>(
      `select pid from pg_stat_activity
       where datname = $1 or backend_type in ('walwriter', 'checkpointer', 'background writer')`,
      [this.targets.dbName],
    )
    const cpu = new Map<number, number>()
    for (const { pid } of rows) {
      const ticks = procTicks(pid)
      if (ticks !== undefined) cpu.set(pid, ticks)
    }
    return cpu
  }

  private async batchCounters(): Promise<BatchCounters> {
    const total: BatchCounters = { sizeSum: 0, sizeCount: 0, secondsSum: 0, secondsCount: 0,
      remembered: 0, locked: 0, stale: 0 }
    for (const port of this.targets.metricsPorts) {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`)
      if (!response.ok) throw new Error(
        `the service's metrics on port ${port} answered ${response.status}`)
      const text = await response.text()
      total.sizeSum += sumOf(text, 'bank_ledger_batch_size_sum')
      total.sizeCount += sumOf(text, 'bank_ledger_batch_size_count')
      total.secondsSum += sumOf(text, 'bank_ledger_batch_seconds_sum')
      total.secondsCount += sumOf(text, 'bank_ledger_batch_seconds_count')
      // Payment batches and card authorization groups alike (a phase has one or the other).
      const counters = ['bank_ledger_batch_starts_total', 'bank_card_authorization_groups_total']
      for (const starts of counters) {
        total.remembered += sumOf(text, starts, 'start="remembered"')
        total.locked += sumOf(text, starts, 'start="locked"')
        total.stale += sumOf(text, starts, 'start="stale"')
      }
    }
    return total
  }
}

/**
 * The sum of a Prometheus text-format metric over all its label sets (those holding `label`, when
 * given).
 */
function sumOf(text: string, name: string, label?: string): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const rest = line.slice(name.length)
    if (rest[0] !== '{' && rest[0] !== ' ') continue
    if (label !== undefined && !rest.slice(0, rest.indexOf('}') + 1).includes(label)) continue
    sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

function shareOf(part: number, rest: number): number | null {
  return part + rest > 0 ? part / (part + rest) : null
}

/** utime + stime of a process in clock ticks; undefined once it has ended. */
export function procTicks(pid: number): number | undefined {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may hold spaces; fields 14 and 15
  // (utime, stime) are the 12th and 13th after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
}
