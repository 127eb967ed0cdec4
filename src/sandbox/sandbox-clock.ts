import { sql, type Kysely } from 'kysely'
import { bankNow, clockPartner, ManualClock, type Clock, type PartnerLeads } from '../clock.ts'
import type { Database } from '../schema.ts'

// The sandbox's clocks. Bank time is wall time plus an offset kept in `sandbox_clock`, one
// row shared by every instance, so that all of them work by one time; an advance raises
// the offset, and the offset never falls, so bank time never moves back.
//
// A partner's time is bank time plus the partner's lead, kept in `sandbox_partner_clocks`
// (none: the partner's clock is the bank's). Work done for a partner runs in its scope
// (src/clock.ts, onPartnerClock), where `now()` answers the partner's time; a partner's
// advance raises its lead only, so no other partner's time moves. An advance of the bank's
// clock moves every partner's clock with it: a partner's clock is never behind the bank's.
//
// `Clock.now()` is synchronous and called everywhere, so the offset and the leads are
// cached: each instance re-reads them on every job-runner tick (`refresh`), and the
// instance that moves a clock knows the new value at once. Between a move on one instance
// and the next tick of another, that other instance may be behind by one poll interval.

/** A bank clock the sandbox can move forward, the bank's and each partner's. */
export interface MovableClock extends Clock, PartnerLeads {
  /** Re-reads what other instances may have changed. */
  refresh(): Promise<void>
  /** Moves bank time forward to `at`; a time at or before now leaves the clock as it is. */
  moveTo(at: Date): Promise<void>
  /**
   * Moves the partner's clock forward to `at` (its time) in the caller's transaction; a
   * time at or before its now leaves it as it is. Answers how much its lead grew.
   */
  movePartnerTo(trx: Kysely<Database>, partnerId: string, at: Date): Promise<number>
  /** The partner's clock back with the bank's (a reset of its sandbox). */
  rejoinPartner(trx: Kysely<Database>, partnerId: string): Promise<void>
}

/** The partners' leads, cached; the database is the truth. */
class PartnerLeadCache {
  private leads = new Map<string, number>()

  leadOf(partnerId: string): number {
    return this.leads.get(partnerId) ?? 0
  }

  ahead(): string[] {
    return [...this.leads.keys()]
  }

  async refresh(db: Kysely<Database>): Promise<void> {
    const rows = await db.selectFrom('sandbox_partner_clocks').select(['partner_id', 'lead_ms'])
      .execute()
    this.leads = new Map(rows.map((row) => [row.partner_id, Number(row.lead_ms)]))
  }

  async raise(trx: Kysely<Database>, partnerId: string, wantedMs: number): Promise<number> {
    const row = await trx.selectFrom('sandbox_partner_clocks').select('lead_ms')
      .where('partner_id', '=', partnerId).forUpdate().executeTakeFirst()
    const was = Number(row?.lead_ms ?? 0)
    const lead = Math.max(was, Math.round(wantedMs))
    if (lead > was) {
      // `greatest` keeps the clock from moving back when another instance moved it further.
      await sql`
        insert into sandbox_partner_clocks as c (partner_id, lead_ms, updated_at)
        values (${partnerId}, ${lead}::bigint, now())
        on conflict (partner_id) do update
          set lead_ms = greatest(c.lead_ms, excluded.lead_ms), updated_at = now()`.execute(trx)
    }
    if (lead > 0) this.leads.set(partnerId, lead)
    return lead - was
  }

  async rejoin(trx: Kysely<Database>, partnerId: string): Promise<void> {
    await trx.deleteFrom('sandbox_partner_clocks').where('partner_id', '=', partnerId).execute()
    this.leads.delete(partnerId)
  }
}

/** The movable clock over a base time source (wall time plus the shared offset, or a test's). */
abstract class PartnerAwareClock implements MovableClock {
  protected readonly leads = new PartnerLeadCache()

  constructor(protected readonly db: Kysely<Database>) {}

  /** Bank time. */
  protected abstract bank(): number

  now(): Date {
    const partner = clockPartner()
    return new Date(this.bank() + (partner === undefined ? 0 : this.leads.leadOf(partner)))
  }

  leadOf(partnerId: string): number {
    return this.leads.leadOf(partnerId)
  }

  ahead(): string[] {
    return this.leads.ahead()
  }

  async refresh(): Promise<void> {
    await this.leads.refresh(this.db)
  }

  abstract moveTo(at: Date): Promise<void>

  movePartnerTo(trx: Kysely<Database>, partnerId: string, at: Date): Promise<number> {
    return this.leads.raise(trx, partnerId, at.getTime() - this.bank())
  }

  rejoinPartner(trx: Kysely<Database>, partnerId: string): Promise<void> {
    return this.leads.rejoin(trx, partnerId)
  }
}

export class SandboxClock extends PartnerAwareClock {
  private offsetMs = 0

  constructor(db: Kysely<Database>, private readonly wall: Clock) {
    super(db)
  }

  protected bank(): number {
    return bankNow(this.wall).getTime() + this.offsetMs
  }

  override async refresh(): Promise<void> {
    const row = await this.db.selectFrom('sandbox_clock').select('offset_ms').where('id', '=', 1)
      .executeTakeFirstOrThrow()
    this.raise(Number(row.offset_ms))
    await super.refresh()
  }

  async moveTo(at: Date): Promise<void> {
    const wanted = at.getTime() - bankNow(this.wall).getTime()
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
 * to end and read the same time the bank does. The bank's offset is not kept in the
 * database; the partners' leads are.
 */
export class ManualSandboxClock extends PartnerAwareClock {
  constructor(db: Kysely<Database>, private readonly manual: ManualClock) {
    super(db)
  }

  protected bank(): number {
    return this.manual.now().getTime()
  }

  async moveTo(at: Date): Promise<void> {
    if (at.getTime() > this.manual.now().getTime()) this.manual.set(at)
  }
}

/** The sandbox's clock over the clock a bank was given (the system clock, or a test's). */
export function sandboxClockFor(db: Kysely<Database>, given: Clock): MovableClock {
  return given instanceof ManualClock ? new ManualSandboxClock(db, given)
    : new SandboxClock(db, given)
}
