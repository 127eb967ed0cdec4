import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, before, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { arrayLiteral, arrayParameter, binaryArray, columnValues, unnestRows, type PgType } from '../../src/db/speed/arrays.ts'
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { storage } from '../support/harness.ts'
import { leasePglite, leasePostgresDatabase, type Lease } from '../support/store-pool.ts'

// Set-based writes pass each column as one array parameter (arrayParameter): to a
// PostgreSQL server in its binary array format (binaryArray, sent by the pool in
// prepared.ts), to PGlite as the text of an array literal (arrayLiteral). Whatever a value
// holds, the database must read back exactly that value, both ways: quotes, backslashes,
// braces, commas, the word NULL, empty text, spaces at either end, line breaks, non-ASCII,
// and NULL itself. Each test below runs with the literal text and with the parameter.

let handle: DatabaseHandle<Database>
let lease: Lease<unknown>
let db: Kysely<any>

before(async () => {
  if (storage === 'postgres') {
    const leased = await leasePostgresDatabase()
    lease = leased
    handle = await openDatabase<Database>({ databaseUrl: leased.store.url, pgliteDir: 'memory://', poolMax: 2, migrations })
  } else {
    const leased = await leasePglite()
    lease = leased
    handle = await openDatabase<Database>({ pglite: leased.store, pgliteDir: 'memory://', poolMax: 1, migrations })
  }
  db = handle.db
})

after(async () => {
  await handle?.close()
  await lease?.release()
})

type Encoding = 'literal' | 'parameter'
const encodings: Encoding[] = ['literal', 'parameter']

function encode(values: unknown[], type: PgType, encoding: Encoding) {
  return encoding === 'literal' ? arrayLiteral(values) : arrayParameter(type, values)
}

/** The values as the database reads them back from the literal or the parameter, cast to `type`. */
async function readBack(values: unknown[], type: PgType,
    encoding: Encoding): Promise<Array<string | null>> {
  const { rows } = await sql<{ v: string | null }>`
    select v::text as v from unnest(${encode(values, type, encoding)}::${sql.raw(type)}[]) with ordinality as u(v, n) order by n`.execute(db)
  return rows.map((r) => r.v)
}

for (const encoding of encodings) {
  test(`array ${encoding} - every text comes back exactly, NULL only from null`, async () => {
    const texts = [
      '', ' ', '  padded  ', 'plain', 'NULL', 'null', '"', '""', '\\', '\\\\', '\\"', 'a"b\\c', '{',
        '}', '{a,b}', ',', 'a,b',
      "it's", 'line\nbreak', 'tab\there', 'carriage\rreturn', 'Zoë • 日本 🏦', '\u00a0nbsp', '$1',
        'x::text',
      // Longer texts take another path in the binary form (the engine's encoder, not byte by byte).
      'a'.repeat(16), 'b'.repeat(17), 'f'.repeat(64), `${'x'.repeat(20)}é${'y'.repeat(20)}`,
        `${'日本'.repeat(30)}🏦`, 'a"b\\c'.repeat(10),
    ]
    assert.deepEqual(await readBack([...texts, null, undefined], 'text', encoding),
      [...texts, null, null])
  })

  test(`array ${encoding} - numbers, big integers and uuids come back as themselves`, async () => {
    const big = [0n, 1n, -1n, 9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n, 100n]
    assert.deepEqual(await readBack([...big, null], 'bigint', encoding), [...big.map(String), null])
    assert.deepEqual(await readBack([0, 42, -7, Number.MAX_SAFE_INTEGER], 'bigint', encoding),
      ['0', '42', '-7', String(Number.MAX_SAFE_INTEGER)])
    const uuids = ['00000000-0000-0000-0000-000000000000', 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
      'ffffffff-ffff-7fff-bfff-ffffffffffff']
    assert.deepEqual(await readBack([...uuids, null], 'uuid', encoding), [...uuids, null])
    // Upper-case hex is the same uuid, read back in lower case.
    assert.deepEqual(await readBack(['F47AC10B-58CC-4372-A567-0E02B2C3D479'], 'uuid', encoding),
      ['f47ac10b-58cc-4372-a567-0e02b2c3d479'])
  })

  test(`array ${encoding} - times keep their millisecond, repeated or not`, async () => {
    const a = new Date('2026-11-23T04:05:06.789Z')
    const same = new Date(a.getTime())
    const b = new Date('1999-12-31T23:59:59.000Z')
    const c = new Date('1970-01-01T00:00:00.001Z')
    const times = [a, a, same, b, null, c, a]
    const { rows } = await sql<{ ms: string | null }>`
      select (extract(epoch from v) * 1000)::bigint::text as ms
      from unnest(${encode(times, 'timestamptz', encoding)}::timestamptz[]) with ordinality as u(v, n) order by n`.execute(db)
    assert.deepEqual(
      rows.map((r) => r.ms),
      times.map((d) => (d === null ? null : String(d.getTime()))),
    )
  })

  test(`array ${encoding} - an empty array is empty, and all-NULL is all NULL`, async () => {
    for (const type of ['uuid', 'text', 'bigint', 'timestamptz'] as const) {
      assert.deepEqual(await readBack([], type, encoding), [])
      assert.deepEqual(await readBack([null, null], type, encoding), [null, null])
    }
  })

  test(`array ${encoding} - a bad value fails its cast and is not read as another`, async () => {
    // A number where a uuid belongs, or text where a big integer belongs, is refused by the cast.
    await assert.rejects(readBack(['not-a-uuid'], 'uuid', encoding),
      (e: { code?: string }) => e.code === '22P02')
    await assert.rejects(readBack(['f47ac10b-58cc-4372-a567-0e02b2c3d4'], 'uuid', encoding),
      (e: { code?: string }) => e.code === '22P02')
    await assert.rejects(readBack(['g47ac10b-58cc-4372-a567-0e02b2c3d479'], 'uuid', encoding),
      (e: { code?: string }) => e.code === '22P02')
    await assert.rejects(readBack(['1,2'], 'bigint', encoding), (e: { code?: string }) => e.code
      === '22P02')
    await assert.rejects(readBack([1.5], 'bigint', encoding), (e: { code?: string }) => e.code
      === '22P02')
    // Beyond a bigint: refused by the database as out of range, not by the encoder.
    await assert.rejects(readBack([2n ** 63n], 'bigint', encoding),
      (e: { code?: string }) => e.code === '22003')
    await assert.rejects(readBack([-(2n ** 63n) - 1n], 'bigint', encoding),
      (e: { code?: string }) => e.code === '22003')
  })
}

test('array parameter - the binary form is made for the values each type takes, and declined for others (sent as text)', () => {
  assert.ok(binaryArray(arrayParameter('uuid', ['f47ac10b-58cc-4372-a567-0e02b2c3d479', null])))
  assert.ok(binaryArray(arrayParameter('bigint', [1n, 2, null])))
  assert.ok(binaryArray(arrayParameter('timestamptz', [new Date(0), null])))
  assert.ok(binaryArray(arrayParameter('text', ['a', '', null])))
  assert.equal(binaryArray(arrayParameter('uuid', ['not-a-uuid'])), undefined)
  assert.equal(binaryArray(arrayParameter('uuid', ['g47ac10b-58cc-4372-a567-0e02b2c3d479'])),
    undefined, 'a letter that is not hex')
  assert.equal(binaryArray(arrayParameter('uuid', ['f47ac10b58cc-4372-a567-0e02b2c3d4790'])),
    undefined, 'a dash out of place')
  assert.equal(binaryArray(arrayParameter('uuid', ['f47ac10b-58cc-4372-a567-0e02b2c3d47é'])),
    undefined, 'a character beyond ASCII')
  assert.equal(binaryArray(arrayParameter('bigint', [1.5])), undefined)
  assert.equal(binaryArray(arrayParameter('bigint', ['12'])), undefined)
  assert.equal(binaryArray(arrayParameter('bigint', [2n ** 63n])), undefined, 'beyond a bigint')
  assert.equal(binaryArray(arrayParameter('timestamptz', ['2026-01-01T00:00:00Z'])), undefined)
  assert.equal(binaryArray(arrayParameter('timestamptz', [new Date(Number.NaN)])), undefined)
  assert.equal(binaryArray(arrayParameter('text', [5])), undefined)
  // One uuid element: 20 bytes of header, its length and 16 bytes.
  const one = binaryArray(arrayParameter('uuid', ['00000000-0000-0000-0000-0000000000ff']))!
  assert.equal(one.length, 20 + 4 + 16)
  assert.equal(one.readUInt32BE(8), 2950)
  assert.equal(one[one.length - 1], 0xff)
})

test('array parameter - a uuid is written as its 16 bytes whatever its digits and their case, and refused for any one bad digit', () => {
  // Every digit value in every place, in both cases: 16 uuids whose digits all differ.
  const texts: string[] = []
  for (let shift = 0; shift < 16; shift++) {
    const digits = Array.from({ length: 32 }, (_, i) => ((i + shift) % 16).toString(16)).join('')
    const text = [digits.slice(0, 8), digits.slice(8, 12), digits.slice(12, 16),
      digits.slice(16, 20), digits.slice(20)].join('-')
    texts.push(shift % 2 ? text.toUpperCase() : text)
  }
  const encoded = binaryArray(arrayParameter('uuid', texts))!
  texts.forEach((text, i) => {
    const at = 20 + i * 20
    assert.equal(encoded.readInt32BE(at), 16)
    assert.deepEqual(encoded.subarray(at + 4, at + 20), Buffer.from(text.replaceAll('-', ''),
      'hex'), text)
  })
  // One character that is not a hex digit, in any of the 32 places, refuses the whole column.
  const good = texts[0]!
  for (let i = 0; i < 36; i++) {
    if (good[i] === '-') continue
    for (const bad of ['g', 'G', '-', ' ', '/', ':', '@', '`', 'é', '\u0100']) {
      const text = good.slice(0, i) + bad + good.slice(i + 1)
      assert.equal(binaryArray(arrayParameter('uuid', [good, text])), undefined,
        JSON.stringify(text))
    }
  }
})

test('array literal - unnestRows lines columns up row by row', async () => {
  const rows = [
    { id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', name: 'a,"b"', n: 5n },
    { id: '00000000-0000-0000-0000-000000000000', name: null, n: -3n },
    { id: '11111111-1111-1111-1111-111111111111', name: '\\}', n: null },
  ]
  const { rows: back } = await sql<{ id: string; name: string | null; n: string | null }>`
    select v.id::text as id, v.name, v.n::text as n from ${unnestRows(rows, [['id', 'uuid'], ['name', 'text'], ['n', 'bigint']])}`.execute(db)
  assert.deepEqual(back,
    rows.map((r) => ({ id: r.id, name: r.name, n: r.n === null ? null : String(r.n) })))
})

test('array literal - a column list used again reads its rows the same, through its compiled extractor', async () => {
  const columns: Array<['id' | 'name' | 'n', PgType]> = [['id', 'uuid'], ['name', 'text'],
    ['n', 'bigint']]
  const first = [
    { id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', name: 'x', n: 1n },
    { id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', name: null, n: null },
  ]
  const second = [
    { id: '11111111-1111-1111-1111-111111111111', name: 'y', n: 2n, extra: 'not a column' },
    { id: '22222222-2222-2222-2222-222222222222', n: 3n } as {
      id: string; name?: string; n: bigint },
    { id: '11111111-1111-1111-1111-111111111111', name: '', n: -4n },
  ]
  const naive = (rows: object[]) => columns.map(
    ([name]) => rows.map((row) => (row as Record<string, unknown>)[name]))
  // The first use reads them plainly, the second and later through the compiled extractor.
  assert.deepEqual(columnValues(first, columns), naive(first))
  assert.deepEqual(columnValues(second, columns), naive(second))
  assert.deepEqual(columnValues(first, columns), naive(first))
  assert.deepEqual(columnValues([], columns), [[], [], []])
  // A name that is not a plain identifier is read plainly, however often its list is used.
  const odd: Array<[string, PgType]> = [['odd-name', 'text'], ['id', 'uuid']]
  const oddRows = [{ 'odd-name': 'a', id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' }]
  for (let i = 0; i < 3; i++) assert.deepEqual(columnValues(oddRows, odd),
    [['a'], ['f47ac10b-58cc-4372-a567-0e02b2c3d479']])
  // And what the database reads back through the compiled path: a repeated uuid (copied
  // from the element before it in the binary format), a missing field as NULL.
  const { rows: back } = await sql<{ id: string; name: string | null; n: string | null }>`
    select v.id::text as id, v.name, v.n::text as n from ${unnestRows(second, columns)}`.execute(db)
  assert.deepEqual(back, [
    { id: '11111111-1111-1111-1111-111111111111', name: 'y', n: '2' },
    { id: '22222222-2222-2222-2222-222222222222', name: null, n: '3' },
    { id: '11111111-1111-1111-1111-111111111111', name: '', n: '-4' },
  ])
})

test('array literal - a uuid equal to an earlier one of its column is written as that one was', () => {
  const a = 'f47ac10b-58cc-4372-a567-0e02b2c3d479'
  const b = '00000000-0000-0000-0000-0000000000ff'
  const values = [a, a, null, a, b, b, a]
  const encoded = binaryArray(arrayParameter('uuid', values))!
  const one = (value: string | null) => binaryArray(arrayParameter('uuid', [value]))!.subarray(20)
  assert.deepEqual(encoded.subarray(20), Buffer.concat(values.map(one)))
  // Equal text in another string object is still the same uuid.
  const copy = [...a].join('')
  assert.deepEqual(binaryArray(arrayParameter('uuid', [a, copy])),
    binaryArray(arrayParameter('uuid', [a, a])))
})

test('array literal - where the process may not compile code, a column list used again is read the plain way', async () => {
  // --disallow-code-generation-from-strings makes `new Function` throw: the extractor falls back.
  const bulk = fileURLToPath(new URL('../../src/db/speed/arrays.ts', import.meta.url))
  const script = `
    const { columnValues } = await import(${JSON.stringify(bulk)})
    const columns = [['id', 'uuid'], ['n', 'bigint']]
    const rows = [{ id: 'a', n: 1 }, { id: 'b', n: 2 }]
    const seen = [1, 2, 3].map(() => JSON.stringify(columnValues(rows, columns)))
    process.stdout.write(JSON.stringify(seen))`
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e',
      script],
    { cwd: fileURLToPath(new URL('../..', import.meta.url)) },
  )
  assert.deepEqual(JSON.parse(stdout), Array(3).fill('[["a","b"],[1,2]]'))
})
