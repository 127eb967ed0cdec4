// How a reply is printed. JSON (the default) is the reply as the bank sent it, for scripts
// and `jq`. `--format table` is for people and is generic, not one layout per command: the
// reply's plain values as `key  value` lines, then each list of records as a table with a
// column per key (columns empty in every row left out). Values inside a cell that are
// themselves objects or lists are written as compact JSON, and long cells are cut, so a
// row stays one line. Money is shown as the console shows it, in rand (`R1,234.56`, right
// aligned in a table): a field the replies use for cents (`moneyField`) whose value is a
// whole number. The JSON keeps the bank's integer-cent strings unchanged.

import { formatRand } from '../contract/format.ts'

export type Format = 'json' | 'table'
export const formats: readonly Format[] = ['json', 'table']

/** The longest cell a table shows; longer values end in `…` (the JSON output has them whole). */
const cell_chars_max = 48

export function render(result: unknown, format: Format): string {
  return format === 'table' ? renderTable(result) : `${JSON.stringify(result, null, 2)}\n`
}

type Row = Record<string, unknown>

function isRecord(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isTable(value: unknown): value is Row[] {
  return Array.isArray(value) && value.length > 0 && value.every(isRecord)
}

/**
 * The fields the `ops.` replies give money in, as integer cents (strings, a few numbers):
 * amounts, fees, balances, holds, sums and totals of money (test/cli/cli-help.test.ts lists
 * every reply field it matches). Counts (`total`, `*_count`) and limits of pages are not.
 */
const moneyNames = new Set(['amount', 'fee', 'fees', 'balance', 'held', 'credit', 'debit', 'sum',
  'control_sum', 'bank_charges', 'balance_total', 'held_total', 'available_total',
  'postings_total', 'fee_income_today', 'held_at_end'])

export function moneyField(key: string): boolean {
  return moneyNames.has(key) || /_(amount|balance|sum)$/.test(key)
}

/** The value in rand when it is a money field's whole number of cents, else as it was. */
function inRand(key: string, value: unknown): unknown {
  if (!moneyField(key)) return value
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return formatRand(BigInt(value))
  if (typeof value === 'number' && Number.isSafeInteger(value)) return formatRand(BigInt(value))
  return value
}

/** A reply with every money field, at any depth, in rand. */
function withRand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withRand)
  if (!isRecord(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) =>
    [key, isRecord(inner) || Array.isArray(inner) ? withRand(inner) : inRand(key, inner)]))
}

export function renderTable(reply: unknown): string {
  const result = withRand(reply)
  if (isTable(result)) return table(result)
  if (!isRecord(result)) return `${cell(result)}\n`
  const plain = Object.entries(result).filter(([, value]) => !isTable(value)
    && !(Array.isArray(value) && value.length === 0))
  const tables = Object.entries(result).filter(([, value]) => isTable(value)) as Array<[string,
    Row[]]>
  const empty = Object.entries(result).filter(([, value]) => Array.isArray(value)
    && value.length === 0)
  const sections: string[] = []
  if (plain.length > 0) sections.push(keyValues(plain))
  for (const [key, rows] of tables) sections.push(`${key} (${rows.length}):\n${table(rows)}`)
  for (const [key] of empty) sections.push(`${key}: none\n`)
  return sections.join('\n')
}

/**
 * `key  value` lines, the keys padded to one width; a nested record is flattened as `outer.inner`.
 */
function keyValues(entries: Array<[string, unknown]>): string {
  const flat = entries.flatMap(([key, value]): Array<[string, unknown]> =>
    isRecord(value) && Object.keys(value).length > 0
      ? Object.entries(value).map(([inner, v]) => [`${key}.${inner}`, v]) : [[key, value]],
  )
  const width = Math.max(...flat.map(([key]) => key.length))
  return flat.map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`.trimEnd()).join('\n')
    + '\n'
}

/**
 * Rows under a header: one column per key any row has, in the order they first appear,
 * leaving out columns empty in every row (a business entity's person fields).
 */
function table(rows: Row[]): string {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter(
    (column) => rows.some((row) => cell(row[column]) !== ''))
  const cells = rows.map((row) => columns.map((column) => cut(cell(row[column]))))
  const widths =
    columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)))
  // Money columns (every cell in rand or empty) are right aligned, their digits under each other.
  const right = columns.map((_, i) => cells.every((line) => line[i] === ''
    || /^-?R[\d,]+\.\d\d$/.test(line[i]!)))
  const line = (values: string[]) => values.map((value, i) => (right[i]
    ? value.padStart(widths[i]!) : value.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')
    + '\n'
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value.replace(/\s+/g, ' ')
  if (typeof value === 'number' || typeof value === 'boolean'
    || typeof value === 'bigint') return String(value)
  return JSON.stringify(value)
}

function cut(text: string): string {
  return text.length > cell_chars_max ? `${text.slice(0, cell_chars_max - 1)}…` : text
}
