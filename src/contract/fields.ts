import { z } from 'zod'
import { countryCodes } from './countries.ts'

// Field schemas shared by every contract. Each string has an upper bound so that no
// request can make us store an unbounded value (TIGER_STYLE: a limit on everything).

export const text_length_max = 200
export const email_length_max = 254

/** A UUID, lower-cased: the database compares UUIDs without regard to case, and so must we. */
export const uuid = () => z.uuid({ error: 'must be a UUID' }).toLowerCase()

export const text = (min = 1, max = text_length_max) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(min, { error: min === 1 ? 'must not be empty' : `must be at least ${min} characters` })
    .max(max, { error: `must be at most ${max} characters` })

export const optionalText = (max = text_length_max) =>
  z.string({ error: 'must be a string' }).trim().max(max,
    { error: `must be at most ${max} characters` })

export const email = () =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .max(email_length_max, { error: `must be at most ${email_length_max} characters` })
    .pipe(z.email({ error: 'must be a valid e-mail address' }))

export const country = () =>
  z
    .string({ error: 'must be a string' })
    .refine((value) => countryCodes.has(value),
      { error: 'must be an ISO 3166 alpha-3 country code, e.g. ZAF' })

/**
 * The earliest year an entity's dates (birth, ID issue and expiry) may carry. Earlier
 * ones are typing mistakes, and very early years do not survive storage: year 0 made
 * PostgreSQL fail (a 500) and PGlite read year 1 back as 2001.
 */
export const timestamp_year_min = 1900

/**
 * `YYYY-MM-DDTHH:MM:SSZ` (fractions allowed), UTC, as the incumbent's interface writes entity
 * dates.
 */
export const utcTimestamp = () =>
  z.iso
    .datetime({ error: 'must be a UTC timestamp like 2026-11-21T08:30:00Z' })
    // A value without a leading year has already failed the format check; one issue is enough.
    .refine((value) => !/^\d{4}-/.test(value) || Number(value.slice(0, 4)) >= timestamp_year_min, {
      error: `must not be before the year ${timestamp_year_min}`,
    })

/** Whether a value passes `utcTimestamp()`, for cross-field rules that compare dates. */
export function isUtcTimestamp(value: unknown): value is string {
  return utcTimestamp().safeParse(value).success
}

/** ISO 8601 timestamp with any offset, or a plain date; used by user records. */
export const isoTimestamp = () =>
  z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
    error: 'must be an ISO 8601 timestamp like 1990-05-01T00:00:00Z',
  })

/** Responses: RFC 3339 in UTC. */
export const timestamp = z.string()

/** What `registrationNumber()` accepts, in words: its field's description in the reference. */
export const registration_number_rule =
  'A South African company registration number: 12 digits (`201501234507`), or the same ' +
  'written as on the CIPC certificate, `YYYY/NNNNNN/NN` (`2015/012345/07`: year, number, ' +
  'company type). Either form is kept and answered as the 12 digits, so both forms of one ' +
  'number are one number.'

/**
 * A South African company registration number: 12 digits, or the same written as
 * on every CIPC certificate, `YYYY/NNNNNN/NN`; either is kept and answered as the 12 digits,
 * so that both forms of one number are one number (a duplicate is a 409).
 */
export const registrationNumber = () =>
  z
    .string({ error: 'must be a string' })
    .regex(/^(\d{12}|\d{4}\/\d{6}\/\d{2})$/, {
      error: 'must be 12 digits, or YYYY/NNNNNN/NN as on the CIPC certificate',
    })
    .overwrite((value) => value.replaceAll('/', ''))
    .describe(registration_number_rule)

export const branchCode = () => z.string({ error: 'must be a string' }).regex(/^\d{6}$/, { error: 'must be 6 digits' })

/**
 * The rule of a South African ID number, in the words of a 400's message (`must be ` and
 * this): what `isSouthAfricanIdNumber` checks, and what the other digits are.
 */
export const sa_id_number_rule =
  'a 13-digit South African ID number: YYMMDD (the birth date, a real date), a 4-digit ' +
  'sequence number, a citizenship digit (0 citizen, 1 permanent resident), one more digit ' +
  '(usually 8) and a Luhn check digit over the first 12'

/** The `id_number` of a person's identity document, described with the rule it follows. */
export const id_number_rule =
  `With \`id_type\` \`National\`, ${sa_id_number_rule}. The bank checks the length, that ` +
  'YYMMDD is a real date (in either century) and the check digit, and answers 400 naming ' +
  '`id_number` otherwise. With a passport: the passport number.'

/**
 * A South African national identity number: YYMMDD SSSS C A Z, 13 digits whose first six
 * are a real date and whose last is a Luhn check digit.
 */
export function isSouthAfricanIdNumber(value: string): boolean {
  if (!/^\d{13}$/.test(value)) return false
  const month = Number(value.slice(2, 4))
  const day = Number(value.slice(4, 6))
  if (month < 1 || month > 12 || day < 1) return false
  // Any century: a 29 February is valid when some century makes the year a leap year.
  const year2 = Number(value.slice(0, 2))
  const daysIn = (year: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (day > Math.max(daysIn(1900 + year2), daysIn(2000 + year2))) return false
  return luhnValid(value)
}

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

export function luhnCheckDigit(digitsWithoutCheck: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(digitsWithoutCheck + d)) return String(d)
  throw new Error('unreachable: some check digit always fits')
}

export const addressSchema = z.strictObject({
  address_line_1: text(),
  address_line_2: optionalText().optional(),
  city: optionalText().optional(),
  state: optionalText().optional(),
  postcode: optionalText(20).optional(),
  country: country().optional(),
})

/** How many rows a page may ask for: a whole number from 1 to `max`. */
export const pageLimit = (max: number) =>
  z
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(max, { error: `must be at most ${max}` })

export const emptyRequest = z.strictObject({})
export const emptyResponse = z.strictObject({})
