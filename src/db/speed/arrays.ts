import { sql, type Kysely, type RawBuilder } from 'kysely'

// Set-based writes with one array parameter per column (`unnest`): PostgreSQL parses and
// plans a statement of a few parameters instead of one with thousands, which is what lets
// a batch of hundreds of rows cost little more than one. Each column is an ArrayParameter,
// which each back end's driver sends its own way: node-postgres in PostgreSQL's binary
// array format (its toPostgres hook), which the server reads without parsing text (array_in
// was a tenth of PostgreSQL's time on the payment path), and PGlite as the text of an array
// literal (pglite-dialect.ts). The casts in the statement give each its type.

export type PgType = 'uuid' | 'text' | 'bigint' | 'timestamptz'

export type ColumnTypes<Row> = { [K in keyof Row]?: PgType }

/** Whether a text must be written with backslash escapes inside an array literal's quotes. */
const needsEscape = /[\\"]/

/**
 * One column as an array literal (`{…}`), the text PostgreSQL's `array_in` reads. Building
 * it here instead of handing `pg` an array of texts costs about a third as much: `pg`
 * escapes every element with two regular expressions and quotes it, where numbers and
 * times need neither. Strings are always quoted (an empty string, `NULL` or a comma is
 * then data, never syntax); a time equal to the row before's (a batch's rows share one
 * `now`) is turned into text once.
 */
export function arrayLiteral(values: unknown[]): string {
  let literal = '{'
  let lastTime = Number.NaN
  let lastTimeText = ''
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ','
    const value = values[i]
    if (value === null || value === undefined) literal += 'NULL'
    else if (typeof value === 'bigint' || typeof value === 'number') literal += String(value)
    else if (value instanceof Date) {
      const time = value.getTime()
      if (time !== lastTime) {
        lastTime = time
        lastTimeText = value.toISOString()
      }
      literal += lastTimeText
    } else {
      const text = String(value)
      literal += needsEscape.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`
    }
  }
  return `${literal}}`
}

/**
 * One array parameter of a statement: its elements' type and values. Each driver turns it
 * into what its back end reads fastest (binaryArray, arrayLiteral); the statement casts it
 * (`::uuid[]`, …) to the same type.
 */
export class ArrayParameter {
  constructor(
    readonly type: PgType,
    readonly values: readonly unknown[],
  ) {}

  /**
   * node-postgres's hook for a parameter of its own type: a Buffer goes out as a binary
   * parameter, a string as text. Every pg pool sends it so, the bank's and any other.
   */
  toPostgres(): Buffer | string {
    return binaryArray(this) ?? arrayText(this)
  }
}

/**
 * The values as one array parameter of the given element type (cast it in the statement to
 * `type[]`).
 */
export function arrayParameter(type: PgType, values: readonly unknown[]): ArrayParameter {
  return new ArrayParameter(type, values)
}

/**
 * `unnest($1::t1[], $2::t2[], …) as v(c1, c2, …)` over the rows' columns, one array parameter per
 * column.
 */
export function unnestRows<Row extends object>(
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
  alias = 'v',
): RawBuilder<unknown> {
  const values = columnValues(rows, columns)
  const parameters = columns.map(([, type], i) => new ArrayParameter(type, values[i]!))
  return sql(unnestFragments(columns, alias), ...parameters)
}

type ColumnList = ReadonlyArray<readonly [string, PgType]>
type Extractor = (rows: readonly object[]) => unknown[][]

/** How often each column list was used, and its compiled extractor once it is used again. */
const extractors = new WeakMap<ColumnList, { uses: number; extract?: Extractor }>()
const plainName = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Each column's values, in row order. A column list used more than once (the ledger's
 * tables' lists are module constants, used by every batch) gets an extractor compiled for
 * it, which reads each row's fields by their names as written in code: a loop reading
 * `row[name]` with the name in a variable goes through V8's megamorphic lookup for every
 * value (about 70 µs for a batch of 96 transaction rows, against 8 µs compiled). A list
 * made for one statement is read the plain way, as is any whose names are not plain
 * identifiers (none is; they are this code's own column names).
 */
export function columnValues(rows: readonly object[], columns: ColumnList): unknown[][] {
  let entry = extractors.get(columns)
  if (!entry) {
    entry = { uses: 0 }
    extractors.set(columns, entry)
  }
  entry.uses++
  if (!entry.extract && entry.uses === 2
    && columns.every(([name]) => plainName.test(name))) entry.extract = compileExtractor(columns)
  if (entry.extract) return entry.extract(rows)
  return plainValues(rows, columns)
}

function plainValues(rows: readonly object[], columns: ColumnList): unknown[][] {
  return columns.map(([name]) => rows.map((row) => (row as Record<string, unknown>)[name]))
}

/**
 * The compiled extractor; the plain reading where the process may not compile code
 * (--disallow-code-generation-from-strings).
 */
function compileExtractor(columns: ColumnList): Extractor {
  const arrays = columns.map((_, i) => `const c${i} = new Array(n)`).join('\n')
  const reads = columns.map(([name], i) => `c${i}[i] = row.${name}`).join('\n')
  const body = `const n = rows.length\n${arrays}\nfor (let i = 0; i < n; i++) {\nconst row = ` +
    `rows[i]\n${reads}\n}\nreturn [${columns.map((_, i) => `c${i}`).join(', ')}]`
  try {
    return new Function('rows', body) as Extractor
  } catch {
    return (rows) => plainValues(rows, columns)
  }
}

// PostgreSQL's binary array format (array_send / array_recv): the number of dimensions, a
// has-nulls flag, the element type's oid, each dimension's length and lower bound, then each
// element as its length (-1 for NULL) and its binary form.
const element_oid: Record<PgType, number> = { uuid: 2950, text: 25, bigint: 20, timestamptz: 1184 }
/** 2000-01-01T00:00:00Z, PostgreSQL's epoch for binary times (microseconds since it). */
const pg_epoch_ms = 946_684_800_000

/**
 * The parameter in PostgreSQL's binary array format, for a driver that sends binary
 * parameters (node-postgres sends a Buffer so); undefined when an element is not of the
 * JavaScript kind its type takes (a uuid string, a bigint or integer, a string, a Date), so
 * that the caller sends the text literal instead and PostgreSQL judges it as it would have.
 */
export function binaryArray(parameter: ArrayParameter): Buffer | undefined {
  const { type, values } = parameter
  const count = values.length
  if (count === 0) return emptyArray(type)
  const sized = arraySize(type, values)
  if (!sized) return undefined
  const { size, hasNull } = sized
  const buffer = Buffer.allocUnsafe(size)
  // A DataView's setters are the engine's own (inlined by the optimizer); Buffer's
  // writeInt32BE checks its arguments in JavaScript at every call.
  const view = new DataView(buffer.buffer, buffer.byteOffset, size)
  view.setInt32(0, 1)
  view.setInt32(4, hasNull)
  view.setUint32(8, element_oid[type])
  view.setInt32(12, count)
  view.setInt32(16, 1)
  const end = writeElements(type, values, buffer, view)
  return end === undefined ? undefined : buffer.subarray(0, end)
}

/** No dimensions: PostgreSQL's empty array. */
function emptyArray(type: PgType): Buffer {
  const empty = Buffer.allocUnsafe(12)
  empty.writeInt32BE(0, 0)
  empty.writeInt32BE(0, 4)
  empty.writeUInt32BE(element_oid[type], 8)
  return empty
}

/**
 * The most bytes the array takes, and whether it holds a NULL; undefined when an element is
 * not of its type's kind. One pass per type (the type is the same for every element).
 */
function arraySize(type: PgType, values: readonly unknown[]) {
  let size = 20
  let hasNull = 0
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (value === null || value === undefined) {
      hasNull = 1
      size += 4
    } else if (!fits(type, value)) return undefined
    else size += type === 'text' ? 4 + 3 * (value as string).length : type === 'uuid' ? 20 : 12
  }
  return { size, hasNull }
}

/** Writes each element after the header; the end of what was written (undefined: a bad uuid). */
function writeElements(type: PgType, values: readonly unknown[], buffer: Buffer,
    view: DataView): number | undefined {
  let at = 20
  let lastTime = Number.NaN
  let lastMicros = 0
  // A value equal to an earlier one of the column (a batch's rows share their partner, a
  // payment's rows their account) is copied from where that one was written.
  let lastValue: unknown
  let lastAt = 0
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (value === null || value === undefined) {
      view.setInt32(at, -1)
      at += 4
      continue
    }
    switch (type) {
      case 'uuid':
        view.setInt32(at, 16)
        if (value === lastValue) buffer.copyWithin(at + 4, lastAt, lastAt + 16)
        else if (!writeUuid(buffer, at + 4, value as string)) return undefined
        lastValue = value
        lastAt = at + 4
        at += 20
        break
      case 'bigint':
        view.setInt32(at, 8)
        if (typeof value === 'bigint') view.setBigInt64(at + 4, value)
        else writeInt64(view, at + 4, value as number)
        at += 12
        break
      case 'timestamptz': {
        // A batch's rows share one time: converted once. Microseconds since 2000 stay far
        // below 2^53 for any date a Date holds that PostgreSQL takes.
        const time = (value as Date).getTime()
        if (time !== lastTime) {
          lastTime = time
          lastMicros = (time - pg_epoch_ms) * 1000
        }
        view.setInt32(at, 8)
        writeInt64(view, at + 4, lastMicros)
        at += 12
        break
      }
      case 'text':
        at = writeText(buffer, view, at, value as string)
        break
    }
  }
  return at
}

/** A text element (its length, then its UTF-8) at `at`; returns where the next one starts. */
function writeText(buffer: Buffer, view: DataView, at: number, text: string): number {
  const start = at + 4
  let written = 0
  if (text.length > short_text) written = buffer.write(text, start, 'utf8')
  else {
    // A short text byte by byte while it is ASCII (cheaper than a call to the encoder);
    // anything else through the UTF-8 encoder.
    for (; written < text.length; written++) {
      const code = text.charCodeAt(written)
      if (code > 0x7f) break
      buffer[start + written] = code
    }
    if (written < text.length) written = buffer.write(text, start, 'utf8')
  }
  view.setInt32(at, written)
  return at + 4 + written
}

/** Longer texts (a 64-digit hash) are copied by the engine's encoder, not byte by byte. */
const short_text = 16

/**
 * Whether a non-null element is of the JavaScript kind its type takes (uuid digits are checked as
 * they are written).
 */
function fits(type: PgType, value: unknown): boolean {
  switch (type) {
    case 'uuid':
      return typeof value === 'string' && value.length === 36
    case 'bigint':
      return typeof value === 'bigint' ? value >= min_int64 && value <= max_int64
        : typeof value === 'number' && Number.isSafeInteger(value)
    case 'timestamptz':
      return value instanceof Date && !Number.isNaN(value.getTime())
    case 'text':
      return typeof value === 'string'
  }
}

const min_int64 = -(2n ** 63n)
const max_int64 = 2n ** 63n - 1n
const two32 = 4_294_967_296

/** A safe integer as a big-endian int64 (two's complement through the high word's sign). */
function writeInt64(view: DataView, at: number, value: number): void {
  const high = Math.floor(value / two32)
  view.setInt32(at, high)
  view.setUint32(at + 4, value - high * two32)
}

/** Each hex digit's value by its character code (-1: not a hex digit). */
const nibble = new Int8Array(128).fill(-1)
for (const [i, digit] of [...'0123456789abcdef'].entries()) {
  nibble[digit.charCodeAt(0)] = i
  nibble[digit.toUpperCase().charCodeAt(0)] = i
}
/** Where each of a uuid's 16 bytes' two digits start in its text (the dashes skipped). */
const uuidDigitAt = new Uint8Array([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34])

/**
 * A uuid's 16 bytes from its 36-character text; false when it is not a uuid's text. (Each
 * byte looked up as a digit pair in a table of 16,384 entries, with a test for a dash
 * before each pair, cost twice as much as two nibbles at fixed places: docs/performance.md.)
 */
function writeUuid(buffer: Buffer, at: number, text: string): boolean {
  if (text.charCodeAt(8) !== 45 || text.charCodeAt(13) !== 45 || text.charCodeAt(18) !== 45
    || text.charCodeAt(23) !== 45) return false
  // Any digit that is not hex makes `bad` negative (a code beyond ASCII reads as -1 too).
  let bad = 0
  for (let byte = 0; byte < 16; byte++) {
    const i = uuidDigitAt[byte]!
    const high = text.charCodeAt(i)
    const low = text.charCodeAt(i + 1)
    const h = high < 128 ? nibble[high]! : -1
    const l = low < 128 ? nibble[low]! : -1
    bad |= h | l
    buffer[at + byte] = (h << 4) | l
  }
  return bad >= 0
}

/** The parameter as the text of an array literal (for PGlite, or when binaryArray declines). */
export function arrayText(parameter: ArrayParameter): string {
  return arrayLiteral(parameter.values as unknown[])
}

/**
 * The text around the parameters of unnestRows: one fragment list for the whole `unnest`,
 * so that Kysely builds and compiles one node per column instead of four. Column names are
 * this code's own, quoted as `sql.ref` would.
 */
function unnestFragments(columns: ReadonlyArray<[string, PgType]>,
    alias: string): TemplateStringsArray {
  const names = columns.map(([name]) => `"${name}"`).join(', ')
  const texts = ['unnest(', ...columns.map(
    ([, type], i) => `::${type}[]${i < columns.length - 1 ? ', ' : `) as ${alias}(${names})`}`)]
  return Object.assign(texts, { raw: texts })
}

/** Each column list's `insert into "table" ("c1", "c2", …) select * from ` head, by table. */
const insertHeads = new WeakMap<ColumnList, Map<string, RawBuilder<unknown>>>()

/**
 * The statement `INSERT INTO table (columns) SELECT * FROM unnest(...)`, to run or to put in
 * a WITH. Its head (the table and column names) is made once per column list and table: as
 * one raw fragment, quoted as `sql.table` and `sql.ref` would, so that Kysely compiles one
 * node where it compiled one per column (27 for a transaction row), about 45 µs less per
 * ledger batch; names that are not plain identifiers (none is) through Kysely's own quoting.
 */
export function insertUnnestStatement<Row extends object>(
  table: string,
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
): RawBuilder<unknown> {
  let heads = insertHeads.get(columns)
  if (!heads) {
    heads = new Map()
    insertHeads.set(columns, heads)
  }
  let head = heads.get(table)
  if (!head) {
    head =
      plainName.test(table) && columns.every(([name]) => plainName.test(name))
        ? sql.raw(`insert into "${table}" (${columns.map(([name]) => `"${name}"`).join(', ')})\n    select * from `)
        : sql`insert into ${sql.table(table)} (${sql.join(columns.map(([name]) => sql.ref(name)))})\n    select * from `
    heads.set(table, head)
  }
  return sql`${head}${unnestRows(rows, columns)}`
}

/** INSERT INTO table (columns) SELECT * FROM unnest(...). */
export async function insertUnnest<DB, Row extends object>(
  executor: Kysely<DB>,
  table: keyof DB & string,
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
): Promise<void> {
  if (rows.length === 0) return
  await insertUnnestStatement(table, rows, columns).execute(executor)
}
