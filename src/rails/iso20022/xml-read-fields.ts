import { isoAmountToCents } from './amount.ts'
import { IsoValueError } from './iso-value-error.ts'
import { pathOf, Refusal, type XmlNode } from './xml-read.ts'

// The values of one record (xml-read.ts), read the way every reader of a message reads them:
// by a path below an element (`Rsn/Cd`), each refused with its path when it is missing where
// required, repeated where the schema allows one, empty, longer than its schema type allows
// or not of its type. Amounts are ZAR and turned into integer cents exactly by amount.ts.

/** The only currency the bank's rails carry (docs/operators/rails.md). */
export const rail_currency = 'ZAR'

const xml_space = /^[ \t\r\n]+|[ \t\r\n]+$/g

/** The elements at `path` below `node`, in the order of the message. */
export function elementsAt(node: XmlNode, path: string): XmlNode[] {
  let found = [node]
  for (const name of path.split('/')) {
    found = found.flatMap((at) => at.children.filter((child) => child.name === name))
  }
  return found
}

/** The element at `path`, or undefined; refused when there are more than one. */
export function elementAt(node: XmlNode, path: string): XmlNode | undefined {
  const found = elementsAt(node, path)
  if (found.length > 1) throw new Refusal(`more than one ${path}`, pathOf(node, path))
  return found[0]
}

/** The element at `path`; refused when it is missing or repeated. */
export function requiredElement(node: XmlNode, path: string): XmlNode {
  const found = elementAt(node, path)
  if (found === undefined) throw new Refusal(`${path} is missing`, pathOf(node, path))
  return found
}

/** An element's text without the white space around it; refused when empty or too long. */
export function valueOf(node: XmlNode, length_max: number): string {
  if (node.container) throw new Refusal('a value was expected, not elements', pathOf(node))
  const value = node.text.replace(xml_space, '')
  if (value === '') throw new Refusal('the value is empty', pathOf(node))
  if (value.length > length_max && [...value].length > length_max) {
    throw new Refusal(`the value is longer than ${length_max} characters`, pathOf(node))
  }
  return value
}

/** The text at `path` (a MaxNText: at most `length_max` characters), or null when absent. */
export function optionalText(node: XmlNode, path: string, length_max: number): string | null {
  const found = elementAt(node, path)
  return found === undefined ? null : valueOf(found, length_max)
}

/** The text at `path`; refused when absent. */
export function requiredText(node: XmlNode, path: string, length_max: number): string {
  return valueOf(requiredElement(node, path), length_max)
}

/** Every text at `path` (a repeated element), joined by a space; null when there is none. */
export function joinedText(node: XmlNode, path: string, length_max: number): string | null {
  const texts = elementsAt(node, path).map((found) => valueOf(found, length_max))
  return texts.length === 0 ? null : texts.join(' ')
}

/** A code (`TxSts`, `Rsn/Cd`: an external code of 1 to 4 letters or digits) at `path`. */
export function optionalCode(node: XmlNode, path: string): string | null {
  const found = elementAt(node, path)
  if (found === undefined) return null
  const code = valueOf(found, 4)
  if (!/^[A-Z0-9]{1,4}$/.test(code)) {
    throw new Refusal(`${JSON.stringify(code)} is not a code`, pathOf(found))
  }
  return code
}

/** One of the closed codes `codes` at `path`; refused when absent or another. */
export function requiredOneOf<const C extends string>(
  node: XmlNode,
  path: string,
  codes: readonly C[],
): C {
  const found = requiredElement(node, path)
  const value = valueOf(found, 35)
  const code = codes.find((c) => c === value)
  if (code === undefined) {
    throw new Refusal(`${JSON.stringify(value)} is not one of ${codes.join(', ')}`,
      pathOf(found))
  }
  return code
}

/** A choice of an ISO code or a proprietary one (`Rsn`: `Cd` or `Prtry`), or null if absent. */
export interface CodeChoice {
  code: string
  proprietary: boolean
}

export function optionalChoice(node: XmlNode, path: string): CodeChoice | null {
  const choice = elementAt(node, path)
  if (choice === undefined) return null
  const code = optionalCode(choice, 'Cd')
  const proprietary = optionalText(choice, 'Prtry', 35)
  if ((code === null) === (proprietary === null)) {
    throw new Refusal('either Cd or Prtry is expected', pathOf(choice))
  }
  return code !== null ? { code, proprietary: false } : { code: proprietary!, proprietary: true }
}

/** An amount in ZAR at `path`, in cents; refused when absent, of another currency or inexact. */
export function requiredAmount(node: XmlNode, path: string): bigint {
  const found = requiredElement(node, path)
  if (found.currency === undefined) {
    throw new Refusal('the amount has no currency (Ccy)', pathOf(found))
  }
  if (found.currency !== rail_currency) {
    throw new Refusal(`the currency ${JSON.stringify(found.currency.slice(0, 8))} is not `
      + rail_currency, pathOf(found))
  }
  return cents(found)
}

export function optionalAmount(node: XmlNode, path: string): bigint | null {
  return elementAt(node, path) === undefined ? null : requiredAmount(node, path)
}

/** A DecimalNumber that sums amounts (`CtrlSum`), in cents; null when absent. */
export function optionalDecimal(node: XmlNode, path: string): bigint | null {
  const found = elementAt(node, path)
  return found === undefined ? null : cents(found)
}

function cents(node: XmlNode): bigint {
  const text = valueOf(node, 64)
  try {
    return isoAmountToCents(text, pathOf(node))
  } catch (error) {
    if (error instanceof IsoValueError) throw new Refusal(error.rule, pathOf(node))
    throw error
  }
}

/** A count (Max15NumericText: 1 to 15 digits) at `path`. */
export function requiredCount(node: XmlNode, path: string): number {
  const found = requiredElement(node, path)
  const text = valueOf(found, 15)
  if (!/^[0-9]{1,15}$/.test(text)) {
    throw new Refusal(`${JSON.stringify(text)} is not a count`, pathOf(found))
  }
  return Number(text)
}

export function optionalCount(node: XmlNode, path: string): number | null {
  return elementAt(node, path) === undefined ? null : requiredCount(node, path)
}

// xs:date and xs:dateTime as these messages write them (a time zone is optional).
const iso_date = /^(\d{4})-(\d{2})-(\d{2})(?:Z|[+-]\d{2}:\d{2})?$/
const iso_date_time =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})?$/

/** An ISODate at `path` as `YYYY-MM-DD` (a time zone, if written, is dropped); null if absent. */
export function optionalDate(node: XmlNode, path: string): string | null {
  const found = elementAt(node, path)
  if (found === undefined) return null
  const text = valueOf(found, 16)
  const match = iso_date.exec(text)
  if (match === null || !realDate(match)) {
    throw new Refusal(`${JSON.stringify(text)} is not a date`, pathOf(found))
  }
  return text.slice(0, 10)
}

/** An ISODateTime at `path`, as written (a time without a zone is the sender's local time). */
export function requiredDateTime(node: XmlNode, path: string): string {
  const found = requiredElement(node, path)
  const text = valueOf(found, 40)
  const match = iso_date_time.exec(text)
  if (match === null || !realDate(match)) {
    throw new Refusal(`${JSON.stringify(text)} is not a date and time`, pathOf(found))
  }
  return text
}

/** A DateAndDateTime2Choice (`Dt` or `DtTm`) at `path`, as written; null when absent. */
export function optionalDateChoice(node: XmlNode, path: string): string | null {
  const choice = elementAt(node, path)
  if (choice === undefined) return null
  const date = optionalDate(choice, 'Dt')
  const dateTime = elementAt(choice, 'DtTm') === undefined ? null
    : requiredDateTime(choice, 'DtTm')
  if ((date === null) === (dateTime === null)) {
    throw new Refusal('either Dt or DtTm is expected', pathOf(choice))
  }
  return date ?? dateTime
}

function realDate(match: RegExpExecArray): boolean {
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1
    && date.getUTCDate() === day
}

/** An account number: `Id/Othr/Id` of a CashAccount (South African accounts have no IBAN). */
export function requiredAccount(node: XmlNode, path: string): string {
  const account = requiredElement(node, path)
  if (elementAt(account, 'Id/IBAN') !== undefined) {
    throw new Refusal('an IBAN is not a South African account number; Id/Othr/Id is expected',
      pathOf(account, 'Id/IBAN'))
  }
  return requiredText(account, 'Id/Othr/Id', 34)
}

/** A branch code: `FinInstnId/ClrSysMmbId/MmbId` of an agent at `path`. */
export function requiredBranchCode(node: XmlNode, path: string): string {
  return requiredText(requiredElement(node, path), 'FinInstnId/ClrSysMmbId/MmbId', 35)
}

/** Refuses, at `node` (and `below` it), when `expected` and `found` differ. */
export function checkTotal(
  node: XmlNode,
  below: string,
  what: string,
  expected: bigint | number,
  found: bigint | number,
): void {
  if (expected !== found) {
    throw new Refusal(`${what} says ${expected}, the message holds ${found}`,
      pathOf(node, below))
  }
}
