// `npm run bench:screening`: sanctions screening against a list of BENCH_SCREENING_ENTRIES
// entries (30,000), never part of `npm test` and never asserted. It makes a list in OFAC's
// SDN XML format from a seeded generator (three individuals in four, the rest entities; one
// to three aliases each, some in Cyrillic, some with diacritics; dates of birth and passport
// numbers), loads it through ScreeningService.load into a fresh PostgreSQL database (the
// parse, the write of every entry and the index built from the table), then screens
// BENCH_SCREENING_QUERIES names (2,000) one at a time through ScreeningService.screen (the
// active-version query and the index; after a pass of other names, not counted): a
// third listed names as written, a third with a typo and the names in another order, a
// third names not on the list; then the same names again, which the service answers from
// what it remembers (screen_service_remembered). Prints JSON lines: the
// load's phases, and the screenings' p50, p99 and max in milliseconds, with the index alone
// (NameIndex.screen, no database) beside them.
//
//   npm run bench:screening
//   BENCH_SCREENING_ENTRIES=5000 npm run bench:screening      a short run
//
// Settings (environment): BENCH_DATABASE_URL (admin connection; a database is created and
// dropped), BENCH_SCREENING_ENTRIES (30000), BENCH_SCREENING_QUERIES (2000).
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import pg from 'pg'
import { systemClock } from '../src/clock.ts'
import { openDatabase } from '../src/db/database.ts'
import { JobRunner } from '../src/jobs/job-runner.ts'
import { createLogger } from '../src/logger.ts'
import { migrations } from '../src/modules.ts'
import type { Database } from '../src/schema.ts'
import { NameIndex } from '../src/screening/name-index.ts'
import { ScreeningService } from '../src/screening/screening-service.ts'
import { ScreeningReviews } from '../src/screening/screening-reviews.ts'
import { Rescreening } from '../src/screening/rescreening.ts'
import { SanctionsListReader } from '../src/screening/sanctions-list-read.ts'
import type { ListEntry } from '../src/screening/list-entry.ts'
import { benchList, pick, random, word } from './screening-list.ts'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const entryCount = Number(process.env.BENCH_SCREENING_ENTRIES ?? 30_000)
const queryCount = Number(process.env.BENCH_SCREENING_QUERIES ?? 2_000)

/** A name with one letter changed and its names in another order. */
function typoReordered(name: string): string {
  const names = name.split(' ')
  const at = Math.floor(random() * names.length)
  const target = names[at]!
  const position = 1 + Math.floor(random() * (target.length - 1))
  names[at] = target.slice(0, position) + 'x' + target.slice(position + 1)
  return [...names.slice(1), names[0]!].join(' ')
}

function queries(entries: ListEntry[]) {
  return Array.from({ length: queryCount }, (_, i) => {
    const e = pick(entries)
    const kind = e.kind === 'individual' ? 'individual' as const : 'entity' as const
    const name = i % 3 === 0 ? e.names[0]! : i % 3 === 1 ? typoReordered(e.names[0]!)
      : `${word()} ${word()}`
    return { name, kind }
  })
}

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
  const ms = (v: number) => Math.round(v * 1000) / 1000
  return { p50_ms: ms(at(0.5)), p99_ms: ms(at(0.99)), max_ms: ms(sorted.at(-1)!) }
}

async function timed<T>(phase: string, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now()
  const result = await work()
  console.log(JSON.stringify({ phase, ms: Math.round(performance.now() - started) }))
  return result
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try { await client.query(statement) } finally { await client.end() }
}

async function main(): Promise<void> {
  const { entries, file } = benchList(entryCount)
  console.log(JSON.stringify({ entries: entryCount, names: entries.reduce((n, e) =>
    n + e.names.length, 0), file_bytes: file.length }))
  const asked = queries(entries)
  let index: NameIndex | undefined = await timed('index_alone_build', () => {
    const built = new NameIndex()
    const reader = new SanctionsListReader((e) => built.add(e))
    reader.write(file.toString('utf8'))
    reader.end()
    return built
  })
  // A first pass is not counted: a bank builds its index once and screens for hours, so the
  // collection of the build's garbage belongs to the build, not to a screening.
  for (const q of asked) index!.screen(q, 0.88)
  const alone = asked.map((q) => {
    const started = performance.now()
    index!.screen(q, 0.88)
    return performance.now() - started
  })
  console.log(JSON.stringify({ phase: 'screen_index_alone', queries: queryCount,
    ...percentiles(alone), heap_used_mb: Math.round(process.memoryUsage().heapUsed / 2 ** 20) }))
  index = undefined
  await throughService(file, asked, queries(entries))
}

/** The load and the screenings through ScreeningService on a fresh PostgreSQL database. */
async function throughService(file: Buffer, asked: ReturnType<typeof queries>,
    unseen: ReturnType<typeof queries>): Promise<void> {
  const dbName = `bank_bench_screening_${randomBytes(4).toString('hex')}`
  const url = new URL(adminUrl)
  url.pathname = `/${dbName}`
  await admin(`create database ${dbName}`)
  const handle = await openDatabase<Database>({ migrations, databaseUrl: url.toString(),
    pgliteDir: 'memory://', poolMax: 4 })
  try {
    const log = createLogger('silent')
    const jobs = new JobRunner(handle.db, systemClock, log, { poll_ms: 1000, concurrency_max: 1 })
    const service = new ScreeningService(handle.db, systemClock,
      { reviewScore: 0.88, confirmScore: 0.97 }, jobs, log)
    // A load enqueues the re-screening of every customer (none here): its kind is registered.
    new Rescreening(handle.db, new ScreeningReviews(handle.db, systemClock, service), jobs, log)
    const caller = { role: 'operator' as const, credentialId: 'bench', label: 'bench',
      partnerId: null, permissions: new Set<never>() }
    await timed('load_parse_write_index', () => service.load([file], { uploadId: randomUUID(),
      sha256: createHash('sha256').update(file).digest('hex'), caller }))
    // Warmed up on the names the index was timed with; timed on others, which the service has
    // not answered before, then on those again, which it answers from memory.
    for (const q of asked) await service.screen(q)
    for (const [phase, names] of [['screen_service', unseen],
      ['screen_service_remembered', unseen]] as const) {
      let hits = 0
      const screened: number[] = []
      for (const q of names) {
        const started = performance.now()
        hits += (await service.screen(q)).length > 0 ? 1 : 0
        screened.push(performance.now() - started)
      }
      console.log(JSON.stringify({ phase, queries: queryCount, queries_with_hits: hits,
        ...percentiles(screened) }))
    }
  } finally {
    await handle.close()
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

await main()
