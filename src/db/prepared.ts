import { sql, type PostgresPool, type PostgresPoolClient, type RawBuilder } from 'kysely'
import type pg from 'pg'

// Prepared statements for the ledger's busiest statements. PostgreSQL parses and plans
// an unnamed statement every time it runs; a named one is parsed once per connection and
// its plan is kept (PostgreSQL re-plans by itself when a table changes). Only statements
// whose text does not depend on the data are marked: one array parameter per column
// (bulk.ts) keeps a batch's text the same whatever its size, so a connection holds a
// handful of them. Other statements (an `in (...)` list grows with its values) stay unnamed.

const marker = '/* prepared */ '

/** The statement, prepared once per connection on PostgreSQL (on PGlite it is a comment). */
export function prepared<T>(statement: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(marker)}${statement}`
}

/**
 * Wraps a pg pool for Kysely: marked statements go out as named statements, named by
 * their text (one name per distinct text, the same on every connection).
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>()
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  const nameOf = (text: string): string => {
    let name = names.get(text)
    if (name === undefined) {
      name = `bank_${names.size + 1}`
      names.set(text, name)
    }
    return name
  }
  return {
    async connect() {
      const client = await pool.connect()
      let wrapper = wrapped.get(client)
      if (!wrapper) {
        wrapper = {
          query: ((text: string, values: unknown[]) =>
            text.startsWith(marker) ? client.query({ name: nameOf(text), text, values }) : client.query(text, values)) as unknown as PostgresPoolClient['query'],
          release: () => client.release(),
        }
        wrapped.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}
