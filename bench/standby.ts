// The synchronous standby's cost in the benchmark (issue 33: goal, at least 70 % of the
// single server's transfer rate). Never part of `npm test`. It starts two private PostgreSQL
// clusters of its own (bench/private-cluster.ts) on the same disk, with the same settings
// and durable commits: one server alone, and a primary with a synchronous streaming standby
// (`synchronous_commit = on`, the standby named in `synchronous_standby_names`, so that a
// commit returns only once the standby has flushed it). Then it runs the benchmark's
// transfer phases (bench/run.ts, unchanged, as a child with BENCH_DATABASE_URL set) against
// each in turn, for BENCH_STANDBY_ROUNDS rounds (3), each round in another order, and prints
// each run's figures and each round's ratios. It also runs the primary with
// `synchronous_commit = remote_write` (see Setup). Both clusters stay up throughout, so the
// standby's processes are there in every run.
//
//   node --import tsx bench/standby.ts
//
// Settings: BENCH_STANDBY_ROUNDS (3), BENCH_PHASES (echo,spread,hot), and bench/run.ts's own
// (BENCH_PHASE_MS, BENCH_WARMUP_MS, BENCH_IN_FLIGHT, BENCH_ACCOUNTS). The machine's speed
// moves from minute to minute: read the pairs, not one run.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { PrivateCluster } from './private-cluster.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const rounds = Number(process.env.BENCH_STANDBY_ROUNDS ?? 3)
const phases = process.env.BENCH_PHASES ?? 'echo,spread,hot'

/**
 * The single server; the primary with `synchronous_commit = on` (a commit waits until the
 * standby has flushed it to disk, Patroni's synchronous mode as the topology runs it); and
 * the same primary with `remote_write` (until the standby has written it to its operating
 * system, not yet flushed), set on the primary between runs.
 */
type Setup = 'single' | 'sync on' | 'sync remote_write'
const setups: readonly Setup[] = ['single', 'sync on', 'sync remote_write']

interface RunFigures {
  setup: Setup
  round: number
  echo_rps?: number
  spread_tps?: number
  hot_tps?: number
  spread_p99_ms?: number
  hot_p99_ms?: number
  spread_wal_bytes?: number
}

/** One bench/run.ts run against `adminUrl`; its results file's figures. */
async function benchRun(adminUrl: string, resultsFile: string): Promise<Record<string, number>> {
  const env = {
    ...process.env,
    BENCH_DATABASE_URL: adminUrl,
    BENCH_PHASES: phases,
    BENCH_RESULTS_FILE: resultsFile,
  }
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/run.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`bench/run.ts exited ${code} against ${adminUrl}`)
  return JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Record<string, number>
}

function figures(setup: Setup, round: number, r: Record<string, number>) {
  return {
    setup,
    round,
    echo_rps: r.echo_rps,
    spread_tps: r.spread_tps,
    hot_tps: r.hot_tps,
    spread_p99_ms: r.spread_p99_ms,
    hot_p99_ms: r.hot_p99_ms,
    spread_wal_bytes: r.spread_wal_bytes,
  }
}

function print(runs: RunFigures[]): void {
  const show = (v: number | undefined) => (v === undefined ? '-' : String(v))
  process.stdout.write('\nround  setup              echo/s  spread/s  hot/s  spread p99  hot p99\n')
  for (const r of runs) {
    const cells = [r.echo_rps, r.spread_tps, r.hot_tps, r.spread_p99_ms, r.hot_p99_ms].map(show)
    process.stdout.write(
      `${String(r.round).padEnd(7)}${r.setup.padEnd(19)}${cells[0]!.padStart(6)}` +
        `${cells[1]!.padStart(10)}${cells[2]!.padStart(7)}${cells[3]!.padStart(12)}` +
        `${cells[4]!.padStart(9)}\n`,
    )
  }
  process.stdout.write('\nwith the standby / alone, per round:\n')
  const ratio = (a?: number, b?: number) => (a && b ? (a / b).toFixed(2) : '-')
  for (let round = 1; round <= rounds; round++) {
    const single = runs.find((r) => r.round === round && r.setup === 'single')
    for (const setup of setups.slice(1)) {
      const sync = runs.find((r) => r.round === round && r.setup === setup)
      if (!single || !sync) continue
      process.stdout.write(
        `  round ${round}, ${setup}: spread ${ratio(sync.spread_tps, single.spread_tps)},` +
          ` hot ${ratio(sync.hot_tps, single.hot_tps)}\n`,
      )
    }
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-bench-standby-'))
  const clusters: PrivateCluster[] = []
  try {
    const single = await PrivateCluster.create('single')
    clusters.push(single)
    const primary = await PrivateCluster.create('primary')
    clusters.push(primary)
    clusters.push(await PrivateCluster.standbyOf(primary, 'standby1'))
    process.stdout.write(
      `single server on port ${single.port}; primary on ${primary.port} with a synchronous` +
        ` standby on ${clusters[2]!.port}\n`,
    )
    const runs: RunFigures[] = []
    for (let round = 1; round <= rounds; round++) {
      // Each round in another order, so that no setup always runs first or last.
      const order = [...setups.slice(round - 1), ...setups.slice(0, round - 1)]
      for (const setup of order) {
        const cluster = setup === 'single' ? single : primary
        if (setup !== 'single') {
          const level = setup === 'sync on' ? 'on' : 'remote_write'
          await primary.query(`alter system set synchronous_commit = '${level}'`)
          await primary.query('select pg_reload_conf()')
        }
        const file = path.join(work, `${setup.replace(' ', '-')}-${round}.json`)
        const result = figures(setup, round, await benchRun(cluster.url, file))
        runs.push(result)
        process.stdout.write(`${JSON.stringify(result)}\n`)
      }
    }
    print(runs)
  } finally {
    for (const cluster of clusters.reverse()) await cluster.destroy()
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
