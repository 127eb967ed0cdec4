import { sql, type PostgresPool, type PostgresPoolClient, type RawBuilder } from 'kysely'
import type pg from 'pg'
import { currentCommitHook } from '../commit-hooks.ts'

// Prepared statements for the ledger's busiest statements. PostgreSQL parses and plans
// an unnamed statement every time it runs; a named one is parsed once per connection and
// its plan is kept (PostgreSQL re-plans by itself when a table changes). Only statements
// whose text does not depend on the data are marked: one array parameter per column
// (bulk.ts) keeps a batch's text the same whatever its size, so a connection holds a
// handful of them. Other statements (an `in (...)` list grows with its values) stay unnamed.

const marker = '/* prepared */ '

const commitMarker = '/* then commit */ '

/**
 * The last statement of a transaction, with the transaction's `commit` sent right behind
 * it (one round trip for both) on PostgreSQL; the `commit` the transaction then sends is
 * answered at once. Nothing may follow it in the transaction. On PGlite it is a comment
 * and the transaction commits as usual.
 */
export function thenCommit<T>(statement: RawBuilder<T>): RawBuilder<T> {
  // A transaction with a commit hook (commit-hooks.ts) still has a statement to send.
  if (currentCommitHook()) return statement
  return sql<T>`${sql.raw(commitMarker)}${statement}`
}

/** The statement, prepared once per connection on PostgreSQL (on PGlite it is a comment). */
export function prepared<T>(statement: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(marker)}${statement}`
}

// And a transaction's `begin` rides with its first statement, and its `commit` with its
// last where the caller says so (thenCommit). Kysely sends `begin` and
// waits for its answer before the transaction's first statement: a round trip in which
// PostgreSQL does next to nothing. Here `begin` is held back and written on the wire
// together with the statement after it (node-postgres's pipeline mode sends a query
// without waiting for the one before), so a transaction costs one round trip fewer. A
// failed `begin` fails that statement too; a transaction that sends nothing before its
// `commit` or `rollback` sends nothing at all.

// Lanes. A transaction whose `commit` has gone out behind its last statement sends
// nothing more on its connection, so a transaction started after it may be written on the
// same connection, right behind it, instead of on another one: pg's pipeline mode keeps
// the two in order, and PostgreSQL runs the second once the first has committed. On two
// connections nothing says which of two transactions that want the same row takes it
// first; on one, the order they were sent in is the order they run in. The ledger uses
// this for the next batch of an account being written (transfer-service.ts).

/**
 * One pooled connection and the transactions using it; it goes back to the pool when the last is
 * done.
 */
interface SharedConnection {
  client: pg.PoolClient
  users: number
}

/** A transaction that another may follow on its connection (inLane). */
export class Lane {
  private settle: (shared: SharedConnection | undefined) => void = () => undefined
  private settled = false
  /**
   * The connection once this lane's transaction has sent its commit; undefined when it ended
   * otherwise.
   */
  readonly ready = new Promise<SharedConnection | undefined>((resolve) => {
    this.settle = resolve
  })

  /** The transaction's commit is on the wire: followers may write behind it. */
  open(shared: SharedConnection): void {
    if (this.settled) return
    this.settled = true
    this.settle(shared)
  }

  /**
   * The transaction is over (or will never be followed): followers take connections of their own.
   */
  close(): void {
    if (this.settled) return
    this.settled = true
    this.settle(undefined)
  }
}

/** The lane of the transaction being started, handed to the pool's connect() in the same turn. */
let starting: { own: Lane; follow: Lane | undefined } | undefined

/**
 * Starts `work`, which must start its database transaction at once (before its first
 * await), as `own`'s lane: when `follow`'s transaction has sent its commit and still holds
 * its connection, on that connection behind it (waiting for that first), else on a
 * connection of its own. Kysely asks the pool for the connection in the same turn as the
 * transaction starts, which is how the lane reaches it (not through AsyncLocalStorage,
 * whose promise hooks would tax every promise of the process). Statements after the
 * transaction's first await, and any later transaction of `work`, take connections of
 * their own. On PGlite, which has one connection, lanes change nothing.
 */
export function inLane<T>(own: Lane, follow: Lane | undefined, work: () => Promise<T>): Promise<T> {
  starting = { own, follow }
  try {
    return work()
  } finally {
    starting = undefined
  }
}

/**
 * Wraps a pg pool (made with `pipeline: true`) for Kysely: marked statements go out as
 * named statements, named by their text (one name per distinct text, the same on every
 * connection), `begin` goes out with the statement that follows it, and a thenCommit
 * statement with its transaction's `commit` behind it.
 */
export function preparingPool(pool: Pick<pg.Pool, 'connect' | 'end'>): PostgresPool {
  const names = new Map<string, string>()
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
      const lane = starting
      starting = undefined
      const shared = await sharedConnection(pool, lane)
      const connection = new LaneConnection(shared, lane?.own, nameOf)
      return {
        query: ((text: string, values: unknown[]) => connection.query(text, values)) as unknown as
          PostgresPoolClient['query'],
        release: () => connection.release(),
      }
    },
    end: () => pool.end(),
  }
}

/** Behind the transaction `lane` follows, on its connection while it holds it; else a new one. */
async function sharedConnection(pool: Pick<pg.Pool, 'connect'>,
    lane: typeof starting): Promise<SharedConnection> {
  if (lane?.follow) {
    const ahead = await lane.follow.ready
    // Taken in the same turn as it is checked: a connection whose users are all done is back in
    // the pool.
    if (ahead && ahead.users > 0) {
      ahead.users++
      return ahead
    }
  }
  return { client: await pool.connect(), users: 1 }
}

const empty = { command: '', rowCount: 0, rows: [] }
// The markers are prefixes (at most two); only the head of a long statement is searched.
const marked = (text: string, which: string) => text.slice(0, 40).includes(which)

/**
 * One transaction's statements on its (maybe shared) connection: `begin` held until the
 * statement after it, marked statements named, a thenCommit statement's `commit` sent behind it.
 */
class LaneConnection {
  private beginHeld = false
  // The transaction's commit has gone out behind its last statement: it sends nothing more.
  private commitSent = false
  private committed = false
  private released = false

  constructor(private readonly shared: SharedConnection, private readonly own: Lane | undefined,
    private readonly nameOf: (text: string) => string) {}

  private named(text: string, values: unknown[]) {
    const { client } = this.shared
    return marked(text, marker) ? client.query({ name: this.nameOf(text), text, values })
      : client.query(text, values)
  }

  // The statement, and `commit` behind it when it is marked so: the statement's
  // error if it failed (PostgreSQL then answers the commit with a rollback), else
  // the commit's if that failed.
  private async send(text: string, values: unknown[]) {
    if (!marked(text, commitMarker)) return this.named(text, values)
    const result = this.named(text, values)
    const commit = this.shared.client.query('commit')
    this.commitSent = true
    this.own?.open(this.shared)
    try {
      const answer = await result
      await commit
      this.committed = true
      return answer
    } finally {
      await commit.catch(() => undefined)
    }
  }

  async query(text: string, values: unknown[]) {
    if (this.commitSent) {
      // The transaction is over, committed or (its statement failed) rolled back: its
      // own `commit` or `rollback` is answered here and not sent, since a follower's
      // transaction may be next on the connection.
      if (text === 'commit' || text === 'rollback') {
        if (text === 'commit' && !this.committed) throw new Error('the transaction was rolled back')
        return empty
      }
      throw new Error(`"${text.slice(0, 60)}" came after the transaction had committed with ` +
        `its last statement`)
    }
    if (text === 'begin') {
      if (this.beginHeld) throw new Error('begin sent twice without a statement between')
      this.beginHeld = true
      return empty
    }
    if (!this.beginHeld) return this.send(text, values)
    this.beginHeld = false
    if (text === 'commit' || text === 'rollback') return empty
    const begun = this.shared.client.query('begin')
    const result = this.send(text, values)
    // Both are on the wire; the statement's own answer (or error) is the caller's.
    await begun.catch(() => undefined)
    return result
  }

  release() {
    if (this.released) return
    this.released = true
    this.own?.close()
    if (--this.shared.users === 0) this.shared.client.release()
  }
}
