import { addDays, fromSast, toSast, type SouthAfricanCalendar } from '../calendar/sa-calendar.ts'

// The dates of debit orders, as pure functions of a date, the clock and the South African
// calendar (docs/guides/debit-orders.md). No database: create, cancel and the collection run all
// ask the same questions here, so they cannot disagree.
//
// Dates are `YYYY-MM-DD` in SAST; instants are UTC `Date`s, turned into SAST here.

export type DebitFrequency = 'once_off' | 'weekly' | 'monthly' | 'annually'

/** A new order's collection date is at least this many SA business days after today (SAST). */
export const collection_lead_business_days = 2
/** Collections run from 00:00 SAST up to (not including) this minute of a business day: 06:00. */
export const collection_window_end_minutes = 6 * 60
/** Cancel is allowed until this long before 00:00 SAST of the collection date. */
export const cancel_notice_ms = 24 * 3600 * 1000
/**
 * Bounds the search for a next date (100 years of weekly collections); a loop that runs out is a
 * bug.
 */
const occurrences_max = 100 * 53

/**
 * The earliest collection date a new order may have: the second SA business day after
 * today in SAST (created on a Monday → Wednesday; on a Friday → Tuesday; on a Saturday →
 * Tuesday). Whatever the time of day: the lead time counts whole business days.
 */
export function earliestCollectionDate(now: Date, calendar: SouthAfricanCalendar): string {
  return calendar.addBusinessDays(toSast(now).date, collection_lead_business_days)
}

/** A requested date that is not a business day moves forward to the next business day. */
export function toCollectionDay(date: string, calendar: SouthAfricanCalendar): string {
  return calendar.onOrAfter(date)
}

/** The last business day of a month (1–12). */
export function lastBusinessDayOfMonth(year: number, month: number,
    calendar: SouthAfricanCalendar): string {
  let day = formatDate(year, month, daysInMonth(year, month))
  while (!calendar.isBusinessDay(day)) day = addDays(day, -1)
  return day
}

/**
 * The `n`-th occurrence (n = 0 is the first) of a schedule whose first collection was
 * asked for on `anchor`, before it is moved to a business day: weekly adds 7 days each
 * time; monthly keeps the anchor's day of month, or takes the month's last business day
 * when the month has no such day (the 31st in April, the 29th–31st in February); annually
 * keeps month and day (29 February → February's last business day in other years).
 */
export function scheduledDate(anchor: string, frequency: DebitFrequency, n: number,
    calendar: SouthAfricanCalendar): string {
  if (n === 0 || frequency === 'once_off') return anchor
  const { year, month, day } = parseDate(anchor)
  switch (frequency) {
    case 'weekly':
      return addDays(anchor, 7 * n)
    case 'monthly': {
      const total = month - 1 + n
      return dayOrLastBusinessDay(year + Math.floor(total / 12), (total % 12) + 1, day, calendar)
    }
    case 'annually':
      return dayOrLastBusinessDay(year + n, month, day, calendar)
  }
}

/** The `n`-th occurrence's collection date: its scheduled date moved to a business day. */
export function collectionDateAt(anchor: string, frequency: DebitFrequency, n: number,
    calendar: SouthAfricanCalendar): string {
  return toCollectionDay(scheduledDate(anchor, frequency, n, calendar), calendar)
}

export interface NextCollectionQuestion {
  /** The date the first collection was asked for (its day of month anchors a monthly schedule). */
  anchor: string
  frequency: DebitFrequency
  /** The collection date of the occurrence just finished (not the day a retry collected it). */
  after: string
  /** Recurring orders: the last day an occurrence may be scheduled on. */
  end_date: string | null
}

/**
 * The collection date after `after`, or null when the schedule has ended: once-off orders
 * have none, and a recurring order has none whose scheduled date (before moving to a
 * business day) is after `end_date`. An occurrence scheduled on or before `end_date` that
 * moves past it (a holiday on the end date) is still collected: the partner asked for it.
 */
export function nextCollectionDate(question: NextCollectionQuestion,
    calendar: SouthAfricanCalendar): string | null {
  const { anchor, frequency, after, end_date } = question
  if (frequency === 'once_off') return null
  for (let n = Math.max(1, roughOccurrence(anchor, frequency, after) - 1); n < occurrences_max;
      n++) {
    const scheduled = scheduledDate(anchor, frequency, n, calendar)
    if (end_date !== null && scheduled > end_date) return null
    const date = toCollectionDay(scheduled, calendar)
    if (date > after) return date
  }
  throw new Error(`no next collection date within ${occurrences_max} occurrences of ${anchor}`)
}

/**
 * The last instant a scheduled order may be cancelled: 24 hours before 00:00 SAST of its
 * collection date ("at least 24 hours before"), so the deadline itself is allowed.
 */
export function cancelDeadline(collectionDate: string): Date {
  return new Date(fromSast(collectionDate).getTime() - cancel_notice_ms)
}

export function canCancelAt(now: Date, collectionDate: string): boolean {
  return now.getTime() <= cancelDeadline(collectionDate).getTime()
}

/** Whether `at` falls in a collection window: a business day, 00:00 to before 06:00 SAST. */
export function isInCollectionWindow(at: Date, calendar: SouthAfricanCalendar): boolean {
  const sast = toSast(at)
  return calendar.isBusinessDay(sast.date) && sast.minutes < collection_window_end_minutes
}

/**
 * The last business day a collection that found insufficient funds is tried again:
 * `tracking_days` business days after its collection date (0: no retry).
 */
export function lastTrackingDate(collectionDate: string, trackingDays: number,
    calendar: SouthAfricanCalendar): string {
  return trackingDays === 0 ? collectionDate : calendar.addBusinessDays(collectionDate,
    trackingDays)
}

/**
 * When a collection tried on `today` found insufficient funds: the business day to try
 * again, or null when its tracking days have run out.
 */
export function nextTrackingDate(collectionDate: string, trackingDays: number, today: string,
    calendar: SouthAfricanCalendar): string | null {
  const next = calendar.addBusinessDays(today, 1)
  return next <= lastTrackingDate(collectionDate, trackingDays, calendar) ? next : null
}

function dayOrLastBusinessDay(year: number, month: number, day: number,
    calendar: SouthAfricanCalendar): string {
  return day <= daysInMonth(year, month) ? formatDate(year, month, day)
    : lastBusinessDayOfMonth(year, month, calendar)
}

/** An occurrence index at or just past the one scheduled near `date` (a start for the search). */
function roughOccurrence(anchor: string, frequency: Exclude<DebitFrequency, 'once_off'>,
    date: string): number {
  if (date <= anchor) return 0
  const a = parseDate(anchor)
  const d = parseDate(date)
  switch (frequency) {
    case 'weekly':
      return Math.floor((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${anchor}T00:00:00Z`)) / (
        7 * 86_400_000))
    case 'monthly':
      return (d.year - a.year) * 12 + (d.month - a.month)
    case 'annually':
      return d.year - a.year
  }
}

function parseDate(date: string): { year: number; month: number; day: number } {
  return { year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)),
    day: Number(date.slice(8, 10)) }
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

function formatDate(year: number, month: number, day: number): string {
  const digits = (n: number, width: number) => String(n).padStart(width, '0')
  return `${digits(year, 4)}-${digits(month, 2)}-${digits(day, 2)}`
}
