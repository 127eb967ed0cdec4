import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SouthAfricanCalendar } from '../../src/calendar/sa-calendar.ts'
import {
  canCancelAt,
  cancelDeadline,
  collectionDateAt,
  earliestCollectionDate,
  isInCollectionWindow,
  lastBusinessDayOfMonth,
  lastTrackingDate,
  nextCollectionDate,
  nextTrackingDate,
  toCollectionDay,
} from '../../src/debit/debit-schedule.ts'

// The dates of debit orders (docs/guides/debit-orders.md): lead time, moving to business days,
// recurring schedules and end dates, the cancel deadline, the collection window and the
// tracking days of an insufficient-funds retry. 2026-11-23 is a Monday; 2026-12-16 (Day of
// Reconciliation) and 2026-12-25 are public holidays, 2026-12-26 a Saturday; Women's Day
// 2026-08-09 is a Sunday, so Monday 2026-08-10 is the holiday.

const calendar = new SouthAfricanCalendar()

test('debit schedule - the earliest collection date is the second business day after today in SAST', () => {
  // Monday → Wednesday
  assert.equal(earliestCollectionDate(new Date('2026-11-23T08:00:00Z'), calendar), '2026-11-25')
  // Monday 23:59:59 SAST
  assert.equal(earliestCollectionDate(new Date('2026-11-23T21:59:59Z'), calendar), '2026-11-25')
  // Monday 00:00 SAST, Sunday in UTC
  assert.equal(earliestCollectionDate(new Date('2026-11-22T22:00:00Z'), calendar), '2026-11-25')
  // still Sunday in SAST
  assert.equal(earliestCollectionDate(new Date('2026-11-22T21:59:59Z'), calendar), '2026-11-24')
  // Tuesday 00:00 SAST
  assert.equal(earliestCollectionDate(new Date('2026-11-23T22:00:00Z'), calendar), '2026-11-26')
})

test('debit schedule - the lead time skips weekends, public holidays and declared holidays', () => {
  // Friday → Tuesday
  assert.equal(earliestCollectionDate(new Date('2026-11-27T08:00:00Z'), calendar), '2026-12-01')
  // Saturday → Tuesday
  assert.equal(earliestCollectionDate(new Date('2026-11-28T08:00:00Z'), calendar), '2026-12-01')
  // over 16 December
  assert.equal(earliestCollectionDate(new Date('2026-12-14T08:00:00Z'), calendar), '2026-12-17')
  // over Christmas and the weekend
  assert.equal(earliestCollectionDate(new Date('2026-12-23T08:00:00Z'), calendar), '2026-12-28')
  // over the Sunday holiday's Monday
  assert.equal(earliestCollectionDate(new Date('2026-08-07T08:00:00Z'), calendar), '2026-08-12')
  const declared = new SouthAfricanCalendar(new Set(['2026-11-27']))
  assert.equal(earliestCollectionDate(new Date('2026-11-25T08:00:00Z'), declared), '2026-11-30')
})

test('debit schedule - a date that is not a business day moves forward to the next one', () => {
  assert.equal(toCollectionDay('2026-11-25', calendar), '2026-11-25')
  assert.equal(toCollectionDay('2026-11-28', calendar), '2026-11-30') // Saturday
  assert.equal(toCollectionDay('2026-12-16', calendar), '2026-12-17')
  // Friday holiday, Saturday holiday, Sunday
  assert.equal(toCollectionDay('2026-12-25', calendar), '2026-12-28')
  // Sunday, then the Monday holiday
  assert.equal(toCollectionDay('2026-08-09', calendar), '2026-08-11')
})

test('debit schedule - monthly on the 31st: the same day, else the month’s last business day, then a business day', () => {
  const dates = Array.from({ length: 12 }, (_, n) => collectionDateAt('2026-01-31', 'monthly', n,
    calendar))
  assert.deepEqual(dates, [
    '2026-02-02', // 31 January is a Saturday
    '2026-02-27', // February has no 31st: its last business day (28th is a Saturday)
    '2026-03-31',
    '2026-04-30', // April has no 31st
    '2026-06-01', // 31 May is a Sunday
    '2026-06-30',
    '2026-07-31',
    '2026-08-31',
    '2026-09-30',
    '2026-11-02', // 31 October is a Saturday
    '2026-11-30',
    '2026-12-31',
  ])
  assert.equal(lastBusinessDayOfMonth(2026, 2, calendar), '2026-02-27')
})

test('debit schedule - next collection dates of weekly, monthly and annual orders', () => {
  const next = (anchor: string, frequency: 'weekly' | 'monthly' | 'annually' | 'once_off',
    after: string, end_date: string | null = null) =>
    nextCollectionDate({ anchor, frequency, after, end_date }, calendar)
  // Monday 10 August is a holiday
  assert.equal(next('2026-08-03', 'weekly', '2026-08-03'), '2026-08-11')
  assert.equal(next('2026-08-03', 'weekly', '2026-08-11'), '2026-08-17') // back on Mondays
  assert.equal(next('2026-01-31', 'monthly', '2026-02-02'), '2026-02-27')
  assert.equal(next('2026-01-31', 'monthly', '2026-02-27'), '2026-03-31')
  // after a date moved into the next month
  assert.equal(next('2026-01-31', 'monthly', '2026-06-01'), '2026-06-30')
  // 16 December 2027 is a Thursday holiday
  assert.equal(next('2026-12-16', 'annually', '2026-12-17'), '2027-12-17')
  assert.equal(next('2028-02-29', 'annually', '2028-02-29'), '2029-02-28') // no 29 February in 2029
  assert.equal(next('2026-11-25', 'once_off', '2026-11-25'), null)
})

test('debit schedule - a recurring order stops after its end date', () => {
  const monthly = (after: string, end_date: string) => nextCollectionDate(
    { anchor: '2026-12-15', frequency: 'monthly', after, end_date }, calendar)
  assert.equal(monthly('2026-12-15', '2027-02-15'), '2027-01-15')
  assert.equal(monthly('2027-01-15', '2027-02-15'), '2027-02-15') // on the end date itself
  assert.equal(monthly('2027-02-15', '2027-02-15'), null)
  assert.equal(monthly('2027-01-15', '2027-02-14'), null) // one day short
  // An occurrence scheduled on the end date that falls on a holiday is still collected, the next
  // business day.
  const weekly = (after: string) => nextCollectionDate({ anchor: '2026-12-09', frequency: 'weekly',
    after, end_date: '2026-12-16' }, calendar)
  assert.equal(weekly('2026-12-09'), '2026-12-17')
  assert.equal(weekly('2026-12-17'), null)
})

test('debit schedule - cancel until 24 hours before 00:00 SAST of the collection date', () => {
  // 00:00 SAST on 2026-11-25 is 2026-11-24T22:00Z; 24 hours before is 2026-11-23T22:00Z.
  assert.equal(cancelDeadline('2026-11-25').toISOString(), '2026-11-23T22:00:00.000Z')
  // 24 h + 1 s before
  assert.equal(canCancelAt(new Date('2026-11-23T21:59:59Z'), '2026-11-25'), true)
  // exactly 24 h before
  assert.equal(canCancelAt(new Date('2026-11-23T22:00:00Z'), '2026-11-25'), true)
  // 24 h − 1 s before
  assert.equal(canCancelAt(new Date('2026-11-23T22:00:01Z'), '2026-11-25'), false)
})

test('debit schedule - the collection window is 00:00 to 06:00 SAST on business days', () => {
  // Tuesday 00:00 SAST
  assert.equal(isInCollectionWindow(new Date('2026-11-23T22:00:00Z'), calendar), true)
  assert.equal(isInCollectionWindow(new Date('2026-11-24T03:59:59Z'), calendar), true) // 05:59:59
  assert.equal(isInCollectionWindow(new Date('2026-11-24T04:00:00Z'), calendar), false) // 06:00
  // Monday 23:59:59
  assert.equal(isInCollectionWindow(new Date('2026-11-23T21:59:59Z'), calendar), false)
  // Saturday 00:00
  assert.equal(isInCollectionWindow(new Date('2026-11-20T22:00:00Z'), calendar), false)
  // 16 December 00:00
  assert.equal(isInCollectionWindow(new Date('2026-12-15T22:00:00Z'), calendar), false)
})

test('debit schedule - insufficient funds is retried on the business days of tracking_days', () => {
  assert.equal(lastTrackingDate('2026-12-11', 3, calendar), '2026-12-17') // Mon 14, Tue 15, Thu 17
  assert.equal(nextTrackingDate('2026-12-11', 3, '2026-12-11', calendar), '2026-12-14')
  assert.equal(nextTrackingDate('2026-12-11', 3, '2026-12-15', calendar), '2026-12-17')
  assert.equal(nextTrackingDate('2026-12-11', 3, '2026-12-17', calendar), null)
  assert.equal(nextTrackingDate('2026-12-11', 0, '2026-12-11', calendar), null)
  assert.equal(lastTrackingDate('2026-12-11', 0, calendar), '2026-12-11')
})
