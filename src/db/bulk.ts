import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './schema.ts'

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

/** The values as one array parameter of the given element type (cast it in the statement to `type[]`). */
export function arrayParameter(type: PgType, values: readonly unknown[]): ArrayParameter {
  return new ArrayParameter(type, values)
}

/** `unnest($1::t1[], $2::t2[], …) as v(c1, c2, …)` over the rows' columns, one array parameter per column. */
export function unnestRows<Row extends object>(
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
  alias = 'v',
): RawBuilder<unknown> {
  const parameters = columns.map(([name, type]) => new ArrayParameter(type, rows.map((row) => (row as Record<string, unknown>)[name])))
  return sql(unnestFragments(columns, alias), ...parameters)
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
  if (values.length === 0) {
    // No dimensions: PostgreSQL's empty array.
    const empty = Buffer.allocUnsafe(12)
    empty.writeInt32BE(0, 0)
    empty.writeInt32BE(0, 4)
    empty.writeUInt32BE(element_oid[type], 8)
    return empty
  }
  let size = 20
  let hasNull = 0
  for (const value of values) {
    if (value === null || value === undefined) {
      hasNull = 1
      size += 4
      continue
    }
    switch (type) {
      case 'uuid':
        // The digits and dashes are checked as they are written (writeUuid).
        if (typeof value !== 'string' || value.length !== 36) return undefined
        size += 4 + 16
        break
      case 'bigint':
        if (typeof value !== 'bigint' && !(typeof value === 'number' && Number.isSafeInteger(value))) return undefined
        size += 4 + 8
        break
      case 'timestamptz':
        if (!(value instanceof Date) || Number.isNaN(value.getTime())) return undefined
        size += 4 + 8
        break
      case 'text':
        if (typeof value !== 'string') return undefined
        // At most 3 bytes of UTF-8 per UTF-16 code unit; the buffer is cut to what was written.
        size += 4 + 3 * value.length
        break
    }
  }
  const buffer = Buffer.allocUnsafe(size)
  buffer.writeInt32BE(1, 0)
  buffer.writeInt32BE(hasNull, 4)
  buffer.writeUInt32BE(element_oid[type], 8)
  buffer.writeInt32BE(values.length, 12)
  buffer.writeInt32BE(1, 16)
  let at = 20
  let lastTime = Number.NaN
  let lastMicros = 0
  for (const value of values) {
    if (value === null || value === undefined) {
      buffer.writeInt32BE(-1, at)
      at += 4
      continue
    }
    switch (type) {
      case 'uuid':
        buffer.writeInt32BE(16, at)
        if (!writeUuid(buffer, at + 4, value as string)) return undefined
        at += 20
        break
      case 'bigint':
        buffer.writeInt32BE(8, at)
        if (typeof value === 'bigint') {
          // Almost every amount and sequence number is a safe integer: written without BigInt arithmetic.
          if (value >= min_safe && value <= max_safe) writeInt64(buffer, at + 4, Number(value))
          else buffer.writeBigInt64BE(value, at + 4)
        } else writeInt64(buffer, at + 4, value as number)
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
        buffer.writeInt32BE(8, at)
        writeInt64(buffer, at + 4, lastMicros)
        at += 12
        break
      }
      case 'text': {
        // ASCII byte by byte (most texts: cheaper than a call to the encoder per element);
        // anything else through the UTF-8 encoder.
        const text = value as string
        const start = at + 4
        let written = 0
        for (; written < text.length; written++) {
          const code = text.charCodeAt(written)
          if (code > 0x7f) break
          buffer[start + written] = code
        }
        if (written < text.length) written = buffer.write(text, start, 'utf8')
        buffer.writeInt32BE(written, at)
        at += 4 + written
        break
      }
    }
  }
  return buffer.subarray(0, at)
}

const min_safe = BigInt(Number.MIN_SAFE_INTEGER)
const max_safe = BigInt(Number.MAX_SAFE_INTEGER)
const two32 = 4_294_967_296

/** A safe integer as a big-endian int64 (two's complement through the high word's sign). */
function writeInt64(buffer: Buffer, at: number, value: number): void {
  const high = Math.floor(value / two32)
  buffer.writeInt32BE(high, at)
  buffer.writeUInt32BE(value - high * two32, at + 4)
}

/** Each hex digit's value by its character code (-1: not a hex digit). */
const hexValue = new Int8Array(128).fill(-1)
for (let i = 0; i < 10; i++) hexValue[48 + i] = i
for (let i = 0; i < 6; i++) {
  hexValue[97 + i] = 10 + i
  hexValue[65 + i] = 10 + i
}

/** A uuid's 16 bytes from its 36-character text; false when it is not a uuid's text. */
function writeUuid(buffer: Buffer, at: number, text: string): boolean {
  if (text.charCodeAt(8) !== 45 || text.charCodeAt(13) !== 45 || text.charCodeAt(18) !== 45 || text.charCodeAt(23) !== 45) return false
  let i = 0
  for (let byte = 0; byte < 16; byte++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) i++
    const high = hexValue[text.charCodeAt(i)] ?? -1
    const low = hexValue[text.charCodeAt(i + 1)] ?? -1
    if (high < 0 || low < 0) return false
    buffer[at + byte] = (high << 4) | low
    i += 2
  }
  return true
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
function unnestFragments(columns: ReadonlyArray<[string, PgType]>, alias: string): TemplateStringsArray {
  const names = columns.map(([name]) => `"${name}"`).join(', ')
  const texts = ['unnest(', ...columns.map(([, type], i) => `::${type}[]${i < columns.length - 1 ? ', ' : `) as ${alias}(${names})`}`)]
  return Object.assign(texts, { raw: texts })
}

/** The statement `INSERT INTO table (columns) SELECT * FROM unnest(...)`, to run or to put in a WITH. */
export function insertUnnestStatement<Row extends object>(
  table: keyof Database & string,
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
): RawBuilder<unknown> {
  return sql`insert into ${sql.table(table)} (${sql.join(columns.map(([name]) => sql.ref(name)))})
    select * from ${unnestRows(rows, columns)}`
}

/** INSERT INTO table (columns) SELECT * FROM unnest(...). */
export async function insertUnnest<Row extends object>(
  executor: Kysely<Database>,
  table: keyof Database & string,
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
): Promise<void> {
  if (rows.length === 0) return
  await insertUnnestStatement(table, rows, columns).execute(executor)
}
