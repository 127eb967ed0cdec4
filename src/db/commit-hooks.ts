import { AsyncLocalStorage } from 'node:async_hooks'
import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'

// Work that must commit with whatever transaction a piece of code opens, without that code
// knowing of it: the operator audit (audit/operator-audit.ts) writes its row in the same
// transaction as the operator's change. A hook is set for the duration of a call (an
// AsyncLocalStorage scope); every transaction committed inside that scope runs the hook
// over its own connection just before its `commit`. The hook decides whether it still has
// anything to write (it writes once). The database layer knows nothing of what is written.

export type RunQuery = (query: CompiledQuery) => Promise<QueryResult<unknown>>

export interface CommitHook {
  /**
   * True once the hook has nothing left to write. A scope can outlive its call (a timer or
   * a loop started inside it keeps it): transactions then commit as if it were not set.
   */
  readonly done: boolean
  /** Runs inside the transaction, right before it commits; `run` executes on its connection. */
  beforeCommit(run: RunQuery): Promise<void>
  /** The transaction that ran beforeCommit has committed. */
  committed(): void
  /** Ids the code inside the scope says its change concerns (what it created, what it touched). */
  note(ids: readonly string[]): void
}

const scope = new AsyncLocalStorage<CommitHook>()

/** Calls `fn` with `hook` run by every transaction it commits. */
export function withCommitHook<T>(hook: CommitHook, fn: () => Promise<T>): Promise<T> {
  return scope.run(hook, fn)
}

/** The hook of the current scope, if any and not done (a transaction must then not commit early, see speed/prepared.ts). */
export function currentCommitHook(): CommitHook | undefined {
  const hook = scope.getStore()
  return hook && !hook.done ? hook : undefined
}

/**
 * Tells the current scope's hook which ids the change being made concerns: what a service
 * creates (a transaction, a credential) is known only inside it. Outside a scope, or once
 * its hook is done, it does nothing; the code that calls it knows nothing of who listens.
 */
export function noteCommitTargets(...ids: Array<string | null | undefined>): void {
  const hook = currentCommitHook()
  if (!hook) return
  const known = ids.filter((id): id is string => typeof id === 'string' && id !== '')
  if (known.length > 0) hook.note(known)
}

/** A dialect whose transactions run the current scope's commit hook. */
export class CommitHookDialect implements Dialect {
  constructor(private readonly inner: Dialect) {}

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter()
  }

  createDriver(): Driver {
    return new CommitHookDriver(this.inner.createDriver())
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.inner.createIntrospector(db)
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler()
  }
}

class CommitHookDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init()
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.inner.acquireConnection()
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const hook = scope.getStore()
    if (!hook || hook.done) return this.inner.commitTransaction(connection)
    await hook.beforeCommit((query) => connection.executeQuery(query))
    await this.inner.commitTransaction(connection)
    hook.committed()
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection)
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection)
  }

  destroy(): Promise<void> {
    return this.inner.destroy()
  }
}
