import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addDays, shipped_declared_holidays, SouthAfricanCalendar } from '../../src/calendar/sa-calendar.ts'
import { loadConfig } from '../../src/config.ts'

// The declared one-off holidays (section 2A of the Public Holidays Act) ship with the bank
// and operators add to them (docs/operators/configuration.md); and the calendar is checked
// against every public holiday of 2016–2030, written out below rather than computed.

const calendar = new SouthAfricanCalendar()

test('calendar - 2016-08-03 (local government elections, a Wednesday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2016-08-03'), false)
  assert.equal(calendar.isBusinessDay('2016-08-02'), true)
  assert.equal(calendar.isBusinessDay('2016-08-04'), true)
  assert.equal(calendar.addBusinessDays('2016-08-02', 1), '2016-08-04')
})

test('calendar - 2016-12-27 (declared: Christmas on a Sunday, Goodwill on the Monday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2016-12-26'), false)
  assert.equal(calendar.isBusinessDay('2016-12-27'), false)
  assert.equal(calendar.onOrAfter('2016-12-24'), '2016-12-28')
  assert.equal(calendar.addBusinessDays('2016-12-23', 1), '2016-12-28')
})

test('calendar - 2019-05-08 (national and provincial elections, a Wednesday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2019-05-08'), false)
  assert.equal(calendar.isBusinessDay('2019-05-07'), true)
  assert.equal(calendar.isBusinessDay('2019-05-09'), true)
  assert.equal(calendar.onOrAfter('2019-05-08'), '2019-05-09')
})

test('calendar - 2021-11-01 (local government elections, a Monday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2021-11-01'), false)
  assert.equal(calendar.onOrAfter('2021-10-30'), '2021-11-02')
  assert.equal(calendar.addBusinessDays('2021-10-29', 1), '2021-11-02')
})

test('calendar - 2022-12-27 (declared: Christmas on a Sunday, Goodwill on the Monday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2022-12-26'), false)
  assert.equal(calendar.isBusinessDay('2022-12-27'), false)
  assert.equal(calendar.onOrAfter('2022-12-24'), '2022-12-28')
})

test('calendar - 2023-12-15 (the Rugby World Cup win, a Friday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2023-12-15'), false)
  assert.equal(calendar.addBusinessDays('2023-12-14', 1), '2023-12-18')
})

test('calendar - 2024-05-29 (national and provincial elections, a Wednesday) is not a business day', () => {
  assert.equal(calendar.isBusinessDay('2024-05-29'), false)
  assert.equal(calendar.addBusinessDays('2024-05-28', 1), '2024-05-30')
})

test('calendar - the shipped list is exactly the declared days above', () => {
  assert.deepEqual([...shipped_declared_holidays.keys()], ['2016-08-03', '2016-12-27', '2019-05-08',
    '2021-11-01', '2022-12-27', '2023-12-15', '2024-05-29'])
})

test('calendar - operators add declared holidays to the shipped list (BANK_DECLARED_HOLIDAYS)', () => {
  const config = loadConfig({ BANK_DECLARED_HOLIDAYS: '2026-11-27,2027-01-04' })
  assert.deepEqual([...config.declaredHolidays], ['2026-11-27', '2027-01-04'])
  const extended = new SouthAfricanCalendar(config.declaredHolidays)
  assert.equal(extended.isBusinessDay('2026-11-27'), false)
  assert.equal(extended.isBusinessDay('2027-01-04'), false)
  // The shipped days still count: added, not replaced.
  for (const date of shipped_declared_holidays.keys()) assert.equal(extended.isBusinessDay(date),
    false, date)
  assert.equal(calendar.isBusinessDay('2026-11-27'), true, 'not a holiday without the setting')
})

test('calendar - BANK_DECLARED_HOLIDAYS refuses dates that are not days of the calendar', () => {
  for (const value of ['2026-02-30', '2026-13-01', '2026-11-27,2026-00-10', '27-11-2026',
      '2026-11-27;2026-11-30']) {
    assert.throws(() => loadConfig({ BANK_DECLARED_HOLIDAYS: value }), /BANK_DECLARED_HOLIDAYS/, value)
  }
  assert.deepEqual([...loadConfig({ BANK_DECLARED_HOLIDAYS: '2028-02-29' }).declaredHolidays],
    ['2028-02-29'])
})

// The Public Holidays Act's days in this order — New Year's Day, Human Rights Day, Good
// Friday, Family Day, Freedom Day, Workers' Day, Youth Day, National Women's Day, Heritage
// Day, Day of Reconciliation, Christmas Day, Day of Goodwill — and then the Mondays after
// those that fell on a Sunday. (Christmas on a Sunday in 2016 and 2022 moved onto the Day of
// Goodwill; the Tuesdays were declared, and are in the shipped list.)
const public_holidays: Array<[number, string[], string[]]> = [
  [2016, ['01-01', '03-21', '03-25', '03-28', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['05-02']],
  [2017, ['01-01', '03-21', '04-14', '04-17', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['01-02', '09-25']],
  [2018, ['01-01', '03-21', '03-30', '04-02', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['12-17']],
  [2019, ['01-01', '03-21', '04-19', '04-22', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['06-17']],
  [2020, ['01-01', '03-21', '04-10', '04-13', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['08-10']],
  [2021, ['01-01', '03-21', '04-02', '04-05', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['03-22', '12-27']],
  [2022, ['01-01', '03-21', '04-15', '04-18', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['05-02']],
  [2023, ['01-01', '03-21', '04-07', '04-10', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['01-02', '09-25']],
  [2024, ['01-01', '03-21', '03-29', '04-01', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['06-17']],
  [2025, ['01-01', '03-21', '04-18', '04-21', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['04-28']],
  [2026, ['01-01', '03-21', '04-03', '04-06', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['08-10']],
  [2027, ['01-01', '03-21', '03-26', '03-29', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['03-22', '12-27']],
  [2028, ['01-01', '03-21', '04-14', '04-17', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['09-25']],
  [2029, ['01-01', '03-21', '03-30', '04-02', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['12-17']],
  [2030, ['01-01', '03-21', '04-19', '04-22', '04-27', '05-01', '06-16', '08-09', '09-24', '12-16',
    '12-25', '12-26'], ['06-17']],
]

const isWeekend = (date: string) => [0, 6].includes(new Date(`${date}T00:00:00Z`).getUTCDay())

test('calendar - every public holiday of 2016–2030 is not a business day, and every other weekday is one', () => {
  const holidays = new Set<string>()
  for (const [year, days, movedMondays] of public_holidays) {
    assert.equal(days.length, 12, `${year}: the Act's twelve days`)
    for (const day of days) holidays.add(`${year}-${day}`)
    for (const monday of movedMondays) {
      const date = `${year}-${monday}`
      assert.equal(new Date(`${date}T00:00:00Z`).getUTCDay(), 1, `${date} is a Monday`)
      assert.ok(holidays.has(addDays(date, -1)), `${date} follows a Sunday holiday`)
      holidays.add(date)
    }
  }
  for (const date of shipped_declared_holidays.keys()) holidays.add(date)

  const wrong: string[] = []
  for (let date = '2016-01-01'; date <= '2030-12-31'; date = addDays(date, 1)) {
    const expected = !isWeekend(date) && !holidays.has(date)
    if (calendar.isBusinessDay(date) !== expected) wrong.push(
      `${date}: ${expected ? 'a business day' : 'a holiday or weekend'} expected`)
  }
  assert.deepEqual(wrong, [])
  // Every Sunday holiday moved: none of the Act's days on a Sunday is without its Monday.
  for (const [year, days] of public_holidays) {
    for (const day of days) {
      const date = `${year}-${day}`
      if (new Date(`${date}T00:00:00Z`).getUTCDay() === 0) assert.ok(holidays.has(addDays(date, 1)),
        `${date} is a Sunday: its Monday is a holiday`)
    }
  }
})
