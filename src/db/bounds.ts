import { AsyncLocalStorage } from 'node:async_hooks'
import type pg from 'pg'

// Every wait on PostgreSQL is bounded, so that a request whose database is stalled, cut
// off or out of resources gets a reply (503) instead of waiting for the database to return.
// The server bounds what it can see (a statement that runs too long, a lock wait, a session
// left idle inside a transaction); the client bounds what the server cannot report (a
// connection that does not open, a query whose answer never comes because the server is
// paused or the link is cut: without it the wait lasts as long as TCP's retransmissions).
// The settings are BANK_DB_* (src/config.ts); docs/operations.md says what an operator sees.

export interface DatabaseBounds {
  /** PostgreSQL's `statement_timeout`: a statement running longer is cancelled (57014). */
  statement_timeout_ms: number
  /** PostgreSQL's `lock_timeout`: a statement waiting longer for a lock is cancelled (55P03). */
  lock_timeout_ms: number
  /**
   * PostgreSQL's `idle_in_transaction_session_timeout`: a session idle that long inside a
   * transaction (its instance paused or cut off) is ended, and its locks freed.
   */
  idle_in_transaction_timeout_ms: number
  /**
   * Client side: a query unanswered this long (a paused server, a cut link) fails and its
   * connection is closed. Above the statement timeout, so that a slow statement is
   * cancelled by the server first and its connection kept.
   */
  query_timeout_ms: number
  /** Opening a connection, and waiting for one when the pool is full. */
  connect_timeout_ms: number
  /** TCP keepalive: a connection idle this long is probed, so that a dead peer is noticed. */
  keepalive_idle_ms: number
}

/** The defaults of the BANK_DB_* settings (src/config.ts reads them from here). */
export const database_bounds_default: DatabaseBounds = {
  statement_timeout_ms: 5_000,
  lock_timeout_ms: 3_000,
  idle_in_transaction_timeout_ms: 30_000,
  query_timeout_ms: 7_000,
  connect_timeout_ms: 5_000,
  keepalive_idle_ms: 10_000,
}

/** The longest timer Node keeps (a larger one fires at once): "no client-side bound". */
const timer_ms_max = 2_147_483_647

/** Bounds of work that legitimately takes longer than a request's statements; 0: none. */
export interface LongerBounds {
  statement_timeout_ms: number
  /** The pool's own when not given. */
  lock_timeout_ms?: number
}

/** No server-side bound: migrations, which may rewrite a large table and wait for each other. */
export const unbounded: LongerBounds = { statement_timeout_ms: 0, lock_timeout_ms: 0 }

/**
 * `ledger verify` (src/money/money-module.ts): statements over the whole ledger, which grow
 * with its history (at 2 million postings, 3.6 s for the check that every journal balances
 * and 3.3 s to count the journals, on our 2-core machine), and take no locks that payments
 * wait for. Ten minutes, so that a runaway still ends.
 */
export const whole_ledger_bounds: LongerBounds = { statement_timeout_ms: 600_000 }

const scope = new AsyncLocalStorage<LongerBounds>()

/**
 * Runs `fn` with other bounds on every connection it takes from the pool (transactions and
 * single statements alike): set on the connection when it is taken, the pool's own put back
 * when it is released, and the client-side wait stretched to match. On PGlite, which has no
 * pool, it changes nothing.
 */
export function withDatabaseBounds<T>(bounds: LongerBounds, fn: () => Promise<T>): Promise<T> {
  return scope.run(bounds, fn)
}

/** The statement that puts `bounds` in force on a connection, for the rest of its session. */
function setBounds(bounds: Required<LongerBounds>, idleMs?: number): pg.QueryConfig {
  const values = [String(bounds.statement_timeout_ms), String(bounds.lock_timeout_ms)]
  if (idleMs === undefined) {
    return {
      text: `select set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false)`,
      values,
    }
  }
  return {
    text:
      `select set_config('statement_timeout', $1, false), set_config('lock_timeout', $2, false), ` +
      `set_config('idle_in_transaction_session_timeout', $3, false)`,
    values: [...values, String(idleMs)],
  }
}

/** The pg.Pool options that bound the client's waits (keepalive, connecting, answers). */
export function clientBoundOptions(bounds: DatabaseBounds): pg.PoolConfig {
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: bounds.keepalive_idle_ms,
    connectionTimeoutMillis: bounds.connect_timeout_ms,
    query_timeout: bounds.query_timeout_ms,
  }
}

/** The pool's face that the speed layer (speed/prepared.ts) uses. */
export type PoolLike = Pick<pg.Pool, 'connect' | 'end'>

/**
 * The pool with the server-side bounds set on each new connection (one statement, sent
 * ahead of the connection's first query, so it costs no round trip of its own; it works
 * through a pooler in session mode, which refuses them as start-up parameters), and the
 * scope of withDatabaseBounds applied to each connection taken inside one.
 */
export function boundedPool(pool: pg.Pool, bounds: DatabaseBounds): PoolLike {
  const own = setBounds(bounds, bounds.idle_in_transaction_timeout_ms)
  const restore = setBounds(bounds)
  pool.on('connect', (client) => {
    // A failure here is the connection's: the query after it fails too, and says why.
    client.query(own).catch(() => undefined)
  })
  const slack = bounds.query_timeout_ms - bounds.statement_timeout_ms
  const connect = async (): Promise<pg.PoolClient> => {
    const longer = scope.getStore()
    const client = await pool.connect()
    if (!longer) return client
    const queryTimeout =
      longer.statement_timeout_ms === 0
        ? timer_ms_max
        : Math.min(timer_ms_max, longer.statement_timeout_ms + slack)
    const lock = longer.lock_timeout_ms ?? bounds.lock_timeout_ms
    const set = {
      ...setBounds({ statement_timeout_ms: longer.statement_timeout_ms, lock_timeout_ms: lock }),
      query_timeout: queryTimeout,
    } as pg.QueryConfig
    client.query(set).catch(() => undefined)
    return stretched(client, queryTimeout, restore)
  }
  return { connect: connect as PoolLike['connect'], end: () => pool.end() }
}

/** A client whose queries wait up to `queryTimeout`; released, it gets the pool's bounds back. */
function stretched(
  client: pg.PoolClient,
  queryTimeout: number,
  restore: pg.QueryConfig,
): pg.PoolClient {
  const query = (first: string | pg.QueryConfig, values?: unknown[]) => {
    const config: pg.QueryConfig = typeof first === 'string' ? { text: first } : { ...first }
    if (values !== undefined) config.values = values
    return client.query({ ...config, query_timeout: queryTimeout } as pg.QueryConfig)
  }
  let released = false
  const release = (error?: Error | boolean) => {
    if (released) return
    released = true
    // Sent before the connection goes back: pg keeps a connection's queries in order.
    if (!error) client.query(restore).catch(() => undefined)
    client.release(error)
  }
  return Object.assign(Object.create(client) as pg.PoolClient, { query, release })
}
