import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable } from 'kysely'
import type { Database, JobsTable, JobState } from '../db/schema.ts'

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
}

/**
 * Inserts the job unless one with its kind and key exists; returns the new row, if any.
 * With `owner` the job starts out taken by that owner (its first run is about to start
 * here), so no other instance can take it between the insert and the run.
 */
export async function insertJob(db: Kysely<Database>, job: NewJob, times: Date | JobTimes, owner?: string): Promise<JobRow | undefined> {
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
      created_at: now,
      updated_at: now,
      ...(owner
        ? { lease_owner: owner, lease_expires_at: new Date(lease.getTime() + job.lease_ms), attempts: 1, started_at: now }
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
): Promise<JobRow[]> {
  if (limit <= 0 || kinds.length === 0) return []
  const now = timesOf(times)
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

/** Takes one job by id now, whatever its due time, unless another owner holds a live lease. */
export async function claimById(db: Kysely<Database>, id: string, owner: string, times: Date | JobTimes): Promise<JobRow | undefined> {
  const now = timesOf(times)
  const { rows } = await sql<JobRow>`
    update jobs as j set ${takenBy(owner, now)}
    where j.id = ${id}
      and (j.state = 'queued' or (j.state = 'running' and j.lease_expires_at <= ${now.lease}))
    returning j.*`.execute(db)
  return rows[0]
}

/** Extends the lease; false when the job is no longer this owner's (it was taken over). */
export async function renewLease(db: Kysely<Database>, id: string, owner: string, times: Date | JobTimes): Promise<boolean> {
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
export async function finishRun(db: Kysely<Database>, id: string, owner: string, now: Date, ending: JobEnding): Promise<boolean> {
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

export async function findJobByKey(db: Kysely<Database>, kind: string, key: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('kind', '=', kind).where('key', '=', key).executeTakeFirst()
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
export async function nextQueued(db: Kysely<Database>, kinds: string[], until: Date): Promise<JobRow | undefined> {
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

/** Puts a dead job back in the queue, due now, with its attempts counted afresh. */
export async function requeueDead(db: Kysely<Database>, id: string, now: Date): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ state: 'queued', due_at: now, attempts: 0, updated_at: now, finished_at: null })
    .where('id', '=', id)
    .where('state', '=', 'dead')
    .returningAll()
    .executeTakeFirst()
}
