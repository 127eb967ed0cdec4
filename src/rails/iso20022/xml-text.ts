import { centsToIsoAmount } from './amount.ts'
import { IsoValueError } from './iso-value-error.ts'

// The texts a message carries, checked before anything of them is written: nothing is
// truncated, replaced or normalised. A value the schema's type cannot hold is refused with
// IsoValueError naming the type, so that a caller can check a value when it comes in (and
// answer 4xx) with the same rule the writer applies.

/**
 * The ISO 20022 text types the writers use, by their schema names, with their most
 * characters (each also needs at least one). Characters are Unicode code points, as XML
 * Schema counts a string's length: `'😀'` is one, though JavaScript's `length` says two.
 */
export const iso_text_max = {
  /** Ids: MsgId, EndToEndId, TxId, MmbId (a branch code), RtrId, OrgnlMsgId, … */
  Max35Text: 35,
  /** An account number (GenericAccountIdentification1's Id). */
  Max34Text: 34,
  /** A return's additional information (AddtlInf). */
  Max105Text: 105,
  /** Names (Nm) and unstructured remittance information (Ustrd: the payment's reference). */
  Max140Text: 140,
} as const

export type IsoTextType = keyof typeof iso_text_max

// The characters XML 1.0 can hold (its production Char), less the carriage return: a parser
// reads a CR in text back as a line feed (XML 1.0 §2.11), so a name with one would not be the
// name the bank sent. The pattern finds the first character outside them; with the u flag, a
// lone surrogate (half of a character, not one) is found too.
const character_not_held = /[^\t\n\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u

/**
 * Checks a text for an ISO 20022 text type: a string of 1 to the type's most code points,
 * every one a character XML 1.0 holds (no control characters but tab and line feed, no lone
 * surrogates, no U+FFFE/U+FFFF). Returns it unchanged; throws IsoValueError otherwise.
 */
export function checkText(value: unknown, type: IsoTextType, field: string, item?: string): string {
  if (typeof value !== 'string') {
    throw new IsoValueError(field, `is ${typeof value}, not a text (${type})`, item)
  }
  const max = iso_text_max[type]
  // Counted in code points only when the UTF-16 length could be over the maximum.
  const length = value.length > max ? codePoints(value) : value.length
  if (length === 0) throw new IsoValueError(field, `is empty (${type} needs 1 character)`, item)
  if (length > max) {
    throw new IsoValueError(field, `is ${length} characters, longer than ${type} (${max})`, item)
  }
  const held = character_not_held.exec(value)
  if (held !== null) {
    const code = held[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
    const why = code === '000D' ? 'a carriage return is read back as a line feed'
      : 'XML 1.0 cannot hold it'
    throw new IsoValueError(field, `holds U+${code} at offset ${held.index} (${why})`, item)
  }
  return value
}

function codePoints(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}

/**
 * An ISO date and time (ISODateTime, xs:dateTime) of an instant, in UTC with milliseconds:
 * `2026-11-23T08:00:00.000Z`. The same instant always gives the same text.
 */
export function isoDateTime(at: Date, field: string): string {
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
    throw new IsoValueError(field, 'is not a valid date and time')
  }
  return at.toISOString()
}

/** A calendar day as ISO writes it (ISODate, `2026-11-23`): a real day, or IsoValueError. */
export function isoDate(day: string, field: string): string {
  const at = new Date(`${day}T00:00:00Z`)
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(at.getTime())
    || at.toISOString().slice(0, 10) !== day) {
    throw new IsoValueError(field, `${day} is not a day (YYYY-MM-DD)`)
  }
  return day
}

/** The largest NbOfTxs: 15 digits. */
const count_max = 999_999_999_999_999

/**
 * A count of transactions as NbOfTxs (Max15NumericText): a whole number of 1 to 15 digits.
 * A message without transactions is refused: the writers' messages need at least one.
 */
export function checkCount(count: unknown, field: string): number {
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1
    || count > count_max) {
    throw new IsoValueError(field, `${String(count)} is not a whole number of transactions >= 1`)
  }
  return count
}

/**
 * An amount of cents a message can carry (amount.ts says which), given as a bigint: rows'
 * amounts are summed, and a number would not add to a bigint.
 */
export function checkCents(cents: bigint, field: string, item?: string): bigint {
  if (typeof cents !== 'bigint') {
    throw new IsoValueError(field, `${String(cents)} is not a bigint of cents`, item)
  }
  try {
    centsToIsoAmount(cents, field)
  } catch (error) {
    if (error instanceof IsoValueError) throw new IsoValueError(field, error.rule, item)
    throw error
  }
  return cents
}
