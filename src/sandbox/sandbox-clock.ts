import { sql, type Kysely } from 'kysely'
import { ManualClock, type Clock } from '../clock.ts'
import type { Database } from '../schema.ts'

// The sandbox's clock. Bank time is wall time plus an offset kept in `sandbox_clock`, one
// row shared by every instance, so that all of them work by one time; an advance raises
// the offset, and the offset never falls, so bank time never moves back.
//
// `Clock.now()` is synchronous and called everywhere, so the offset is cached: each
// instance re-reads it on every job-runner tick (`refresh`), and the instance that moves
// the clock knows the new offset at once. Between an advance on one instance and the next
// tick of another, that other instance may be behind by at most one poll interval.

/** A bank clock the sandbox can move forward. */
export interface MovableClock extends Clock {
  /** Re-reads what other instances may have changed. */
  refresh(): Promise<void>
  /** Moves bank time forward to `at`; a time at or before now leaves the clock as it is. */
  moveTo(at: Date): Promise<void>
}

export class SandboxClock implements MovableClock {
  private offsetMs = 0

  constructor(
    private readonly db: Kysely<Database>,
    private readonly wall: Clock,
  ) {}

  now(): Date {
    return new Date(this.wall.now().getTime() + this.offsetMs)
  }

  async refresh(): Promise<void> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_ms').where('id', '=', 1)
      .executeTakeFirstOrThrow()
    this.raise(Number(row.offset_ms))
  }

  async moveTo(at: Date): Promise<void> {
    const wanted = at.getTime() - this.wall.now().getTime()
    // `greatest` keeps the clock from moving back when another instance moved it further.
    const { rows } = await sql<{ offset_ms: string | bigint }>`
      update sandbox_clock set offset_ms = greatest(offset_ms, ${Math.max(0, wanted)}::bigint), updated_at = now()
      where id = 1
      returning offset_ms`.execute(this.db)
    this.raise(Number(rows[0]?.offset_ms ?? 0))
  }

  private raise(offsetMs: number): void {
    // The cache only rises too: a stale read never takes an instance's time back.
    if (Number.isSafeInteger(offsetMs) && offsetMs > this.offsetMs) this.offsetMs = offsetMs
  }
}

/**
 * A test's injected ManualClock as the sandbox's clock: the test's clock is the bank's
 * time, and an advance moves that clock, so tests drive `ops.sandbox.clock.advance` end
 * to end and read the same time the bank does. Nothing is kept in the database.
 */
export class ManualSandboxClock implements MovableClock {
  constructor(private readonly manual: ManualClock) {}

  now(): Date {
    return this.manual.now()
  }

  async refresh(): Promise<void> {}

  async moveTo(at: Date): Promise<void> {
    if (at.getTime() > this.manual.now().getTime()) this.manual.set(at)
  }
}

/** The sandbox's clock over the clock a bank was given (the system clock, or a test's). */
export function sandboxClockFor(db: Kysely<Database>, given: Clock): MovableClock {
  return given instanceof ManualClock ? new ManualSandboxClock(given) : new SandboxClock(db, given)
}
