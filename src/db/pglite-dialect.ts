import type { PGlite, Transaction } from '@electric-sql/pglite'
import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely'
import { ArrayParameter, arrayText } from './speed/arrays.ts'

// Kysely on PGlite. Kysely 0.29 ships a PGlite dialect but asks for Node 22; 0.28, which runs
// on the Node 20 the bank supports, has none. This is 0.29's dialect (MIT, kysely-org),
// adapted to 0.28 with the one thing 0.28's runtime does not do for it: PGlite is a single
// connection, so the driver lends it to one caller at a time (a mutex, as 0.28's own
// SqliteDriver does), and a transaction holds it from begin to commit or rollback. Each
// transaction runs inside `pglite.transaction()`, as 0.29's does.

export class PGliteDialect implements Dialect {
  /** `borrowed`: the PGlite is the caller's; destroying the Kysely instance leaves it open. */
  constructor(private readonly config: { pglite: PGlite; borrowed?: boolean }) {}

  createAdapter(): DialectAdapter {
    return new PGliteAdapter()
  }

  createDriver(): Driver {
    return new PGliteDriver(this.config.pglite, this.config.borrowed ?? false)
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }
}

/** One process owns a PGlite store, so the migrator's advisory lock has nobody to wait for. */
class PGliteAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

class PGliteDriver implements Driver {
  private connection: PGliteConnection | undefined
  private readonly mutex = new ConnectionMutex()

  constructor(
    private readonly pglite: PGlite,
    private readonly borrowed: boolean,
  ) {}

  async init(): Promise<void> {
    if (this.pglite.closed) throw new Error('PGlite instance is already closed.')
    await this.pglite.waitReady
    this.connection = new PGliteConnection(this.pglite)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.mutex.lock()
    return this.connection!
  }

  async releaseConnection(): Promise<void> {
    this.mutex.unlock()
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).begin()
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).commit()
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).rollback()
  }

  async destroy(): Promise<void> {
    if (!this.borrowed && !this.pglite.closed) await this.pglite.close()
  }
}

class PGliteConnection implements DatabaseConnection {
  private transaction: Transaction | undefined
  private finish: ((commit: boolean) => void) | undefined
  private closed: Promise<void> | undefined

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { affectedRows, rows } = await (this.transaction ?? this.pglite).query<R>(query.sql,
      textParameters(query.parameters), { rowMode: 'object' })
    return { numAffectedRows: affectedRows != null ? BigInt(affectedRows) : undefined,
      rows: rows ?? [] }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported by PGlite.')
  }

  /**
   * Opens `pglite.transaction()` and keeps it open until commit() or rollback() says how it ends.
   */
  async begin(): Promise<void> {
    let begun!: () => void
    const started = new Promise<void>((resolve) => (begun = resolve))
    const outcome = new Promise<boolean>((resolve) => (this.finish = resolve))
    this.closed = this.pglite.transaction(async (tx) => {
      this.transaction = tx
      begun()
      if (!(await outcome)) await tx.rollback()
    }).then(() => undefined)
    // A transaction that could not even begin fails here, not at commit.
    await Promise.race([started, this.closed])
  }

  async commit(): Promise<void> {
    await this.end(true)
  }

  async rollback(): Promise<void> {
    await this.end(false).catch(() => undefined)
  }

  private async end(commit: boolean): Promise<void> {
    const closed = this.closed
    this.finish?.(commit)
    try {
      await closed
    } finally {
      this.transaction = undefined
      this.finish = undefined
      this.closed = undefined
    }
  }
}

/** Lends the one connection to one caller at a time, in the order they asked. */
class ConnectionMutex {
  private held: Promise<void> | undefined
  private release: (() => void) | undefined

  async lock(): Promise<void> {
    while (this.held) await this.held
    this.held = new Promise<void>((resolve) => (this.release = resolve))
  }

  unlock(): void {
    const release = this.release
    this.held = undefined
    this.release = undefined
    release?.()
  }
}

/**
 * Array parameters (speed/arrays.ts) as the text of array literals, which PGlite sends as it sends
 * any text.
 */
function textParameters(parameters: readonly unknown[]): unknown[] {
  let text: unknown[] | undefined
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i]
    if (!(value instanceof ArrayParameter)) continue
    text ??= parameters.slice()
    text[i] = arrayText(value)
  }
  return text ?? (parameters as unknown[])
}
