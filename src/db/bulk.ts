import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './schema.ts'

// Set-based writes with one array parameter per column (`unnest`): PostgreSQL parses and
// plans a statement of a few parameters instead of one with thousands, which is what lets
// a batch of hundreds of rows cost little more than one. Each column is passed as the text of
// an array literal, so that pg and PGlite send it alike; the casts give it its type.

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

/** `unnest($1::t1[], $2::t2[], …) as v(c1, c2, …)` over the rows' columns, one array literal per column. */
export function unnestRows<Row extends object>(
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
  alias = 'v',
): RawBuilder<unknown> {
  const literals = columns.map(([name]) => arrayLiteral(rows.map((row) => (row as Record<string, unknown>)[name])))
  return sql(unnestFragments(columns, alias), ...literals)
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
