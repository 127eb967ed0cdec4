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
  /**
   * The transaction that ran beforeCommit has committed (`run` is the one beforeCommit was
   * given: a hook may be committed by one of several transactions).
   */
  committed(run: RunQuery): void
  /** Ids the code inside the scope says its change concerns (what it created, what it touched). */
  note(ids: readonly string[]): void
  /** The transaction that ran beforeCommit with `run` did not commit: what it wrote is gone. */
  failed?(run: RunQuery): void
  /**
   * Hooks of one kind that commit in one transaction (a group's members, see withCommitHooks)
   * write together: those that share this function are given to it in one call instead of
   * each running beforeCommit.
   */
  readonly writeTogether?: (run: RunQuery, hooks: readonly CommitHook[]) => Promise<void>
}

const scope = new AsyncLocalStorage<CommitHook>()

/** Calls `fn` with `hook` run by every transaction it commits. */
export function withCommitHook<T>(hook: CommitHook, fn: () => Promise<T>): Promise<T> {
  return scope.run(hook, fn)
}

/**
 * Calls `fn` with the hooks of many calls, each run by every transaction it commits: work
 * done for many callers at once (a group commit, ledger/group-committer.ts) commits each
 * caller's hook with it. With none, a transaction runs no hook, whoever's scope started it.
 */
export function withCommitHooks<T>(hooks: readonly CommitHook[], fn: () => Promise<T>): Promise<T> {
  return scope.run(hooks.length === 1 ? hooks[0]! : new HookGroup(hooks), fn)
}

/** Several callers' hooks, committed by one transaction. */
class HookGroup implements CommitHook {
  constructor(private readonly hooks: readonly CommitHook[]) {}

  get done(): boolean {
    return this.hooks.every((hook) => hook.done)
  }

  async beforeCommit(run: RunQuery): Promise<void> {
    const together = new Map<NonNullable<CommitHook['writeTogether']>, CommitHook[]>()
    for (const hook of this.hooks) {
      if (hook.done) continue
      if (!hook.writeTogether) await hook.beforeCommit(run)
      else together.set(hook.writeTogether, [...(together.get(hook.writeTogether) ?? []), hook])
    }
    for (const [write, hooks] of together) await write(run, hooks)
  }

  committed(run: RunQuery): void {
    for (const hook of this.hooks) hook.committed(run)
  }

  failed(run: RunQuery): void {
    for (const hook of this.hooks) hook.failed?.(run)
  }

  /** Which member a change concerns is known only to the code that made it (CommitHook.note). */
  note(): void {}
}

/**
 * The hook of the current scope, if any and not done (a transaction must then not commit early, see
 * speed/prepared.ts).
 */
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
    const run: RunQuery = (query) => connection.executeQuery(query)
    try {
      await hook.beforeCommit(run)
      await this.inner.commitTransaction(connection)
    } catch (error) {
      hook.failed?.(run)
      throw error
    }
    hook.committed(run)
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
