// Group commit: requests arriving while a batch is being written wait in a queue and go
// together in the next batch, so a hot account pays one database transaction for many
// debits instead of one each, and each request is still answered on its own. No timer:
// the queue fills exactly while the previous batch commits, so an idle service answers at
// once and a busy one batches more. A limit on the queue keeps memory bounded.
//
// While a batch is being written, another starts beside it only once `overlap_jobs_min`
// jobs wait: the database then writes one batch while this process answers and builds the
// other, and neither is small. Starting the second with whatever waits (the first few jobs
// to arrive) made many small batches, each paying a transaction's fixed cost; never starting
// it left the database idle while this process worked (docs/performance.md).
//
// A caller's commit hook (an operator's audit row, db/commit-hooks.ts) goes with its job:
// the batch's transaction commits every member's hook with the members' changes, whoever's
// call happened to start the batch.
//
// So does the caller's clock (`clockOf`): in the sandbox a partner whose clock is ahead of
// the bank's (src/clock.ts) has its jobs written in batches of their own, by its time, so
// that one batch's rows are stamped by one clock, the right one. Outside the sandbox every
// job is on the bank's clock and nothing is split.

import { onPartnerClock } from '../clock.ts'
import { currentCommitHook, withCommitHooks, type CommitHook } from '../db/commit-hooks.ts'

export type BatchOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown }

export interface GroupCommitterOptions<J> {
  /** Most jobs in one batch. */
  batch_jobs_max: number
  /**
   * Batches being written at once (more overlap the commit wait of one with the work of the next).
   */
  batches_in_flight_max: number
  /** Jobs that must wait before a batch starts beside one being written (1, the default: any). */
  overlap_jobs_min?: number
  /** Jobs waiting at most; past it `submit` fails fast with the `overloaded` error. */
  queue_jobs_max: number
  overloaded: () => Error
  /** Whether a failed batch may be tried again as a whole (deadlock, serialization failure). */
  retryable: (error: unknown) => boolean
  attempts_max: number
  /**
   * Whether a failed batch should be split to find the one job that caused the failure.
   * Not for outages (a lost database fails every half the same way).
   */
  isolatable: (error: unknown) => boolean
  /**
   * The rows a job writes (its accounts). A job whose rows an in-flight batch is writing
   * waits for the next batch instead of joining one that would only queue on the row
   * lock: a hot account's requests then pile into one large batch, while requests for
   * other accounts still go out in parallel batches.
   */
  keysOf?: (job: J) => readonly string[]
  /**
   * Batches that may be written at once with the same key (1, the default: a job whose
   * key an in-flight batch holds waits for the next batch). With 2, when every waiting job's
   * key is being written (a hot account), the next batch may start beside the one writing
   * it (past `overlap_jobs_min`, as any second batch), and its writer orders the two
   * (transfer-service.ts writes it behind the first, on the same connection).
   */
  key_batches_max?: number
  /**
   * Told of every batch written (its size, how long it took, whether it committed): the metrics.
   */
  observe?: (size: number, seconds: number, ok: boolean) => void
  /**
   * The clock a job is written by, asked when it is submitted: the partner whose sandbox clock
   * is ahead of the bank's, or undefined for the bank's. Jobs of two clocks never share a batch.
   */
  clockOf?: () => string | undefined
}

interface Waiting<J, R> {
  job: J
  /**
   * The caller's commit hook (an operator's audit row): the batch's transaction commits it
   * with the job's change (db/commit-hooks.ts).
   */
  hook: CommitHook | undefined
  /** The partner whose sandbox clock the caller runs by, if any. */
  clock: string | undefined
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

export class GroupCommitter<J, R> {
  private queue: Waiting<J, R>[] = []
  private inFlight = 0
  private readonly busy = new Map<string, number>()
  /**
   * The last look at the queue found no job it could start (each waits for a key being
   * written): until a batch ends, only a job that arrives with its keys free enough can
   * change that, so a new job is checked alone instead of the whole queue again.
   */
  private stalled = false

  constructor(
    private readonly runBatch: (jobs: J[]) => Promise<BatchOutcome<R>[]>,
    private readonly options: GroupCommitterOptions<J>,
  ) {}

  submit(job: J): Promise<R> {
    if (this.queue.length >= this.options.queue_jobs_max)
      return Promise.reject(this.options.overloaded())
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, hook: currentCommitHook(), clock: this.options.clockOf?.(), resolve,
        reject })
      if (this.stalled && !this.startable(job)) return
      this.stalled = false
      this.pump()
    })
  }

  /** Whether a batch could take the job now, its keys written by few enough batches. */
  private startable(job: J): boolean {
    const max = Math.max(this.options.key_batches_max ?? 1, 1)
    return !this.options.keysOf?.(job).some((key) => (this.busy.get(key) ?? 0) >= max)
  }

  get pending(): number {
    return this.queue.length + this.inFlight
  }

  private pump(): void {
    while (this.inFlight < this.options.batches_in_flight_max && this.queue.length > 0) {
      // (A queue that cannot hold that many overlaps when full.)
      if (
        this.inFlight > 0 &&
        this.queue.length <
          Math.min(this.options.overlap_jobs_min ?? 1, this.options.queue_jobs_max)
      )
        return
      const batch = this.take()
      if (batch.length === 0) {
        this.stalled = true
        return
      }
      // Each key once per batch: `busy` counts the batches writing a key.
      const keys = this.options.keysOf
        ? [...new Set(batch.flatMap((w) => this.options.keysOf!(w.job)))]
        : []
      for (const key of keys) this.busy.set(key, (this.busy.get(key) ?? 0) + 1)
      this.inFlight++
      void this.write(batch).finally(() => {
        for (const key of keys) {
          const n = (this.busy.get(key) ?? 1) - 1
          if (n === 0) this.busy.delete(key)
          else this.busy.set(key, n)
        }
        this.inFlight--
        this.stalled = false
        this.pump()
      })
    }
  }

  /**
   * The next batch: queued jobs in order, skipping those whose rows are being written. Only
   * when every waiting job's rows are being written (a hot account's requests) does it take
   * those written by fewer than `key_batches_max` batches: jobs of other rows still go in
   * batches of their own, which the database writes in parallel, not one behind another.
   */
  private take(): Waiting<J, R>[] {
    const batch = this.takeByKeys()
    const clock = batch[0]?.clock
    if (batch.every((w) => w.clock === clock)) return batch
    // Jobs on another clock wait, in order, at the head of the queue for a batch of their own.
    const own = batch.filter((w) => w.clock === clock)
    this.queue = [...batch.filter((w) => w.clock !== clock), ...this.queue]
    return own
  }

  private takeByKeys(): Waiting<J, R>[] {
    const keysOf = this.options.keysOf
    if (!keysOf || this.busy.size === 0) return this.queue.splice(0, this.options.batch_jobs_max)
    const free = this.takeUnder(keysOf, 1)
    if (free.length > 0 || (this.options.key_batches_max ?? 1) <= 1) return free
    return this.takeUnder(keysOf, this.options.key_batches_max!)
  }

  /**
   * Queued jobs in order whose keys fewer than `max` in-flight batches are writing, up to a batch.
   */
  private takeUnder(keysOf: (job: J) => readonly string[], max: number): Waiting<J, R>[] {
    const batch: Waiting<J, R>[] = []
    const rest: Waiting<J, R>[] = []
    for (const waiting of this.queue) {
      if (
        batch.length < this.options.batch_jobs_max &&
        !keysOf(waiting.job).some((key) => (this.busy.get(key) ?? 0) >= max)
      )
        batch.push(waiting)
      else rest.push(waiting)
    }
    this.queue = rest
    return batch
  }

  private async write(batch: Waiting<J, R>[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const started = performance.now()
      try {
        const hooks = batch.flatMap((w) => (w.hook ? [w.hook] : []))
        const outcomes = await onPartnerClock(batch[0]?.clock, () => withCommitHooks(hooks,
          () => this.runBatch(batch.map((w) => w.job))))
        this.options.observe?.(batch.length, (performance.now() - started) / 1000, true)
        batch.forEach((w, i) => {
          const outcome = outcomes[i]
          if (!outcome) w.reject(new Error('batch returned no outcome for a job'))
          else if (outcome.ok) w.resolve(outcome.value)
          else w.reject(outcome.error)
        })
        return
      } catch (error) {
        this.options.observe?.(batch.length, (performance.now() - started) / 1000, false)
        if (attempt < this.options.attempts_max && this.options.retryable(error)) continue
        if (batch.length > 1 && this.options.isolatable(error)) {
          // One request must never fail another: a batch that failed for a reason no
          // check foresaw is written again in halves (each its own transaction; the failed
          // one rolled back whole), until the culprit fails alone and the rest commit.
          const half = Math.ceil(batch.length / 2)
          await this.write(batch.slice(0, half))
          await this.write(batch.slice(half))
          return
        }
        for (const w of batch) w.reject(error)
        return
      }
    }
  }
}

/** PostgreSQL's deadlock and serialization failures: safe to try the whole transaction again. */
export function isRetryableDatabaseError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '40P01' || code === '40001'
}
