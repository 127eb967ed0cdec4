import type { ColumnType } from 'kysely'

// Column types that tables of every capability share: how PostgreSQL's types read and
// write through Kysely. Each capability declares its own tables with them.

export type Timestamp = ColumnType<Date, Date | string, Date | string>
export type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
export type Json<T> = ColumnType<T, string, string>
/** int8 columns: pg reads them as strings, PGlite as bigint; `cents()` makes them bigint. */
export type Cents = ColumnType<bigint | string, bigint | string | number, bigint | string | number>
/** An int8 column with a default (or an identity): optional on insert. */
export type GeneratedCents = ColumnType<
  bigint | string,
  bigint | string | number | undefined,
  bigint | string | number
>
