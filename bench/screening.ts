// `npm run bench:screening`: sanctions screening against a list of BENCH_SCREENING_ENTRIES
// entries (30,000), never part of `npm test` and never asserted. It makes a list in OFAC's
// SDN XML format from a seeded generator (three individuals in four, the rest entities; one
// to three aliases each, some in Cyrillic, some with diacritics; dates of birth and passport
// numbers), loads it through ScreeningService.load into a fresh PostgreSQL database (the
// parse, the write of every entry and the index built from the table), then screens
// BENCH_SCREENING_QUERIES names (2,000) one at a time through ScreeningService.screen (the
// active-version query and the index; a first pass of the same names is not counted): a
// third listed names as written, a third with a typo and the names in another order, a
// third names not on the list. Prints JSON lines: the
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

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const entryCount = Number(process.env.BENCH_SCREENING_ENTRIES ?? 30_000)
const queryCount = Number(process.env.BENCH_SCREENING_QUERIES ?? 2_000)

/** A seeded generator (mulberry32), so that every run screens the same names. */
function seeded(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const random = seeded(46)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
const onsets = ['b', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'sh',
  'kh', 'ch', 'br', 'dr', 'tr', 'al', 'ab', 'ur', 'yu']
const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ia', 'é', 'ü']
const codas = ['', '', 'n', 'r', 'm', 's', 'd', 'v', 'k', 'l']
const cyrillic: Record<string, string> = { a: 'а', b: 'б', d: 'д', e: 'е', f: 'ф', g: 'г',
  h: 'х', i: 'и', k: 'к', l: 'л', m: 'м', n: 'н', o: 'о', p: 'п', r: 'р', s: 'с', t: 'т',
  u: 'у', v: 'в', z: 'з', y: 'й', c: 'ц' }
const forms = ['LLC', 'LTD', 'JSC', 'Trading Company', 'Holdings', 'Shipping', 'Group']

function word(): string {
  const syllables = 2 + Math.floor(random() * 2)
  let text = ''
  for (let i = 0; i < syllables; i++) text += pick(onsets) + pick(vowels) + pick(codas)
  return text[0]!.toUpperCase() + text.slice(1)
}

function toCyrillic(name: string): string {
  return [...name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()]
    .map((c) => cyrillic[c] ?? c).join('')
}

function entry(i: number): ListEntry {
  const individual = random() < 0.75
  const names = individual ? [word(), word(), ...(random() < 0.5 ? [word()] : [])]
    : [word(), word(), pick(forms)]
  const primary = names.join(' ')
  const aliases = [names.slice().reverse().join(' ')]
  if (random() < 0.5) aliases.push(toCyrillic(primary))
  if (random() < 0.3) aliases.push(`${word()} ${names.at(-1)}`)
  const year = 1940 + Math.floor(random() * 60)
  return {
    list_ref: String(100_000 + i), kind: individual ? 'individual' : 'entity',
    names: [primary, ...aliases],
    dates_of_birth: individual ? [{ date: `${year}-03-14`, year_from: year, year_to: year }] : [],
    documents: individual && random() < 0.5
      ? [{ type: 'Passport', number: `P${Math.floor(random() * 1e8)}`, country: null }] : [],
    programs: ['BENCH'],
  }
}

const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

/** The entries as OFAC's SDN XML (each name as its lastName, as OFAC writes entities). */
function sdnXml(entries: ListEntry[]): string {
  const parts = ['<?xml version="1.0" standalone="yes"?>\n<sdnList ' +
    'xmlns="http://tempuri.org/sdnList.xsd"><publshInformation><Publish_Date>12/01/2026' +
    `</Publish_Date><Record_Count>${entries.length}</Record_Count></publshInformation>`]
  for (const e of entries) {
    const akas = e.names.slice(1).map((n, i) => `<aka><uid>${i}</uid><type>a.k.a.</type>` +
      `<category>strong</category><lastName>${xmlText(n)}</lastName></aka>`).join('')
    const ids = e.documents.map((d) => `<id><uid>1</uid><idType>${d.type}</idType>` +
      `<idNumber>${d.number}</idNumber></id>`).join('')
    const dobs = e.dates_of_birth.map((d) => `<dateOfBirthItem><uid>1</uid><dateOfBirth>14 Mar ` +
      `${d.year_from}</dateOfBirth><mainEntry>true</mainEntry></dateOfBirthItem>`).join('')
    parts.push(`<sdnEntry><uid>${e.list_ref}</uid><lastName>${xmlText(e.names[0]!)}</lastName>` +
      `<sdnType>${e.kind === 'individual' ? 'Individual' : 'Entity'}</sdnType>` +
      `<programList><program>BENCH</program></programList><idList>${ids}</idList>` +
      `<akaList>${akas}</akaList><dateOfBirthList>${dobs}</dateOfBirthList></sdnEntry>`)
  }
  parts.push('</sdnList>\n')
  return parts.join('\n')
}

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
  const entries = Array.from({ length: entryCount }, (_, i) => entry(i))
  const file = Buffer.from(sdnXml(entries))
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
  await throughService(file, asked)
}

/** The load and the screenings through ScreeningService on a fresh PostgreSQL database. */
async function throughService(file: Buffer, asked: ReturnType<typeof queries>): Promise<void> {
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
    for (const q of asked) await service.screen(q)
    let hits = 0
    const screened: number[] = []
    for (const q of asked) {
      const started = performance.now()
      hits += (await service.screen(q)).length > 0 ? 1 : 0
      screened.push(performance.now() - started)
    }
    console.log(JSON.stringify({ phase: 'screen_service', queries: queryCount,
      queries_with_hits: hits, ...percentiles(screened) }))
  } finally {
    await handle.close()
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

await main()
