import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { arrayLiteral, unnestRows, type PgType } from '../../src/db/bulk.ts'
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts'
import { storage } from '../support/harness.ts'
import { leasePglite, leasePostgresDatabase, type Lease } from '../support/store-pool.ts'

// Set-based writes pass each column as the text of one array literal (arrayLiteral), which
// the database reads back with its own array parser. Whatever a value holds, the database
// must read back exactly that value: quotes, backslashes, braces, commas, the word NULL,
// empty text, spaces at either end, line breaks, non-ASCII, and NULL itself.

let handle: DatabaseHandle
let lease: Lease<unknown>
let db: Kysely<any>

before(async () => {
  if (storage === 'postgres') {
    const leased = await leasePostgresDatabase()
    lease = leased
    handle = await openDatabase({ databaseUrl: leased.store.url, pgliteDir: 'memory://', poolMax: 2 })
  } else {
    const leased = await leasePglite()
    lease = leased
    handle = await openDatabase({ pglite: leased.store, pgliteDir: 'memory://', poolMax: 1 })
  }
  db = handle.db
})

after(async () => {
  await handle?.close()
  await lease?.release()
})

/** The values as the database reads them back from the literal, cast to `type`. */
async function readBack(values: unknown[], type: PgType): Promise<Array<string | null>> {
  const { rows } = await sql<{ v: string | null }>`
    select v::text as v from unnest(${arrayLiteral(values)}::${sql.raw(type)}[]) with ordinality as u(v, n) order by n`.execute(db)
  return rows.map((r) => r.v)
}

test('array literal - every text comes back exactly, NULL only from null', async () => {
  const texts = [
    '', ' ', '  padded  ', 'plain', 'NULL', 'null', '"', '""', '\\', '\\\\', '\\"', 'a"b\\c', '{', '}', '{a,b}', ',', 'a,b',
    "it's", 'line\nbreak', 'tab\there', 'carriage\rreturn', 'Zoë • 日本 🏦', '\u00a0nbsp', '$1', 'x::text',
  ]
  assert.deepEqual(await readBack([...texts, null, undefined], 'text'), [...texts, null, null])
})

test('array literal - numbers, big integers and uuids come back as themselves', async () => {
  const big = [0n, 1n, -1n, 9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n, 100n]
  assert.deepEqual(await readBack([...big, null], 'bigint'), [...big.map(String), null])
  assert.deepEqual(await readBack([0, 42, -7], 'bigint'), ['0', '42', '-7'])
  const uuids = ['00000000-0000-0000-0000-000000000000', 'f47ac10b-58cc-4372-a567-0e02b2c3d479']
  assert.deepEqual(await readBack([...uuids, null], 'uuid'), [...uuids, null])
})

test('array literal - times keep their millisecond, repeated or not', async () => {
  const a = new Date('2026-11-23T04:05:06.789Z')
  const same = new Date(a.getTime())
  const b = new Date('1999-12-31T23:59:59.000Z')
  const { rows } = await sql<{ ms: string | null }>`
    select (extract(epoch from v) * 1000)::bigint::text as ms
    from unnest(${arrayLiteral([a, a, same, b, null, a])}::timestamptz[]) with ordinality as u(v, n) order by n`.execute(db)
  assert.deepEqual(
    rows.map((r) => r.ms),
    [a, a, same, b, null, a].map((d) => (d === null ? null : String(d.getTime()))),
  )
})

test('array literal - a bad value fails its cast and is not read as another', async () => {
  // A number where a uuid belongs, or text where a big integer belongs, is refused by the cast.
  await assert.rejects(readBack(['not-a-uuid'], 'uuid'), (e: { code?: string }) => e.code === '22P02')
  await assert.rejects(readBack(['1,2'], 'bigint'), (e: { code?: string }) => e.code === '22P02')
})

test('array literal - unnestRows lines columns up row by row', async () => {
  const rows = [
    { id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', name: 'a,"b"', n: 5n },
    { id: '00000000-0000-0000-0000-000000000000', name: null, n: -3n },
    { id: '11111111-1111-1111-1111-111111111111', name: '\\}', n: null },
  ]
  const { rows: back } = await sql<{ id: string; name: string | null; n: string | null }>`
    select v.id::text as id, v.name, v.n::text as n from ${unnestRows(rows, [['id', 'uuid'], ['name', 'text'], ['n', 'bigint']])}`.execute(db)
  assert.deepEqual(back, rows.map((r) => ({ id: r.id, name: r.name, n: r.n === null ? null : String(r.n) })))
})
