import { AsyncResource } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { Kysely } from 'kysely'
import { bankNow, clockPartner, noPartnerLeads, onPartnerClock, systemClock, type Clock,
  type PartnerLeads } from '../clock.ts'
import type { Database } from '../schema.ts'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { assert } from '../errors.ts'
import type { Logger } from '../logger.ts'
import {
  busyGroups,
  claimById,
  claimDue,
  claimShared,
  claimSharedMany,
  findJobByKey,
  lockExclusiveClaims,
  finishRun,
  insertJob,
  nextQueued,
  nextQueuedOfPartner,
  shiftPartnerJobs,
  oldestDue,
  renewLease,
  type JobEnding,
  type JobRow,
  type JobTimes,
  type SharedClaim,
} from './job-store.ts'
import type { JobView } from './jobs-contract.ts'
import { jobView } from './job-view.ts'

// The one mechanism for background work. Work is a row in `jobs` with a due time taken
// from the injected clock. Every instance runs one JobRunner, which each tick
//  1. plans recurring work that has come due (e.g. today's 10:00 clearing cycle) as rows,
//     unique per kind and key, so instances planning the same cycle make one row;
//  2. hands new outbox events to their subscribers (events/);
//  3. takes due rows with `for update skip locked` under a lease and runs them. A kind done
//     on partners' behalf (webhook deliveries) shares its slots out (`share_running_max`):
//     no partner holds more than its part, and a free slot goes to whoever runs fewest.
//     Work that waits on the network (webhook deliveries again) runs in a pool of its kind's
//     own (`pool_slots`, hundreds), beside the `concurrency_max` slots the rest shares.
// A running job's lease is renewed while it runs; an instance that dies stops renewing,
// and once the lease has expired another instance takes the job over, exactly once (the
// take is one conditional update). A job that fails is retried with exponential backoff
// until `attempts_max`, then left `dead` for an operator (`bank jobs list --state dead`,
// `bank jobs retry <id>`). Handlers must be safe to run again: a run cut short by a crash
// is run again from the start (at least once), so each step re-reads its rows under lock.
//
// Two clocks: due times and backoff are bank time (the injected clock, which the sandbox
// moves forward); leases are wall-clock time (`wall_clock`), because a lease measures
// whether an instance is still alive, and moving the bank's clock forward must not make
// every running job's lease look expired to the other instances.

export interface JobContext {
  id: string
  kind: string
  key: string
  payload: Record<string, unknown>
  /** 1 on the first run; more when it is a retry or a takeover of a dead instance's run. */
  attempt: number
  /** Aborted when this instance lost the job's lease (another instance took it over). */
  signal: AbortSignal
}

export interface PlannedJob {
  key: string
  due_at: Date
  payload?: Record<string, unknown>
}

export interface JobKind {
  kind: string
  attempts_max: number
  /** How long a run may go without renewing its lease before another instance takes it over. */
  lease_ms: number
  backoff_base_ms: number
  backoff_max_ms: number
  run(job: JobContext): Promise<Record<string, unknown> | void>
  /** Recurring work: the jobs that should exist by `now` (called each tick). */
  plan?(now: Date): PlannedJob[]
  /** A re-armed job: when it should run next after a success (instead of ending `done`). */
  next?(now: Date): Date
  /**
   * A group whose jobs never run at the same time on any instance (a rail submission that
   * two overlapping runs would make twice). A due job of a busy group waits for the running
   * one to end; runNew() of such a job waits for it, up to `exclusive_wait_ms`, then
   * throws JobGroupBusy.
   */
  exclusive?: string
  /**
   * Slots of this instance's runner that jobs of this kind leave to other kinds (at least
   * one slot is theirs all the same). Webhook deliveries leave one: each attempt may wait
   * seconds on a partner's receiver, and a receiver that never answers must not hold every
   * slot while bulk payments, clearing and debit runs wait.
   */
  slots_left_to_others?: number
  /**
   * Slots of a pool of this kind's own on this instance, beside the runner's `concurrency_max`:
   * its jobs never take those slots, nor other kinds its. For work that waits on the network
   * rather than working (webhook deliveries: hundreds at once cost memory, not CPU), so that
   * many of them run beside clearing, bulk and debit work without taking its slots.
   */
  pool_slots?: number
  /**
   * The sandbox's advance does not run jobs of this kind on its way (the advance itself is one).
   */
  skip_in_advance?: boolean
  /**
   * Work done on someone's behalf (a webhook delivery: for its partner), shared out so that
   * one party's jobs cannot crowd out everyone else's. Each job of the kind names its
   * `share` when it is enqueued. At most this many jobs of one share run at once, counted
   * on every instance, and on one instance never all of the kind's slots (one stays with
   * the other shares); a free slot goes to the share with the fewest jobs running, then to
   * the one whose job has waited longest. Webhook deliveries share by partner: a receiver
   * that never answers holds its own partner's slots, not the others'.
   */
  share_running_max?: number
  /**
   * Recurring work (`plan`) done for each partner whose sandbox clock is ahead of the bank's
   * as well, by that partner's clock: its jobs run in the partner's scope
   * (`clockPartner()`), where the kind does that partner's part of the work only.
   */
  per_partner?: boolean
}

/**
 * A job to add: `share` names whose work it is, for (and only for) a kind with `share_running_max`.
 */
export interface NewJobRequest {
  kind: string
  key: string
  due_at?: Date
  payload?: Record<string, unknown>
  share?: string
}

/** runNew() of a job whose exclusive group has a job running (here or on another instance). */
export class JobGroupBusy extends Error {
  constructor(readonly group: string) {
    super(`a job of group ${group} is running; this one can start when it ends`)
    this.name = 'JobGroupBusy'
  }
}

export interface JobRunnerOptions {
  poll_ms: number
  /** Jobs running at once on this instance. */
  concurrency_max: number
  /** The clock leases are measured on (system time unless a test controls it). */
  wall_clock?: Clock
  /** How long runNew() of an exclusive kind waits for its busy group (default 30 s). */
  exclusive_wait_ms?: number
  /** The sandbox's partner clocks: how far each is ahead of the bank's. */
  partner_leads?: PartnerLeads
}

/**
 * Moves a partner's sandbox clock to `at` (its time) in the transaction; answers how far it moved.
 */
export type PartnerMove = (trx: Kysely<Database>, at: Date) => Promise<number>

/** What a sandbox advance did (see JobRunner.runUntil). */
export interface AdvanceReport {
  jobs_run: number
  /** False when it stopped at `advance_runs_max` runs with work still due before the target. */
  complete: boolean
}

/**
 * Runs one advance of the sandbox clock makes at most; more is a sign of a job re-arming itself
 * without end.
 */
export const advance_runs_max = 10_000
/**
 * Recurring kinds plan the work due by a given time; an advance asks them at every step
 * of this size on its way, so that no minute's cycle is skipped (cycles are whole minutes).
 */
const advance_plan_step_ms = 60_000
/**
 * Batches of events an advance hands over at each of its steps, at most (one batch per tick
 * otherwise).
 */
const advance_event_batches_max = 100

export interface EventDispatch {
  /** Hands over at most `batchLimit` events; resolves with how many. */
  dispatchPending(): Promise<number>
  readonly batchLimit: number
}

/** Keys this instance planned lately, so a tick does not insert the same cycle again and again. */
const planned_keys_max = 64

/** The least time without a tick that makes a runner not ready (readiness()). */
const job_runner_stall_ms_min = 60_000

export class JobRunner {
  readonly owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly kinds = new Map<string, JobKind>()
  private readonly groups = new Map<string, string>()
  private readonly running = new Set<Promise<void>>()
  /**
   * The runs in `running` by job id (an advance run as a job leaves its own out of what it waits
   * for).
   */
  private readonly launched = new Map<string, Promise<void>>()
  /** Jobs running here by kind, for `slots_left_to_others`. */
  private readonly runningByKind = new Map<string, number>()
  /** Jobs of shared kinds running here by kind and share, for `share_running_max`. */
  private readonly runningByShare = new Map<string, Map<string, number>>()
  private readonly planned = new Map<string, string[]>()
  private timer: NodeJS.Timeout | undefined
  private ticking: Promise<void> | undefined
  /** A kick came while a tick ran: tick again at once when it ends. */
  private kicked = false
  private filling: Promise<void> | undefined
  /** The claim under way (claimAndRun), if any. */
  private claiming: Promise<void> | undefined
  /** A slot freed while `filling` was claiming: claim again when it ends. */
  private refill = false
  private stopped = true
  /** When a tick last began or ended (process time), for readiness(). */
  private lastBeat = 0
  private events: EventDispatch | undefined
  private refreshClock: (() => Promise<void>) | undefined
  /**
   * While an advance walks the jobs, this instance's ticks take none (they would run out of order).
   */
  private advancing = 0
  private readonly wall: Clock

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: JobRunnerOptions,
  ) {
    this.wall = options.wall_clock ?? systemClock
    this.leads = options.partner_leads ?? noPartnerLeads
  }

  private readonly leads: PartnerLeads

  /** Bank time, wherever it is asked (due times are bank time). */
  private now(): Date {
    return bankNow(this.clock)
  }

  /** The kinds registered, by name (held against the modules' declarations at start). */
  kindNames(): string[] {
    return [...this.kinds.keys()]
  }

  register(kind: JobKind): void {
    assert(!this.kinds.has(kind.kind), `job kind ${kind.kind} registered twice`)
    assert(kind.attempts_max >= 1 && kind.lease_ms >= 1000,
      `job kind ${kind.kind} needs attempts and a lease of at least 1 s`)
    if (kind.share_running_max !== undefined) {
      assert(Number.isSafeInteger(kind.share_running_max) && kind.share_running_max >= 1,
        `job kind ${kind.kind} needs a share_running_max of at least 1`)
      assert(kind.exclusive === undefined,
        `job kind ${kind.kind} cannot both share its slots out and be exclusive`)
    }
    if (kind.pool_slots !== undefined) {
      assert(Number.isSafeInteger(kind.pool_slots) && kind.pool_slots >= 1,
        `job kind ${kind.kind} needs a pool of at least 1 slot`)
      assert(kind.exclusive === undefined && !kind.slots_left_to_others,
        `job kind ${kind.kind} with a pool of its own leaves no slots and is not exclusive`)
    }
    this.kinds.set(kind.kind, kind)
    if (kind.exclusive !== undefined) this.groups.set(kind.kind, kind.exclusive)
  }

  /** The outbox dispatcher the runner calls each tick. */
  dispatchEventsWith(events: EventDispatch): void {
    this.events = events
  }

  /** Called at the start of each tick: the sandbox clock re-reads the shared offset there. */
  refreshClockWith(refresh: () => Promise<void>): void {
    this.refreshClock = refresh
  }

  /** Bank time for due times, wall-clock time for leases. */
  private times(): JobTimes {
    return { due: this.now(), lease: this.wall.now() }
  }

  /**
   * Adds a job (in the caller's transaction when given one, so the job commits with the
   * change that needs it). A job whose kind and key exist already is not added again.
   */
  async enqueue(db: Kysely<Database>, job: NewJobRequest): Promise<string | undefined> {
    return (await this.insert(db, job))?.id
  }

  /**
   * Adds a job and runs it here and now; resolves with its result, or undefined when a job
   * of that kind and key exists already (operator commands, a due cycle run on demand).
   */
  async runNew(job: NewJobRequest): Promise<Record<string, unknown> | undefined> {
    const row = await this.insert(this.db, job, this.owner)
    return row ? this.execute(row) : undefined
  }

  /**
   * Adds a job due now for whichever instance's runner is free to take it (after any job
   * of its exclusive group that runs now), wakes this instance's runner, and answers the
   * job as it was queued: a long operator call made with `detach: true` answers with it at
   * once. If the instance running it dies, another takes it over once its lease lapses.
   */
  async startNew(job: { kind: string; key: string; payload?: Record<string,
      unknown> }): Promise<JobView> {
    const row = await this.insert(this.db, job)
    assert(row, `a started job of kind ${job.kind} has a key of its own`)
    this.kickFromOwnContext()
    return jobView(row)
  }

  /**
   * kick() as if called where the runner was made: the tick it schedules (and every tick
   * scheduled from that one) then runs outside the async context of the request that
   * started the job, which may hold an operator audit's commit hook (db/commit-hooks.ts)
   * that no job's transaction should see.
   */
  private readonly kickFromOwnContext = AsyncResource.bind(() => this.kick())

  private insert(db: Kysely<Database>, job: NewJobRequest, owner?: string) {
    const kind = this.kindOf(job.kind)
    const shared = kind.share_running_max !== undefined
    assert(shared === (job.share !== undefined && job.share !== ''),
      `a job of kind ${kind.kind} ${shared ? 'names its share' : 'names no share'}`)
    const times = this.times()
    // Work for a partner runs by its clock: a due time given in its time is kept in bank time.
    const partner = this.options.partner_leads ? clockPartner() ?? (shared ? job.share : undefined)
      : undefined
    const lead = partner ? this.leads.leadOf(partner) : 0
    const due = job.due_at ? new Date(job.due_at.getTime() - lead) : times.due
    const row = { ...job, due_at: due, attempts_max: kind.attempts_max, lease_ms: kind.lease_ms,
      clock_partner: partner ?? '' }
    const group = kind.exclusive
    // Taken at once by this owner: not while its group is busy.
    if (owner === undefined || group === undefined) return insertJob(db, row, times, owner)
    return this.insertWhenIdle(group, row, owner)
  }

  /**
   * Inserts a job of an exclusive group taken by `owner` once no job of its group runs,
   * waiting for a running one to end (checking at growing intervals, real time) up to
   * `exclusive_wait_ms`; after that, JobGroupBusy.
   */
  private async insertWhenIdle(group: string, row: Parameters<typeof insertJob>[1], owner: string) {
    const started = Date.now()
    const waitMax = this.options.exclusive_wait_ms ?? 30_000
    for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
      const times = this.times()
      const inserted = await this.db.transaction().execute(async (trx) => {
        await lockExclusiveClaims(trx)
        // A job of that kind and key exists already: nothing to add, and nothing to wait for.
        if (await findJobByKey(trx, row.kind, row.key)) return undefined
        if ((await busyGroups(trx, this.groups, times.lease)).has(group)) return 'busy' as const
        return insertJob(trx, row, times, owner)
      })
      if (inserted !== 'busy') return inserted
      if (Date.now() - started >= waitMax) throw new JobGroupBusy(group)
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }

  /**
   * Runs one job here and now, whatever its due time, unless another instance holds a
   * live lease on it (then undefined). Rejects with the job's error when the run fails.
   */
  async runById(id: string): Promise<Record<string, unknown> | undefined> {
    const row = await claimById(this.db, id, this.owner, this.times(), this.groups)
    if (!row) return undefined
    return this.execute(row)
  }

  /** Runs every job due now, one at a time in due order, until none is due (tests, sandbox). */
  async runDue(): Promise<number> {
    let count = 0
    for (;;) {
      await this.plan()
      const [row] = await claimDue(this.db, this.owner, [...this.kinds.keys()], this.times(), 1,
        this.groups)
      if (!row) {
        // This instance's own runner (woken by the same commits) may have taken due jobs
        // and still be running them: wait for those, then look again. Not for use from a job.
        if (this.running.size === 0 && !this.filling && !this.ticking) return count
        await Promise.all([this.ticking, this.filling, ...this.running])
        continue
      }
      count++
      await this.execute(row).catch(() => undefined)
    }
  }

  /**
   * The sandbox's advance: runs, in time order, every job that falls due from now until
   * `target` (bank time), moving the bank's clock to each one's due time first (`moveTo`),
   * including jobs those runs enqueue, and hands events over on the way. Recurring kinds
   * plan their work up to the target first. A recurring sweep (a kind that re-arms itself
   * with `next`) runs once at each point where the advance stops rather than at every one
   * of its intervals in between, which would find nothing new. Leaves the clock at the last
   * job's due time; the caller then moves it to the target.
   */
  async runUntil(target: Date, moveTo: (at: Date) => Promise<void>,
      self?: string): Promise<AdvanceReport> {
    return this.walk(self, async () => {
      await this.planBetween(this.now(), target)
      const kinds = [...this.kinds.values()].filter((k) => !k.skip_in_advance)
      const oneOff = kinds.filter((k) => !k.next).map((k) => k.kind)
      const sweeps = kinds.filter((k) => k.next).map((k) => k.kind)
      let runs = 0
      for (;;) {
        await this.dispatchAllEvents()
        const next = await nextQueued(this.db, oneOff, target)
        const stop = next ? next.due_at : target
        if (stop.getTime() > this.now().getTime()) await moveTo(stop)
        for (let sweep = await nextQueued(this.db, sweeps,
            this.now()); sweep; sweep = await nextQueued(this.db, sweeps, this.now())) {
          if (runs >= advance_runs_max) return { jobs_run: runs, complete: false }
          await this.runById(sweep.id).catch(() => undefined)
          runs++
        }
        if (!next) break
        if (runs >= advance_runs_max) return { jobs_run: runs, complete: false }
        // A failed run is queued again after its backoff (or dead), like any other run.
        await this.runById(next.id).catch(() => undefined)
        runs++
      }
      return { jobs_run: runs, complete: true }
    })
  }

  /**
   * An advance's walk through the jobs: meanwhile this instance's ticks take none (they
   * would run out of order). This instance's own runs, taken before the advance began,
   * finish first; not the advance's own job (`self`), when this runner took it (a detached
   * or resumed advance). A complete walk hands the events over before it answers.
   */
  private async walk(self: string | undefined,
      steps: () => Promise<AdvanceReport>): Promise<AdvanceReport> {
    this.advancing++
    try {
      const own = self === undefined ? undefined : this.launched.get(self)
      await Promise.all([...this.running].filter((run) => run !== own))
      const report = await steps()
      if (report.complete) await this.dispatchAllEvents()
      return report
    } finally {
      this.advancing--
    }
  }

  /**
   * A partner's sandbox advance: runs, in time order, the partner's jobs that fall due on
   * its clock up to `target` (its time), moving its clock to each one's due time first
   * (`move`, in a transaction that also brings its other queued jobs nearer), after
   * planning the recurring work done by its clock (`per_partner` kinds). Nothing of another
   * partner's, nor the bank's own, runs; sweeps are left to the bank's ticks. Leaves the
   * partner's clock at `target`. The recurring work is planned a day ahead at a time, not
   * up to the target at once: each move shifts every queued job of the partner, so weeks
   * of hourly jobs queued up front would make a long advance quadratic.
   */
  async runPartnerUntil(partner: string, target: Date, move: PartnerMove,
      self?: string): Promise<AdvanceReport> {
    return this.walk(self, async () => {
      const partnerNow = () => onPartnerClock(partner, () => this.clock.now())
      const planned = new PartnerPlanning(partnerNow(), target, (from, to) =>
        this.planPartnerBetween(partner, from, to))
      const kinds = [...this.kinds.values()].filter((k) => !k.skip_in_advance && !k.next)
        .map((k) => k.kind)
      let runs = 0
      for (;;) {
        await this.dispatchAllEvents()
        const horizon = await planned.ahead(partnerNow())
        const lead = partnerNow().getTime() - this.now().getTime()
        const next = await nextQueuedOfPartner(this.db, partner, kinds,
          new Date(horizon.getTime() - lead))
        const stop = next ? new Date(next.due_at.getTime() + lead) : horizon
        if (stop.getTime() > partnerNow().getTime()) await this.movePartner(partner, stop, move)
        if (!next) {
          if (horizon.getTime() >= target.getTime()) break
          continue
        }
        if (runs >= advance_runs_max) return { jobs_run: runs, complete: false }
        await this.runById(next.id).catch(() => undefined)
        runs++
      }
      return { jobs_run: runs, complete: true }
    })
  }

  /** The partner's recurring work (`per_partner` kinds) due between `from` and `to`, its time. */
  private async planPartnerBetween(partner: string, from: Date, to: Date): Promise<void> {
    for (const kind of this.kinds.values()) {
      if (kind.per_partner) await this.planKindBetween(kind, partner, from, to)
    }
  }

  /** Moves the partner's clock and brings its queued jobs as much nearer, in one transaction. */
  private movePartner(partner: string, at: Date, move: PartnerMove): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      await shiftPartnerJobs(trx, partner, await move(trx, at))
    })
  }

  /** Every job recurring kinds should have by some time between `from` and `to`. */
  private async planBetween(from: Date, to: Date): Promise<void> {
    for (const kind of this.kinds.values()) {
      for (const partner of this.plannedFor(kind)) {
        const lead = partner ? this.leads.leadOf(partner) : 0
        await this.planKindBetween(kind, partner, new Date(from.getTime() + lead),
          new Date(to.getTime() + lead))
      }
    }
  }

  /**
   * The jobs a recurring kind should have by some time between `from` and `to` on the
   * partner's clock (none: the bank's), added in the partner's scope.
   */
  private async planKindBetween(kind: JobKind, partner: string | undefined, from: Date,
      to: Date): Promise<void> {
    if (!kind.plan) return
    const jobs = new Map<string, PlannedJob>()
    for (let at = from.getTime(); ; at = Math.min(at + advance_plan_step_ms, to.getTime())) {
      for (const job of kind.plan(new Date(at))) if (!jobs.has(job.key)) jobs.set(job.key, job)
      if (at >= to.getTime()) break
    }
    await onPartnerClock(partner, async () => {
      for (const job of jobs.values()) {
        await this.enqueue(this.db, { kind: kind.kind, ...job, key: partnerKey(job.key, partner) })
      }
    })
  }

  private async dispatchEvents(): Promise<number> {
    if (!this.events) return 0
    return this.events.dispatchPending().catch((error: unknown) => {
      this.log.warn({ err: error }, 'events: dispatch failed; next tick tries again')
      return 0
    })
  }

  /**
   * Hands over every pending event (bounded), so that subscribers see them before time moves on.
   */
  private async dispatchAllEvents(): Promise<void> {
    for (let batch = 0; batch < advance_event_batches_max; batch++) {
      if ((await this.dispatchEvents()) === 0) return
    }
  }

  start(): void {
    this.stopped = false
    this.lastBeat = Date.now()
    this.schedule(0)
  }

  /**
   * Why this runner cannot take work now (`/readyz`), or undefined when it polls: stopped, or no
   * tick begun or ended for ten poll intervals (a minute at least).
   */
  readiness(now = Date.now()): string | undefined {
    if (this.stopped) return 'stopped'
    const since = now - this.lastBeat
    const stalled = Math.max(this.options.poll_ms * 10, job_runner_stall_ms_min)
    return since > stalled ? `no poll for ${Math.round(since / 1000)} s` : undefined
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.ticking
    await this.filling
    await Promise.all(this.running)
  }

  /**
   * Work was just made due here (its transaction has committed), or a job ended and freed
   * a slot: tick as soon as the current tick ends instead of after the poll interval, so
   * that a chain of steps (a webhook lane's next delivery, a batch's next stage) follows on
   * at once. Other instances still find the work on their own ticks.
   */
  kick(): void {
    if (this.stopped) return
    if (this.ticking) {
      this.kicked = true
      return
    }
    if (this.timer) clearTimeout(this.timer)
    this.schedule(0)
  }

  private schedule(ms: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined
        const next = this.kicked ? 0 : this.options.poll_ms
        this.kicked = false
        this.schedule(next)
      })
    }, ms)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    this.lastBeat = Date.now()
    try {
      await this.tickOnce()
    } finally {
      this.lastBeat = Date.now()
    }
  }

  private async tickOnce(): Promise<void> {
    if (this.refreshClock) {
      await this.refreshClock().catch((error: unknown) => this.log.warn({ err: error },
        'clock: refresh failed; next tick tries again'))
    }
    // Handing events over and running jobs fail apart: a subscriber that keeps failing
    // must not stop clearing, and a planning fault must not stop the events.
    // A full batch handed over: more may wait, so the next tick follows at once.
    if ((await this.dispatchEvents()) >= (this.events?.batchLimit ?? Infinity)) this.kicked = true
    if (this.advancing > 0) return
    try {
      await this.plan()
      await this.claimAndRun()
    } catch (error) {
      // The database away is normal: the next tick tries again.
      if (isDatabaseUnavailable(error)) this.log.warn({ err: error },
        'jobs: database unavailable; next tick tries again')
      else this.log.error({ err: error }, 'jobs: tick failed')
    }
  }

  /**
   * Claims due jobs into the free slots and starts them: the runner's shared slots, then
   * each pool of a kind's own (`pool_slots`).
   */
  private async claimAndRun(): Promise<void> {
    // One claim at a time here (a tick's and a freed slot's): each counts the free slots it
    // fills, and two at once would both fill them.
    while (this.claiming) await this.claiming.catch(() => undefined)
    this.claiming = this.claimAll()
    try {
      await this.claiming
    } finally {
      this.claiming = undefined
    }
  }

  private async claimAll(): Promise<void> {
    await this.claimCommon()
    for (const kind of this.kinds.values()) {
      if (kind.pool_slots !== undefined) await this.claimPool(kind)
    }
  }

  /**
   * The runner's shared slots (`concurrency_max`). With kinds that leave slots to others or
   * share them out, one at a time: which kinds (and shares) may still take a slot changes
   * with each claim.
   */
  private async claimCommon(): Promise<void> {
    const common = [...this.kinds.values()].filter((kind) => kind.pool_slots === undefined)
    let free = this.options.concurrency_max - this.runningOf(common)
    const oneAtATime = common.some((kind) => kind.slots_left_to_others || kind.share_running_max)
    while (free > 0) {
      const kinds = common.filter((kind) => this.hasRoomFor(kind))
      if (kinds.length === 0) return
      const rows = oneAtATime ? await this.claimOne(kinds) : await claimDue(this.db, this.owner,
        kinds.map((k) => k.kind), this.times(), free, this.groups)
      if (rows.length === 0) return
      for (const row of rows) this.launch(row)
      free -= rows.length
    }
  }

  /**
   * A kind's own pool: its due jobs, in due order, or by share (claimSharedKinds) for a kind
   * that shares its slots out, until the pool is full or none is due.
   */
  private async claimPool(kind: JobKind): Promise<void> {
    for (;;) {
      const free = this.slotsOf(kind) - this.runningOf([kind])
      if (free <= 0) return
      // A kind that shares its slots out takes one job of each share whose turn it is, as many
      // shares as slots are free, per round (job-store.ts, claimSharedMany).
      const rows = kind.share_running_max === undefined
        ? await claimDue(this.db, this.owner, [kind.kind], this.times(), free, this.groups)
        : await claimSharedMany(this.db, this.owner, this.sharedClaimOf(kind, undefined),
          this.times(), free)
      if (rows.length === 0) return
      for (const row of rows) this.launch(row)
    }
  }

  /** Jobs of these kinds running on this instance. */
  private runningOf(kinds: readonly JobKind[]): number {
    return kinds.reduce((n, kind) => n + (this.runningByKind.get(kind.kind) ?? 0), 0)
  }

  /**
   * The next job for a free slot, in due order, except that a kind that shares its slots
   * out gives its turn to the share with the fewest jobs running (claimShared), skipping
   * shares at their limit: a job of the other kinds that fell due earlier goes first.
   */
  private async claimOne(kinds: JobKind[]): Promise<JobRow[]> {
    const shared = kinds.filter((kind) => kind.share_running_max !== undefined)
    const others = kinds.filter((kind) => kind.share_running_max === undefined).map(
      (kind) => kind.kind)
    const times = this.times()
    const othersDue = shared.length > 0 ? await oldestDue(this.db, others, times) : undefined
    const sharedRow = await this.claimSharedKinds(shared, othersDue)
    if (sharedRow) return [sharedRow]
    const rows = await claimDue(this.db, this.owner, others, times, 1, this.groups)
    if (rows.length > 0 || othersDue === undefined) return rows
    // The older job of another kind could not be taken (its exclusive group is busy, or
    // another instance took it): the shared kinds need not wait for it.
    const row = await this.claimSharedKinds(shared, undefined)
    return row ? [row] : []
  }

  private async claimSharedKinds(kinds: JobKind[],
      dueBefore: Date | undefined): Promise<JobRow | undefined> {
    for (const kind of kinds) {
      const row = await claimShared(this.db, this.owner, this.sharedClaimOf(kind, dueBefore),
        this.times())
      if (row) return row
    }
    return undefined
  }

  private sharedClaimOf(kind: JobKind, dueBefore: Date | undefined): SharedClaim {
    return { kind: kind.kind, running_max: kind.share_running_max!,
      excluded: this.sharesAtLimit(kind), due_before: dueBefore }
  }

  /** This instance's slots for jobs of the kind. */
  private slotsOf(kind: JobKind): number {
    if (kind.pool_slots !== undefined) return kind.pool_slots
    const left = kind.slots_left_to_others ?? 0
    return left === 0 ? this.options.concurrency_max
      : Math.max(1, this.options.concurrency_max - left)
  }

  /**
   * Shares that take no more of this instance's slots for the kind now: those at
   * `share_running_max` here, or holding all but one of the kind's slots here, which stays
   * with the other shares (when the kind has two slots or more).
   */
  private sharesAtLimit(kind: JobKind): string[] {
    const slots = this.slotsOf(kind)
    const limit = Math.min(kind.share_running_max!, slots > 1 ? slots - 1 : 1)
    return [...(this.runningByShare.get(kind.kind) ?? new Map<string, number>())].filter(
      ([, n]) => n >= limit).map(([share]) => share)
  }

  private hasRoomFor(kind: JobKind): boolean {
    if (!kind.slots_left_to_others) return true
    return (this.runningByKind.get(kind.kind) ?? 0) < this.slotsOf(kind)
  }

  private launch(row: JobRow): void {
    const shared = this.kindOf(row.kind).share_running_max !== undefined
    countIn(this.runningByKind, row.kind, 1)
    if (shared) countIn(this.sharesOf(row.kind), row.share, 1)
    const run: Promise<void> = this.execute(row)
      .then(() => undefined, () => undefined)
      .finally(() => {
        this.running.delete(run)
        this.launched.delete(row.id)
        countIn(this.runningByKind, row.kind, -1)
        if (shared) countIn(this.sharesOf(row.kind), row.share, -1)
        // A slot is free: more may be due, this job's own follow-up among them.
        this.fillSlots()
      })
    this.running.add(run)
    this.launched.set(row.id, run)
  }

  private sharesOf(kind: string): Map<string, number> {
    let shares = this.runningByShare.get(kind)
    if (!shares) this.runningByShare.set(kind, (shares = new Map()))
    return shares
  }

  /**
   * Fills free slots at once, without the rest of a tick (planning, events): a finished
   * job's follow-up (a webhook lane's next delivery) starts now, not at the next poll.
   */
  private fillSlots(): void {
    if (this.stopped || this.advancing > 0) return
    if (this.filling) {
      // The claim under way chose its kinds before this slot was free: it would leave the
      // slot empty until the next poll.
      this.refill = true
      return
    }
    this.filling = this.claimAndRun()
      .catch((error: unknown) => this.log.warn({ err: error },
        'jobs: claiming follow-up work failed; the next tick tries again'))
      .finally(() => {
        this.filling = undefined
        if (this.refill) {
          this.refill = false
          this.fillSlots()
        }
      })
  }

  private async plan(): Promise<void> {
    for (const kind of this.kinds.values()) {
      if (!kind.plan) continue
      const seen = this.planned.get(kind.kind) ?? []
      for (const partner of this.plannedFor(kind)) {
        await onPartnerClock(partner, async () => {
          for (const job of kind.plan!(this.clock.now())) {
            const key = partnerKey(job.key, partner)
            if (seen.includes(key)) continue
            await this.enqueue(this.db, { kind: kind.kind, ...job, key })
            seen.push(key)
            if (seen.length > planned_keys_max) seen.shift()
          }
        })
      }
      this.planned.set(kind.kind, seen)
    }
  }

  /** Whose clocks a recurring kind is planned by: the bank's, and partners' ahead of it. */
  private plannedFor(kind: JobKind): (string | undefined)[] {
    return kind.per_partner ? [undefined, ...this.leads.ahead()] : [undefined]
  }

  private async execute(row: JobRow): Promise<Record<string, unknown> | undefined> {
    const kind = this.kindOf(row.kind)
    const lost = new AbortController()
    const heartbeat = setInterval(() => {
      renewLease(this.db, row.id, this.owner, this.times()).then(
        (held) => held || lost.abort(new Error('lease lost')),
        () => undefined,
      )
    }, Math.max(250, Math.floor(row.lease_ms / 3)))
    heartbeat.unref()
    const context: JobContext = {
      id: row.id,
      kind: row.kind,
      key: row.key,
      payload: (row.payload ?? {}) as Record<string, unknown>,
      attempt: row.attempts,
      signal: lost.signal,
    }
    try {
      const partner = row.clock_partner === '' ? undefined : row.clock_partner
      const result = (await onPartnerClock(partner, () => kind.run(context))) ?? null
      clearInterval(heartbeat)
      const now = this.now()
      const ending: JobEnding = kind.next
        ? { state: 'queued', due_at: kind.next(now), result, last_error: null,
          reset_attempts: true }
        : { state: 'done', result, last_error: null }
      await this.finish(row, ending)
      return result ?? undefined
    } catch (error) {
      clearInterval(heartbeat)
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 500)
      const dead = row.attempts >= row.attempts_max
      const due = new Date(this.now().getTime() + backoffMs(kind, row.attempts))
      this.log.warn({ job: row.id, kind: row.kind, attempt: row.attempts, dead, err: error },
        'job failed')
      await this.finish(row, dead ? { state: 'dead', last_error: message }
        : { state: 'queued', due_at: due, last_error: message })
      throw error
    }
  }

  private async finish(row: JobRow, ending: JobEnding): Promise<void> {
    try {
      const held = await finishRun(this.db, row.id, this.owner, this.now(), ending)
      if (!held) this.log.warn({ job: row.id, kind: row.kind },
        'job finished after another instance took it over')
    } catch (error) {
      // Left `running`: its lease expires and the job is run again (handlers allow it).
      this.log.warn({ job: row.id, err: error },
        'job outcome not recorded; it runs again after its lease')
    }
  }

  private kindOf(name: string): JobKind {
    const kind = this.kinds.get(name)
    assert(kind, `no job kind ${name} is registered`)
    return kind
  }
}

/** How far ahead a partner's advance plans its recurring work at a time (its time). */
const partner_plan_window_ms = 86_400_000

/**
 * The recurring work of a partner's advance, planned a window at a time up to its target:
 * `ahead(now)` plans up to a window past `now` (not past the target) and answers how far
 * the work is planned.
 */
class PartnerPlanning {
  private to: Date
  constructor(private readonly from: Date, private readonly target: Date,
      private readonly planBetween: (from: Date, to: Date) => Promise<void>) {
    this.to = from
  }

  async ahead(now: Date): Promise<Date> {
    const want = Math.min(this.target.getTime(), now.getTime() + partner_plan_window_ms)
    if (want > this.to.getTime() || this.to === this.from) {
      await this.planBetween(this.to, new Date(want))
      this.to = new Date(Math.max(want, this.to.getTime()))
    }
    return this.to
  }
}

/** A recurring job's key when planned by a partner's clock: the partner's own. */
function partnerKey(key: string, partner: string | undefined): string {
  return partner === undefined ? key : `${key}@${partner}`
}

/** Adds `by` to a count kept in a map; a count that reaches 0 leaves the map. */
function countIn<K>(counts: Map<K, number>, key: K, by: number): void {
  const n = (counts.get(key) ?? 0) + by
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}

/** Exponential backoff: base, 2 × base, 4 × base, … capped at the kind's maximum. */
export function backoffMs(kind: Pick<JobKind, 'backoff_base_ms' | 'backoff_max_ms'>,
    attempt: number): number {
  return Math.min(kind.backoff_max_ms, kind.backoff_base_ms * 2 ** Math.min(30,
    Math.max(0, attempt - 1)))
}
