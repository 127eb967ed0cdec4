import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './schema.ts'

// Set-based writes with one array parameter per column (`unnest`): PostgreSQL parses and
// plans a statement of a few parameters instead of one with thousands, which is what lets
// a batch of hundreds of rows cost little more than one. Values are passed as text so that
// pg and PGlite encode them alike; the casts give them their types.

export type PgType = 'uuid' | 'text' | 'bigint' | 'timestamptz'

export type ColumnTypes<Row> = { [K in keyof Row]?: PgType }

function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  return String(value)
}

/** `unnest($1::t1[], $2::t2[], …) as v(c1, c2, …)` over the rows' columns. */
export function unnestRows<Row extends object>(
  rows: Row[],
  columns: Array<[keyof Row & string, PgType]>,
  alias = 'v',
): RawBuilder<unknown> {
  const arrays = columns.map(([name, type]) => sql`${rows.map((row) => asText((row as Record<string, unknown>)[name]))}::${sql.raw(type)}[]`)
  return sql`unnest(${sql.join(arrays)}) as ${sql.raw(alias)}(${sql.join(columns.map(([name]) => sql.ref(name)))})`
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
