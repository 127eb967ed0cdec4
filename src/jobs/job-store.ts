import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import type { JobsTable, JobState } from './job-tables.ts'

// The SQL of the jobs module; nothing else reads or writes `jobs`.

export type JobRow = Selectable<JobsTable>

/**
 * The two times a take of a job needs. Due times (and backoff) are bank time, which the
 * sandbox may move forward; leases are wall-clock time, so that moving the bank's clock
 * does not make every running job's lease look expired to the other instances.
 */
export interface JobTimes {
  /** Bank time: which queued jobs are due; started_at and updated_at. */
  due: Date
  /** Wall-clock time: when leases expire. */
  lease: Date
}

/** A single Date is both times (a bank whose clock is the wall clock). */
function timesOf(now: Date | JobTimes): JobTimes {
  return now instanceof Date ? { due: now, lease: now } : now
}

export interface NewJob {
  kind: string
  /** Unique per kind: enqueueing the same key again does nothing (a cycle, a batch id). */
  key: string
  payload?: Record<string, unknown>
  due_at: Date
  attempts_max: number
  lease_ms: number
  /**
   * Whose work it is, for a kind that shares its slots out (see claimShared); '' or absent: the
   * bank's own.
   */
  share?: string | undefined
  /** The partner whose sandbox clock the job runs by; '' or absent: the bank's. */
  clock_partner?: string | undefined
}

/**
 * Inserts the job unless one with its kind and key exists; returns the new row, if any.
 * With `owner` the job starts out taken by that owner (its first run is about to start
 * here), so no other instance can take it between the insert and the run.
 */
export async function insertJob(db: Kysely<Database>, job: NewJob, times: Date | JobTimes,
    owner?: string): Promise<JobRow | undefined> {
  const { due: now, lease } = timesOf(times)
  return db
    .insertInto('jobs')
    .values({
      id: randomUUID(),
      kind: job.kind,
      key: job.key,
      payload: JSON.stringify(job.payload ?? {}),
      state: owner ? 'running' : 'queued',
      due_at: job.due_at,
      attempts_max: job.attempts_max,
      lease_ms: job.lease_ms,
      share: job.share ?? '',
      clock_partner: job.clock_partner ?? '',
      created_at: now,
      updated_at: now,
      ...(owner
        ? { lease_owner: owner, lease_expires_at: new Date(lease.getTime() + job.lease_ms),
          attempts: 1, started_at: now }
        : {}),
    })
    .onConflict((oc) => oc.columns(['kind', 'key']).doNothing())
    .returningAll()
    .executeTakeFirst()
}

/** What taking a job sets: its owner, a fresh lease and one more attempt. */
function takenBy(owner: string, { due: now, lease }: JobTimes) {
  return sql`
    state = 'running',
    lease_owner = ${owner},
    lease_expires_at = ${lease}::timestamptz + j.lease_ms * interval '1 millisecond',
    attempts = j.attempts + 1,
    started_at = coalesce(j.started_at, ${now}),
    updated_at = ${now}`
}

/**
 * Kinds whose jobs never run at the same time, on any instance, as any other job of their
 * group (kind → group): work that hands money to a rail submits each payment once, not
 * once per overlapping run. A job of a group counts as running while its lease is live;
 * one whose instance died is taken over once its lease has expired, as any job is.
 */
export type ExclusiveGroups = ReadonlyMap<string, string>

// Taking a job of a group (and checking none of its group runs) happens under one
// transaction-scoped advisory lock, so two instances cannot both see the group idle.
const exclusive_claim_lock_key = 727005

export async function lockExclusiveClaims(trx: Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(exclusive_claim_lock_key)})`.execute(trx)
}

/** The groups with a job running under a live lease (other than `exceptId`). */
export async function busyGroups(trx: Kysely<Database>, groups: ExclusiveGroups, lease: Date,
    exceptId?: string): Promise<Set<string>> {
  if (groups.size === 0) return new Set()
  const { rows } = await sql<{ kind: string }>`
    select distinct kind from jobs
    where kind = any(${[...groups.keys()]}::text[]) and state = 'running' and lease_expires_at > ${lease}
      and id <> ${exceptId ?? '00000000-0000-0000-0000-000000000000'}::uuid`.execute(trx)
  return new Set(rows.map((row) => groups.get(row.kind)!))
}

/**
 * Takes up to `limit` due jobs of the given kinds for `owner`: queued ones whose time has
 * come, and running ones whose lease expired (their instance died or hung). `skip locked`
 * lets instances take different rows at once; the conditional update makes each take final.
 */
export async function claimDue(
  db: Kysely<Database>,
  owner: string,
  kinds: string[],
  times: Date | JobTimes,
  limit: number,
  groups: ExclusiveGroups = new Map(),
): Promise<JobRow[]> {
  if (limit <= 0 || kinds.length === 0) return []
  const now = timesOf(times)
  if (kinds.some((kind) => groups.has(kind))) return claimDueExclusive(db, owner, kinds, now, limit,
    groups)
  const { rows } = await sql<JobRow>`
    with next as (
      select id from jobs
      where kind = any(${kinds}::text[])
        and ((state = 'queued' and due_at <= ${now.due}) or (state = 'running' and lease_expires_at <= ${now.lease}))
      order by due_at, id
      limit ${limit}
      for update skip locked
    )
    update jobs as j set ${takenBy(owner, now)}
    from next where j.id = next.id
    returning j.*`.execute(db)
  return rows
}

/**
 * claimDue when some kinds belong to exclusive groups: at most one job per group, none of a busy
 * group.
 */
async function claimDueExclusive(db: Kysely<Database>, owner: string, kinds: string[],
    now: JobTimes, limit: number, groups: ExclusiveGroups): Promise<JobRow[]> {
  return db.transaction().execute(async (trx) => {
    await lockExclusiveClaims(trx)
    const busy = await busyGroups(trx, groups, now.lease)
    const eligible = kinds.filter((kind) => !busy.has(groups.get(kind) ?? ''))
    if (eligible.length === 0) return []
    const { rows: candidates } = await sql<{ id: string; kind: string }>`
      select id, kind from jobs
      where kind = any(${eligible}::text[])
        and ((state = 'queued' and due_at <= ${now.due}) or (state = 'running' and lease_expires_at <= ${now.lease}))
      order by due_at, id
      -- Room for due jobs of a group beyond its one that may run, which are skipped below.
      limit ${limit + 16}
      for update skip locked`.execute(trx)
    const ids: string[] = []
    const taken = new Set<string>()
    for (const candidate of candidates) {
      if (ids.length >= limit) break
      const group = groups.get(candidate.kind)
      if (group !== undefined) {
        if (taken.has(group)) continue
        taken.add(group)
      }
      ids.push(candidate.id)
    }
    if (ids.length === 0) return []
    const { rows } = await sql<JobRow>`
      update jobs as j set ${takenBy(owner, now)}
      where j.id = any(${ids}::uuid[])
      returning j.*`.execute(trx)
    return rows.sort((a, b) => a.due_at.getTime() - b.due_at.getTime() || (a.id < b.id ? -1 : 1))
  })
}

/**
 * When the oldest job of these kinds that is due (or whose lease expired) fell due, bank
 * time; undefined when none is. A look only: nothing is taken.
 */
export async function oldestDue(db: Kysely<Database>, kinds: string[],
    times: Date | JobTimes): Promise<Date | undefined> {
  if (kinds.length === 0) return undefined
  const now = timesOf(times)
  const { rows } = await sql<{ due_at: Date }>`
    select due_at from jobs
    where kind = any(${kinds}::text[])
      and ((state = 'queued' and due_at <= ${now.due}) or (state = 'running' and lease_expires_at <= ${now.lease}))
    order by due_at, id
    limit 1`.execute(db)
  return rows[0]?.due_at
}

/**
 * A claim of a kind whose jobs are done on someone's behalf (each names a `share`, a
 * partner): no share may hold more than `running_max` of the kind's running jobs, counted
 * on every instance, and the next job goes to the share with the fewest running.
 */
export interface SharedClaim {
  kind: string
  /** Jobs of one share running at once, across all instances. */
  running_max: number
  /** Shares this instance gives none of its slots to now (they hold their part of them). */
  excluded: readonly string[]
  /**
   * Take a job only if it fell due before this (bank time): older work of other kinds goes first.
   */
  due_before?: Date | undefined
}

// Shared claims take one transaction-scoped advisory lock, so two instances never both see
// a share below its limit and both take one more: the limit holds across instances exactly.
const shared_claim_lock_key = 727006

/**
 * The share a shared claim serves next: its earliest due job's time and how many of its jobs run.
 */
interface ShareTurn {
  share: string
  due_at: Date
  running: number
}

/**
 * Takes the next job of a shared kind for `owner`: of the shares below their limit (and
 * not excluded), the one with the fewest jobs running anywhere, then the one whose job has
 * waited longest; its earliest due job (or one whose lease expired). So a share whose jobs
 * hang (a receiver that never answers) holds at most `running_max` slots, and a free slot
 * goes to the others first, however long its own backlog.
 */
export async function claimShared(db: Kysely<Database>, owner: string, claim: SharedClaim,
    times: Date | JobTimes): Promise<JobRow | undefined> {
  return (await claimSharedMany(db, owner, claim, times, 1))[0]
}

/**
 * Takes up to `count` jobs of a shared kind for `owner` in one transaction, one from each of
 * the shares whose turn comes next (as claimShared takes one): a pool with many free slots
 * fills them with one statement per round, not one transaction per job, so the shares that
 * come after a crowd of others (hanging receivers' first deliveries) wait one round, not all
 * of theirs.
 */
export async function claimSharedMany(db: Kysely<Database>, owner: string, claim: SharedClaim,
    times: Date | JobTimes, count: number): Promise<JobRow[]> {
  const now = timesOf(times)
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(shared_claim_lock_key)})`.execute(trx)
    const turns = (await nextShareTurns(trx, claim, now, count)).filter((turn) =>
      !claim.due_before || turn.due_at.getTime() < claim.due_before.getTime())
    if (turns.length === 0) return []
    // Each share's earliest job, queued and due or running under an expired lease; the
    // update checks again, so a job that claimById took meanwhile is left alone.
    const { rows } = await sql<JobRow>`
      with turn as (
        select share, ord from unnest(${turns.map((t) => t.share)}::text[])
          with ordinality as t(share, ord)
      ),
      next as (
        select pick.id, turn.ord from turn cross join lateral (
          select id, due_at from (
            (select id, due_at from jobs
              where kind = ${claim.kind} and share = turn.share and state = 'queued' and due_at <= ${now.due}
              order by due_at, id limit 1)
            union all
            (select id, due_at from jobs
              where kind = ${claim.kind} and share = turn.share and state = 'running' and lease_expires_at <= ${now.lease}
              order by due_at, id limit 1)
          ) candidates
          order by due_at, id limit 1
        ) pick
      )
      update jobs as j set ${takenBy(owner, now)}
      from next where j.id = next.id
        and ((j.state = 'queued' and j.due_at <= ${now.due}) or (j.state = 'running' and j.lease_expires_at <= ${now.lease}))
      returning j.*, next.ord`.execute(trx)
    // In the turns' order (an update returns its rows in no set order).
    return (rows as Array<JobRow & { ord: string | number }>)
      .sort((x, y) => Number(x.ord) - Number(y.ord))
      .map(({ ord: _ord, ...row }) => row as JobRow)
  })
}

/**
 * The shares whose turn it is, in turn, at most `count`. `queued` walks the shares with
 * queued jobs of the kind one index probe each (jobs_share_queued: per share its earliest
 * job), so the cost grows with
 * the number of shares, never with one share's backlog; `running` counts live leases
 * (jobs_share_running holds only running jobs).
 */
async function nextShareTurns(trx: Kysely<Database>, claim: SharedClaim,
    now: JobTimes, count: number): Promise<ShareTurn[]> {
  const { rows } = await sql<ShareTurn>`
    with recursive queued as (
      (select share, due_at from jobs
        where kind = ${claim.kind} and state = 'queued'
        order by share, due_at limit 1)
      union all
      select following.share, following.due_at from queued
      cross join lateral (
        select share, due_at from jobs
        where kind = ${claim.kind} and state = 'queued' and share > queued.share
        order by share, due_at limit 1
      ) following
    ),
    running as (
      select share,
        (count(*) filter (where lease_expires_at > ${now.lease}))::int as running,
        min(due_at) filter (where lease_expires_at <= ${now.lease}) as expired_due_at
      from jobs where kind = ${claim.kind} and state = 'running'
      group by share
    ),
    due as (
      select share, min(due_at) as due_at from (
        select share, due_at from queued where due_at <= ${now.due}
        union all
        select share, expired_due_at from running where expired_due_at is not null
      ) candidates
      group by share
    )
    select due.share, due.due_at, coalesce(running.running, 0) as running
    from due left join running on running.share = due.share
    where coalesce(running.running, 0) < ${claim.running_max}
      and not (due.share = any(${[...claim.excluded]}::text[]))
    order by 3, due.due_at, due.share
    limit ${count}`.execute(trx)
  return rows
}

/** Takes one job by id now, whatever its due time, unless another owner holds a live lease. */
export async function claimById(
  db: Kysely<Database>,
  id: string,
  owner: string,
  times: Date | JobTimes,
  groups: ExclusiveGroups = new Map(),
): Promise<JobRow | undefined> {
  const now = timesOf(times)
  if (groups.size > 0) {
    return db.transaction().execute(async (trx) => {
      await lockExclusiveClaims(trx)
      const job = await trx.selectFrom('jobs').select('kind').where('id', '=', id)
        .executeTakeFirst()
      const group = job && groups.get(job.kind)
      if (group !== undefined && (await busyGroups(trx, groups, now.lease, id)).has(
        group)) return undefined
      return claimByIdNow(trx, id, owner, now)
    })
  }
  return claimByIdNow(db, id, owner, now)
}

async function claimByIdNow(db: Kysely<Database>, id: string, owner: string,
    now: JobTimes): Promise<JobRow | undefined> {
  const { rows } = await sql<JobRow>`
    update jobs as j set ${takenBy(owner, now)}
    where j.id = ${id}
      and (j.state = 'queued' or (j.state = 'running' and j.lease_expires_at <= ${now.lease}))
    returning j.*`.execute(db)
  return rows[0]
}

/** Extends the lease; false when the job is no longer this owner's (it was taken over). */
export async function renewLease(db: Kysely<Database>, id: string, owner: string,
    times: Date | JobTimes): Promise<boolean> {
  const now = timesOf(times)
  const result = await sql`
    update jobs set lease_expires_at = ${now.lease}::timestamptz + lease_ms * interval '1 millisecond', updated_at = ${now.due}
    where id = ${id} and lease_owner = ${owner} and state = 'running'`.execute(db)
  return Number(result.numAffectedRows) === 1
}

export interface JobEnding {
  state: Exclude<JobState, 'running'>
  due_at?: Date
  result?: Record<string, unknown> | null
  last_error?: string | null
  /** Re-armed recurring jobs start counting attempts afresh. */
  reset_attempts?: boolean
}

/** Ends this owner's run of a job; false when the job was taken over meanwhile. */
export async function finishRun(db: Kysely<Database>, id: string, owner: string, now: Date,
    ending: JobEnding): Promise<boolean> {
  const done = ending.state === 'done' || ending.state === 'dead'
  const result = await db
    .updateTable('jobs')
    .set({
      state: ending.state,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
      ...(ending.due_at ? { due_at: ending.due_at } : {}),
      ...(ending.result !== undefined ? { result: JSON.stringify(ending.result) } : {}),
      ...(ending.last_error !== undefined ? { last_error: ending.last_error } : {}),
      ...(ending.reset_attempts ? { attempts: 0 } : {}),
      ...(done ? { finished_at: now } : {}),
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'running')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function findJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findJobByKey(db: Kysely<Database>, kind: string,
    key: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('kind', '=', kind).where('key', '=', key)
    .executeTakeFirst()
}

export async function listJobs(
  db: Kysely<Database>,
  filter: { state?: JobState | undefined; kind?: string | undefined; limit: number },
): Promise<JobRow[]> {
  let query = db.selectFrom('jobs').selectAll()
  if (filter.state) query = query.where('state', '=', filter.state)
  if (filter.kind) query = query.where('kind', '=', filter.kind)
  return query.orderBy('updated_at', 'desc').orderBy('id').limit(filter.limit).execute()
}

/**
 * The earliest queued job of the given kinds due at or before `until` (bank time), in the
 * order the runner takes them (due time, then id); the sandbox's advance walks them.
 */
export async function nextQueued(db: Kysely<Database>, kinds: string[],
    until: Date): Promise<JobRow | undefined> {
  if (kinds.length === 0) return undefined
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('kind', 'in', kinds)
    .where('state', '=', 'queued')
    .where('due_at', '<=', until)
    .orderBy('due_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

/**
 * The partner's earliest queued job of these kinds due by `until` (bank time), if any.
 */
export async function nextQueuedOfPartner(db: Kysely<Database>, partnerId: string,
    kinds: string[], until: Date): Promise<JobRow | undefined> {
  if (kinds.length === 0) return undefined
  return db.selectFrom('jobs').selectAll()
    .where('clock_partner', '=', partnerId)
    .where('state', '=', 'queued')
    .where('kind', 'in', kinds)
    .where('due_at', '<=', until)
    .orderBy('due_at').orderBy('id').limit(1)
    .executeTakeFirst()
}

/**
 * A partner's clock moved `ms` ahead: its queued jobs fall due that much sooner in bank
 * time (in the transaction that moved the clock).
 */
export async function shiftPartnerJobs(db: Kysely<Database>, partnerId: string,
    ms: number): Promise<void> {
  if (ms <= 0) return
  await sql`
    update jobs set due_at = due_at - ${ms} * interval '1 millisecond'
    where clock_partner = ${partnerId} and state = 'queued'`.execute(db)
}

/** Puts a dead job back in the queue, due now, with its attempts counted afresh. */
export async function requeueDead(db: Kysely<Database>, id: string,
    now: Date): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ state: 'queued', due_at: now, attempts: 0, updated_at: now, finished_at: null })
    .where('id', '=', id)
    .where('state', '=', 'dead')
    .returningAll()
    .executeTakeFirst()
}
