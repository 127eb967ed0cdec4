import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addDays, fromSast, SouthAfricanCalendar, toSast } from '../../src/calendar/sa-calendar.ts'

const calendar = new SouthAfricanCalendar(new Set(['2026-11-27']))

test('calendar - weekends and Public Holidays Act days are not business days', () => {
  assert.equal(calendar.isBusinessDay('2026-11-23'), true) // a Monday
  assert.equal(calendar.isBusinessDay('2026-11-21'), false) // Saturday
  assert.equal(calendar.isBusinessDay('2026-11-22'), false) // Sunday
  assert.equal(calendar.isBusinessDay('2026-12-16'), false) // Day of Reconciliation
  assert.equal(calendar.isBusinessDay('2026-04-03'), false) // Good Friday
  assert.equal(calendar.isBusinessDay('2026-04-06'), false) // Family Day
})

test('calendar - a Sunday public holiday moves to the Monday', () => {
  // National Women's Day 2026 falls on Sunday 9 August.
  assert.equal(calendar.isBusinessDay('2026-08-10'), false)
  assert.equal(calendar.isBusinessDay('2026-08-11'), true)
})

test('calendar - declared one-off holidays count', () => {
  assert.equal(calendar.isBusinessDay('2026-11-27'), false)
  assert.equal(new SouthAfricanCalendar().isBusinessDay('2026-11-27'), true)
})

test('calendar - next and n-th business days skip weekends and holidays', () => {
  assert.equal(calendar.onOrAfter('2026-12-25'), '2026-12-28')
  assert.equal(calendar.onOrAfter('2026-11-23'), '2026-11-23')
  assert.equal(calendar.addBusinessDays('2026-12-24', 1), '2026-12-28')
  assert.equal(calendar.addBusinessDays('2026-12-24', 2), '2026-12-29')
  assert.equal(calendar.addBusinessDays('2026-11-20', 2), '2026-11-24')
})

test('calendar - SAST is UTC+2 all year, across midnight', () => {
  assert.deepEqual(toSast(new Date('2026-11-23T21:59:00Z')),
    { date: '2026-11-23', minutes: 23 * 60 + 59 })
  assert.deepEqual(toSast(new Date('2026-11-23T22:00:00Z')), { date: '2026-11-24', minutes: 0 })
  assert.deepEqual(toSast(new Date('2026-06-15T12:00:00Z')),
    { date: '2026-06-15', minutes: 14 * 60 })
  assert.equal(fromSast('2026-11-24', 16 * 60).toISOString(), '2026-11-24T14:00:00.000Z')
  assert.equal(fromSast('2026-11-24').toISOString(), '2026-11-23T22:00:00.000Z')
  assert.equal(addDays('2026-12-31', 1), '2027-01-01')
})
