import Holidays from 'date-holidays'

// South African business days and SAST wall-clock times. SAST is UTC+2
// all year (no daylight saving), so conversion is a fixed offset. Public holidays come
// from date-holidays' ZA rules (Public Holidays Act, a Sunday holiday moves to Monday),
// plus the one-off holidays declared under the Act's section 2A: the bank ships the list
// below, and operators add to it (BANK_DECLARED_HOLIDAYS) when one is declared before a
// release of the bank carries it.

export const sast_offset_ms = 2 * 3600 * 1000

export interface SastTime {
  /** YYYY-MM-DD in SAST. */
  date: string
  /** Minutes since 00:00 SAST. */
  minutes: number
}

export function toSast(at: Date): SastTime {
  const shifted = new Date(at.getTime() + sast_offset_ms)
  return { date: shifted.toISOString().slice(0, 10), minutes: shifted.getUTCHours() * 60
    + shifted.getUTCMinutes() }
}

/** The UTC instant of a SAST wall-clock time. */
export function fromSast(date: string, minutes = 0): Date {
  return new Date(Date.parse(`${date}T00:00:00Z`) - sast_offset_ms + minutes * 60_000)
}

/**
 * The plan of a job run once a day at a SAST time: today's run, keyed by the SAST date, due
 * at `minutes` past SAST midnight (a `plan` for the job runner).
 */
export function dailyAtSast(now: Date, minutes: number): Array<{ key: string; due_at: Date }> {
  const today = toSast(now).date
  return [{ key: today, due_at: fromSast(today, minutes) }]
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

/**
 * The one-off public holidays declared by the President under section 2A of the Public
 * Holidays Act, shipped as the default. date-holidays lacks most of them;
 * the two it has are listed too, so that the list stands on its own. Add a day here when
 * one is gazetted.
 */
export const shipped_declared_holidays: ReadonlyMap<string, string> = new Map([
  ['2016-08-03', 'local government elections'],
  // Christmas Day fell on a Sunday, so its Monday coincided with the Day of Goodwill.
  ['2016-12-27', 'declared day after Christmas on a Sunday'],
  ['2019-05-08', 'national and provincial elections'],
  ['2021-11-01', 'local government elections'],
  ['2022-12-27', 'declared day after Christmas on a Sunday'],
  ['2023-12-15', "the Springboks' Rugby World Cup win (date-holidays has it)"],
  ['2024-05-29', 'national and provincial elections (date-holidays has it)'],
])

export class SouthAfricanCalendar {
  private readonly holidays = new Holidays('ZA')
  private readonly cache = new Map<number, Set<string>>()
  private readonly declared: ReadonlySet<string>

  /** `added`: declared holidays beyond the shipped list (BANK_DECLARED_HOLIDAYS). */
  constructor(added: Iterable<string> = []) {
    this.declared = new Set([...shipped_declared_holidays.keys(), ...added])
  }

  isHoliday(date: string): boolean {
    if (this.declared.has(date)) return true
    const year = Number(date.slice(0, 4))
    let days = this.cache.get(year)
    if (!days) {
      days = new Set(
        this.holidays
          .getHolidays(year)
          .filter((h) => h.type === 'public')
          .map((h) => h.date.slice(0, 10)),
      )
      this.cache.set(year, days)
    }
    return days.has(date)
  }

  isBusinessDay(date: string): boolean {
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay()
    return weekday !== 0 && weekday !== 6 && !this.isHoliday(date)
  }

  /** The date itself if it is a business day, else the next one. */
  onOrAfter(date: string): string {
    let day = date
    for (let i = 0; i < 30 && !this.isBusinessDay(day); i++) day = addDays(day, 1)
    return day
  }

  /** The n-th business day after `date` (n ≥ 1). */
  addBusinessDays(date: string, n: number): string {
    let day = date
    for (let counted = 0; counted < n; ) {
      day = addDays(day, 1)
      if (this.isBusinessDay(day)) counted++
    }
    return day
  }
}
