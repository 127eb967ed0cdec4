import { IsoValueError } from './iso-value-error.ts'

// Amounts on the wire are ZAR decimals with two places made from integer cents, never floats
// (docs/operators/rails.md). Both directions are exact: cents are formatted by integer
// division of a bigint, and text is parsed digit by digit into a bigint.
//
// The schemas' amount types (ActiveCurrencyAndAmount, ActiveOrHistoricCurrencyAndAmount) are
// xs:decimal with at most 18 digits, at most 5 of them after the point, and no minus. Written
// with two places, 18 digits are 16 before the point and 2 after: the largest amount is
// 9,999,999,999,999,999.99 rand, that is 10^18 - 1 cents (also within PostgreSQL's bigint).

/** The largest amount a message carries, in cents: 18 digits (the schemas' totalDigits). */
export const iso_amount_cents_max = 10n ** 18n - 1n

/** The digits after the point in an amount the schemas accept (fractionDigits). */
const fraction_digits_max = 5

/**
 * Cents as ISO decimal text with two places: `12345n` → `"123.45"`, `0n` → `"0.00"`. Takes a
 * bigint, or a number that is a safe integer (checked, never computed with). Throws
 * IsoValueError for a negative amount, a fraction of a cent, or more than 18 digits.
 */
export function centsToIsoAmount(cents: bigint | number, field = 'amount'): string {
  const whole = wholeCents(cents, field)
  if (whole < 0n) throw new IsoValueError(field, `negative amount ${whole} cents`)
  if (whole > iso_amount_cents_max) {
    throw new IsoValueError(field, `${whole} cents is more than the largest ISO amount`)
  }
  const rand = whole / 100n
  const rest = whole % 100n
  return `${rand}.${rest < 10n ? '0' : ''}${rest}`
}

function wholeCents(cents: bigint | number, field: string): bigint {
  if (typeof cents === 'bigint') return cents
  if (typeof cents === 'number' && Number.isSafeInteger(cents)) return BigInt(cents)
  throw new IsoValueError(field, `amount ${String(cents)} is not a whole number of cents`)
}

// xs:decimal's lexical form without a minus (every amount type has minInclusive 0): an
// optional plus, digits with an optional fraction, or a fraction alone (`.5`). The digits are
// ASCII only: `\d` without the u flag matches no other script's digits.
const decimal_pattern = /^\+?(?:(\d+)(?:\.(\d*))?|\.(\d+))$/

// The whitespace xs:decimal collapses (XML's four): what surrounds the text in a message that
// was indented by its sender is not part of the amount.
const xml_whitespace = /^[ \t\r\n]+|[ \t\r\n]+$/g

/**
 * ISO decimal text as cents, exactly: `"123.45"` → `12345n`, `"7"` → `700n`, `"0.10"` → `10n`,
 * `"1.50000"` → `150n`. Accepts what the schemas accept for an amount (xs:decimal, at most 5
 * digits after the point, no minus, XML whitespace around it) when it is a whole number of
 * cents at most iso_amount_cents_max. Throws IsoValueError otherwise (a minus, an exponent, a
 * fraction of a cent such as `"1.005"`, a number too large), never rounds.
 */
export function isoAmountToCents(text: string, field = 'amount'): bigint {
  const trimmed = text.replace(xml_whitespace, '')
  if (trimmed.startsWith('-')) throw new IsoValueError(field, `negative amount ${quoted(text)}`)
  const match = decimal_pattern.exec(trimmed)
  if (match === null) throw new IsoValueError(field, `${quoted(text)} is not an ISO amount`)
  const integer = match[1] ?? ''
  const fraction = match[2] ?? match[3] ?? ''
  if (fraction.length > fraction_digits_max) {
    throw new IsoValueError(field, `${quoted(text)} has more than 5 digits after the point`)
  }
  if (/[1-9]/.test(fraction.slice(2))) {
    throw new IsoValueError(field, `${quoted(text)} is not a whole number of cents`)
  }
  const significant = integer.replace(/^0+/, '')
  // Checked before BigInt is asked to parse a number of any length.
  if (significant.length > 16) {
    throw new IsoValueError(field, `${quoted(text)} is more than the largest ISO amount`)
  }
  return BigInt(`${significant || '0'}${fraction.slice(0, 2).padEnd(2, '0')}`)
}

/** The text as a message shows it, cut short: a refusal must not repeat a huge input. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)
}
